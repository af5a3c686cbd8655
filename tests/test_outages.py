"""Real outages of Neo4j and of the chain RPC (a proxy in front of each is cut, then restored): bounded
waits, typed 503s with Retry-After, /health naming what is down, a bounded /metrics scrape, recovery
with no restart, and no secret in any answer or log line."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr

from graphsvc.app import Services
from graphsvc.config import AuthSettings, Settings
from graphsvc.devstack.chain import DEV_PRIVATE_KEY
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.errors import GraphsvcError
from tests.conftest import _serve, free_port
from tests.proxy import CuttableProxy

pytestmark = pytest.mark.neo4j
DEADLINE_S = 4.0
ANSWERED_WITHIN_S = 3 * DEADLINE_S  # the deadline plus a loaded machine's slack (it was 63 s)


@contextmanager
def _proxied(url: str) -> Iterator[CuttableProxy]:
    parts = urlsplit(url)
    proxy = CuttableProxy(parts.hostname or "127.0.0.1", parts.port or 80)
    try:
        yield proxy
    finally:
        proxy.close()


@contextmanager
def _served(settings: Settings) -> Iterator[httpx.Client]:
    serving = _serve(
        settings.model_copy(update={"auth": AuthSettings(required=False), "deadline_s": DEADLINE_S})
    )
    url = next(serving)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client
    finally:
        next(serving, None)


def _timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def _until(call: Any, status: int, within_s: float = 30) -> httpx.Response:
    deadline = time.monotonic() + within_s
    while True:
        response = call()
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


def test_a_neo4j_outage_answers_503_with_retry_after_within_the_deadline_and_heals_by_itself(
    settings: Settings, graph: str
) -> None:
    with _proxied(settings.neo4j.uri) as proxy:
        neo4j = settings.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{proxy.port}"})
        with _served(settings.model_copy(update={"neo4j": neo4j})) as api:
            # a cold server compiles the write first: beyond the short deadline on a loaded machine
            remember = partial(api.post, "/v1/memories", json={"text": "stored before", "graph": graph})
            before = _until(remember, 201, within_s=120)
            assert before.status_code == 201, before.text
            proxy.cut()
            for call in (
                lambda: api.post("/v1/memories", json={"text": "during the outage", "graph": graph}),
                lambda: api.post("/v1/recall", json={"query": "outage", "graph": graph}),
            ):
                refused, took = _timed(call)
                assert refused.status_code == 503 and refused.json()["error"]["code"] == "unavailable"
                assert refused.headers["retry-after"] and took < ANSWERED_WITHIN_S
            health = api.get("/health")
            assert health.status_code == 503 and health.json()["down"] == ["neo4j"]
            scraped, took = _timed(lambda: api.get("/metrics"))  # bounded; Neo4j's figures left out
            assert scraped.status_code == 200 and "graphsvc_neo4j_sample_success 0.0" in scraped.text
            assert "graphsvc_memories_pending" not in scraped.text and took < ANSWERED_WITHIN_S
            proxy.restore()
            after = _until(lambda: api.post("/v1/memories", json={"text": "after it", "graph": graph}), 201)
            assert after.status_code == 201
            recalled = api.post("/v1/recall", json={"query": "stored before", "graph": graph}).json()
            assert before.json()["id"] in [m["id"] for m in recalled.get("memories", [])], recalled
            assert api.get("/health").json()["down"] == []


def test_a_chain_outage_keeps_memories_pending_answers_503_and_the_next_anchor_finishes_all(
    settings: Settings, graph: str
) -> None:
    assert settings.chain.rpc_url
    with _proxied(settings.chain.rpc_url) as proxy:
        chain = settings.chain.model_copy(update={"rpc_url": f"http://127.0.0.1:{proxy.port}"})
        with _served(settings.model_copy(update={"chain": chain})) as api:
            ids = [
                api.post(
                    "/v1/memories", json={"text": f"anchored after the outage {n}", "graph": graph}
                ).json()["id"]
                for n in range(3)
            ]
            proxy.cut()
            refused, took = _timed(lambda: api.post("/v1/anchor", json={"graph": graph}))
            assert refused.status_code == 503 and refused.json()["error"]["code"] == "chain_unavailable"
            assert refused.headers["retry-after"] and took < ANSWERED_WITHIN_S
            health = api.get("/health")
            assert health.status_code == 200 and health.json()["down"] == ["chain"]
            unverified = api.get(f"/v1/memories/{ids[0]}/verify", params={"graph": graph})
            assert unverified.status_code == 200 and unverified.json()["verified"] is False
            proxy.restore()
            anchored = _until(lambda: api.post("/v1/anchor", json={"graph": graph}), 200).json()
            assert anchored["status"] in ("anchored", "nothing_pending")  # the sealed batch is finished first
            for memory_id in ids:
                verified = api.get(f"/v1/memories/{memory_id}/verify", params={"graph": graph}).json()
                assert verified["verified"] is True, verified


async def test_no_secret_reaches_an_answer_or_a_log_line_whatever_the_chain_does(
    settings: Settings, graph: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = "FAKEKEY" + secrets.token_hex(8)
    live = urlsplit(settings.chain.rpc_url or "")
    poor_signer = "0x" + secrets.token_hex(32)  # a valid key with no funds
    said: list[str] = []
    cases = {
        "unreachable": {"rpc_url": f"http://u:{key}@127.0.0.1:{free_port()}/v2/{key}?apikey={key}"},
        "unfunded": {"rpc_url": f"http://u:{key}@{live.netloc}", "private_key": SecretStr(poor_signer)},
        "wrong chain": {"rpc_url": f"http://u:{key}@{live.netloc}", "network": "monad-testnet"},
        "no code": {"rpc_url": f"http://u:{key}@{live.netloc}", "contract": "0x" + "12" * 20},
    }
    for case, change in cases.items():
        chain = settings.chain.model_copy(update=change)
        services = Services.build(settings.model_copy(update={"chain": chain, "deadline_s": DEADLINE_S}))
        try:
            stored = await services.memory.remember(RememberInput(text=f"secret test {case}", graph=graph))
            for attempt in (
                services.start(),
                services.anchoring.anchor_now(GraphInput(graph=graph)),
                services.anchoring.verify(IdInput(id=stored.id, graph=graph)),
            ):
                try:
                    said.append(repr(await attempt))
                except GraphsvcError as e:
                    said.append(f"{case}: {e.code}: {e.message}")
            said.append(repr(await services.health()))
        finally:
            await services.close()
    assert any("chain_unavailable" in line for line in said) and any(
        "not_configured" in line for line in said
    )
    text = "\n".join(said) + caplog.text
    for secret in (key, poor_signer, poor_signer[2:], DEV_PRIVATE_KEY, DEV_PRIVATE_KEY[2:]):
        assert secret not in text
