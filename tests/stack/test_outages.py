"""Real outages of Neo4j and of the chain RPC (a proxy in front of each is cut, then restored): bounded
waits, typed 503s with Retry-After, /health naming what is down, a bounded /metrics scrape, recovery
with no restart, and no secret in any answer or log line."""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr

from graphsvc.app import Services, create_app
from graphsvc.config import AuthSettings, Settings
from graphsvc.devstack.chain import DEV_PRIVATE_KEY
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.errors import GraphsvcError
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.store.graph import GraphStore
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
def _served(settings: Settings, auth: bool = False) -> Iterator[httpx.Client]:
    serving = _serve(
        settings.model_copy(update={"auth": AuthSettings(required=auth), "deadline_s": DEADLINE_S})
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


async def test_with_auth_on_the_token_look_up_shares_the_requests_deadline_during_an_outage(
    settings: Settings, store: GraphStore, graph: str
) -> None:
    """The token is looked up in Neo4j inside the request's one deadline, counted from arrival: it once
    had 10 s of its own before remember's deadline started (an outside fault run: 13.5 s)."""
    token, _ = await AccessService(store, required=True).create(graph, [READ, WRITE])
    with _proxied(settings.neo4j.uri) as proxy:
        neo4j = settings.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{proxy.port}"})
        with _served(settings.model_copy(update={"neo4j": neo4j}), auth=True) as api:
            headers = {"Authorization": f"Bearer {token}"}
            warm = partial(api.post, "/v1/memories", json={"text": "before", "graph": graph}, headers=headers)
            assert _until(warm, 201, within_s=120).status_code == 201
            proxy.cut()
            unknown = {"Authorization": "Bearer gsk_000000000000_unknown"}  # looked up as any token is
            for call in (
                lambda: api.post("/v1/memories", json={"text": "cut", "graph": graph}, headers=headers),
                lambda: api.post("/v1/recall", json={"query": "cut", "graph": graph}, headers=unknown),
            ):
                refused, took = _timed(call)
                assert refused.status_code == 503, refused.text
                assert refused.json()["error"]["code"] == "unavailable" and took < ANSWERED_WITHIN_S, took


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


OUTAGE_S = 15.0
# From Neo4j's return to a new finalized batch: the bound of this test, not the target. Issue 27 asks for
# 20 s; the timeline printed says what a run took (the closing note and bench/README.md keep the figures).
RESUMED_WITHIN_S = 60.0


async def _batches(store: GraphStore, graph: str) -> dict[int, tuple[str, list[str]]]:
    """The graph's batches: seq -> (status, member ids)."""
    return {seq: (status, ids) for seq, (status, ids, _) in (await _sealed(store, graph)).items()}


async def _sealed(store: GraphStore, graph: str) -> dict[int, tuple[str, list[str], float]]:
    """The graph's batches: seq -> (status, member ids, when sealed in unix seconds)."""
    records, _, _ = await store._driver.execute_query(
        "MATCH (b:Batch {graph: $g}) RETURN b.seq AS seq, b.status AS status, b.sealedAt AS sealedAt, "
        "COLLECT { MATCH (m:Memory)-[:IN_BATCH]->(b) RETURN m.id } AS ids",
        g=graph,
        database_=store._database,
    )
    return {
        r["seq"]: (r["status"], r["ids"], datetime.fromisoformat(r["sealedAt"]).timestamp()) for r in records
    }


async def _writing(api: httpx.AsyncClient, graph: str, written: list[tuple[float, str]]) -> None:
    """The load: a remember every 0.2 s (each refused within the deadline while Neo4j is away)."""
    for n in itertools.count():
        answer = await api.post("/v1/memories", json={"text": f"load note {n}", "graph": graph})
        if answer.status_code == 201:
            written.append((time.monotonic(), answer.json()["id"]))
        await asyncio.sleep(0.2)


async def _polled(api: httpx.AsyncClient, done: Any, within_s: float, what: str) -> float:
    """Poll /health (and `done`, an async predicate) every 0.25 s until `done` holds; when it did."""
    deadline = time.monotonic() + within_s
    while not await done():
        assert time.monotonic() < deadline, f"{what}: not within {within_s:g} s"
        await asyncio.sleep(0.25)
    return time.monotonic()


async def _anchoring_ok(api: httpx.AsyncClient) -> bool:
    return (await api.get("/health")).json()["workers"]["anchoring"]["ok"]


async def test_automatic_anchoring_resumes_by_itself_after_neo4j_is_away_15_s_and_shuts_down_cleanly(
    settings: Settings,
    store: GraphStore,
    graph: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    closed: list[bool] = []
    close = Services.close

    async def spied_close(self: Services) -> None:
        await close(self)
        closed.append(True)

    warm = Services.build(settings)  # a cold server compiles start-up's statements beyond the short deadline
    await warm.start()
    await warm.close()
    monkeypatch.setattr(Services, "close", spied_close)
    with _proxied(settings.neo4j.uri) as proxy:
        neo4j = settings.neo4j.model_copy(update={"uri": f"bolt://127.0.0.1:{proxy.port}"})
        chain = settings.chain.model_copy(update={"auto_interval_s": 1.0})
        app = create_app(
            settings.model_copy(
                update={
                    "neo4j": neo4j,
                    "chain": chain,
                    "auth": AuthSettings(required=False),
                    "deadline_s": DEADLINE_S,
                }
            )
        )
        written: list[tuple[float, str]] = []
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://graphsvc", timeout=30) as api:
                load = asyncio.create_task(_writing(api, graph, written))
                try:
                    timeline = await _outage(api, store, graph, proxy, written, caplog)
                finally:
                    load.cancel()
                    await asyncio.gather(load, return_exceptions=True)
                await _all_finalized(store, graph, [i for _, i in written])
        assert closed == [True]  # the lifespan ended without an error, and close ran
    said = [r.getMessage() for r in caplog.records if r.name == "graphsvc.services.worker"]
    anchoring = [line for line in said if line.startswith("worker anchoring")]
    # One line as it starts failing and one as it recovers (none if no round needed Neo4j while it was away).
    assert anchoring == [] or (
        len(anchoring) == 2 and "failing" in anchoring[0] and "recovered" in anchoring[1]
    ), said
    print(timeline)


async def _outage(
    api: httpx.AsyncClient,
    store: GraphStore,
    graph: str,
    proxy: CuttableProxy,
    written: list[tuple[float, str]],
    caplog: pytest.LogCaptureFixture,
) -> str:
    """Cut Neo4j for OUTAGE_S once anchoring runs; the timeline, in seconds from the cut."""

    async def running() -> bool:
        """A first batch anchored and the anchoring step that did it returned (a batch is FINALIZED in
        Neo4j a moment before its step ends: cut in between, the worker has no success to be aged), and
        start-up's reconcile done: it holds the lease while it finishes what earlier tests left
        unfinished on this server, which would hold anchoring up as well."""
        batches = (await _batches(store, graph)).values()
        workers = (await api.get("/health")).json()["workers"]
        reconciled = "reconcile" not in workers or workers["reconcile"]["lastSuccessAgeS"] is not None
        anchoring = workers["anchoring"]
        stepped = anchoring["ok"] and anchoring["lastSuccessAgeS"] is not None
        return any(status == "FINALIZED" for status, _ in batches) and stepped and reconciled

    await _polled(api, running, 120, "a first batch anchored")  # a cold server compiles for seconds
    caplog.clear()  # the outage's log lines from here
    before = await _sealed(store, graph)
    cut, cut_at = time.monotonic(), time.time()
    proxy.cut()

    seen: list[float] = []  # when /health first said anchoring is failing

    async def outage_over() -> bool:
        if not seen and not await _anchoring_ok(api):
            seen.append(time.monotonic())
            scraped = (await api.get("/metrics")).text
            assert 'graphsvc_worker_failing{worker="anchoring"} 1.0' in scraped
            assert (await api.get("/health")).json()["workers"]["anchoring"]["lastSuccessAgeS"] > 0
        return time.monotonic() - cut >= OUTAGE_S

    # A round in flight at the cut (waiting on the chain for finality) fails only when it next needs
    # Neo4j, which on a loaded machine may come after the outage: failing is reported when it does.
    await _polled(api, outage_over, OUTAGE_S + 5, "the outage")
    failing = seen[0] if seen else float("nan")
    seq = max((await _batches(store, graph)).keys(), default=0)
    proxy.restore()
    back = time.monotonic()

    async def new_batch_final() -> bool:
        batches = await _batches(store, graph)
        return any(s == "FINALIZED" for n, (s, _) in batches.items() if n > seq)

    anchored = await _polled(api, new_batch_final, RESUMED_WITHIN_S, "a new batch anchored after the outage")
    ok = await _polled(api, lambda: _anchoring_ok(api), 5, "/health says anchoring is ok")
    batches = await _batches(store, graph)
    held = {i for n, (_, ids) in batches.items() if n > seq for i in ids}
    pending_at_cut = {i for t, i in written if t < cut} - {i for _, ids, _ in before.values() for i in ids}
    assert held  # memories remembered around the outage (each one answered is final at the end)
    last_sealed = max(sealed for _, _, sealed in before.values())
    last_write = max((t for t, _ in written if t < cut), default=float("nan"))  # a loaded machine: none
    first_write = min((t for t, _ in written if t >= back), default=float("nan"))
    return (
        f"timeline (s from the cut): last batch sealed {last_sealed - cut_at:.1f}, last remember answered "
        f"{last_write - cut:.1f}; /health says anchoring failing {failing - cut:.1f}; Neo4j back "
        f"{back - cut:.1f}; first remember answered {first_write - cut:.1f}; first new batch finalized "
        f"{anchored - cut:.1f} ({anchored - back:.1f} after the return); /health ok {ok - cut:.1f}; "
        f"{len(pending_at_cut)} memories pending at the cut, {len(held)} in the new batches"
    )


async def _all_finalized(store: GraphStore, graph: str, ids: list[str], within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while True:
        final = {
            i for s, members in (await _batches(store, graph)).values() if s == "FINALIZED" for i in members
        }
        if set(ids) <= final:
            return
        assert time.monotonic() < deadline, f"not finalized: {sorted(set(ids) - final)}"
        await asyncio.sleep(0.25)
