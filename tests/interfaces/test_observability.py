"""/metrics and the request log after real calls over REST, MCP streamable HTTP and MCP SSE (a
graphsvc of its own, so its counts are only these calls): counts move by exactly what was done, and
no graph name, token or secret shows in a scrape or a log line."""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphsvc import logs
from graphsvc.config import AuthSettings, Settings
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.store.graph import GraphStore
from tests.conftest import _serve
from tests.transports import ToolFailure, connect

pytestmark = pytest.mark.neo4j
Series = dict[tuple[str, frozenset[tuple[str, str]]], float]
UNFINISHED = ("SEALED", "SIGNED", "SUBMITTED", "INCLUDED")


@pytest.fixture(scope="module")
def observed(settings: Settings) -> Iterator[str]:
    """graphsvc requiring tokens, with metrics of its own."""
    yield from _serve(settings.model_copy(update={"auth": AuthSettings(required=True)}))


async def _token(store: GraphStore, graph: str) -> str:
    token, _ = await AccessService(store, required=True).create(graph, [READ, WRITE])
    return token


async def _scrape(http: httpx.AsyncClient) -> tuple[str, Series]:
    response = await http.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    series = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    return response.text, series


async def _sampled(http: httpx.AsyncClient, within_s: float = 60) -> tuple[str, Series]:
    """A scrape with Neo4j's figures: a first scrape on a cold, loaded server may give up on them."""
    deadline = time.monotonic() + within_s
    while True:
        text, series = await _scrape(http)
        if series[("graphsvc_neo4j_sample_success", frozenset())] == 1 or time.monotonic() > deadline:
            return text, series


def _moved(before: Series, after: Series, name: str) -> dict[tuple[str, ...], float]:
    """The series of `name` that moved, by their label values (sorted by label name)."""
    return {
        tuple(value for _, value in sorted(labels)): after[key] - before.get(key, 0)
        for key in after
        for sample, labels in [key]
        if sample == name and after[key] != before.get(key, 0)
    }


def _value(series: Series, name: str, **labels: str) -> float | None:
    return series.get((name, frozenset(labels.items())))


async def test_a_scrape_after_calls_over_each_transport_counts_exactly_those_calls_and_no_graph_or_secret(
    observed: str, store: GraphStore, graph: str, settings: Settings
) -> None:
    token = await _token(store, graph)
    bearer = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=observed, timeout=60) as http:
        _, before = await _sampled(http)
        async with connect("rest", observed, bearer) as rest:
            await rest("remember", {"text": "metrics count REST calls"})
            await rest("recall", {"query": "metrics"})
            with pytest.raises(ToolFailure):
                await rest("recall", {"query": "metrics", "hops": 9})
        refused = await http.post(
            "/v1/recall", json={"query": "x"}, headers={"authorization": "Bearer gsk_no"}
        )
        assert refused.status_code == 401
        async with connect("mcp-streamable-http", observed, bearer) as mcp_http:
            await mcp_http("remember", {"text": "metrics count MCP calls"})
            with pytest.raises(ToolFailure):
                await mcp_http("explore", {"start": "mem_0000000000000000", "maxDepth": 9})
        async with connect("mcp-sse", observed, bearer) as sse:
            await sse("recall", {"query": "metrics"})
            with pytest.raises(ToolFailure):
                await sse("forget", {"id": "mem_0000000000000000"})
        text, after = await _scrape(http)

    assert _moved(before, after, "graphsvc_tool_calls_total") == {
        # (code, tool, transport)
        ("ok", "remember", "rest"): 1,
        ("ok", "recall", "rest"): 1,
        ("invalid_input", "recall", "rest"): 1,
        ("unauthorized", "recall", "rest"): 1,
        ("ok", "remember", "mcp-http"): 1,
        ("invalid_input", "explore", "mcp-http"): 1,
        ("ok", "recall", "mcp-sse"): 1,
        ("not_found", "forget", "mcp-sse"): 1,
    }
    assert _moved(before, after, "graphsvc_errors_total") == {
        ("invalid_input", "rest"): 1,
        ("unauthorized", "rest"): 1,
        ("invalid_input", "mcp-http"): 1,
        ("not_found", "mcp-sse"): 1,
    }
    http_moved = _moved(before, after, "graphsvc_http_requests_total")
    assert {key: n for key, n in http_moved.items() if key[1].startswith(("/v1", "/metrics"))} == {
        # (method, route, status)
        ("POST", "/v1/memories", "201"): 1,
        ("POST", "/v1/recall", "200"): 1,
        ("POST", "/v1/recall", "422"): 1,
        ("POST", "/v1/recall", "401"): 1,
        ("GET", "/metrics", "200"): 1,  # the first scrape (each scrape is counted once it is answered)
    }
    assert {route for _, route, _ in http_moved} == {
        "/v1/memories",
        "/v1/recall",
        "/metrics",
        "/mcp",
        "/sse",
        "/messages/{path}",
    }
    statements = _moved(before, after, "graphsvc_neo4j_statement_duration_seconds_count")
    assert statements[("memory/commit",)] == 2 and statements[("anchor/state",)] == 1
    assert _moved(before, after, "graphsvc_memories_pending") == {(): 2}
    for secret in (
        graph,
        token,
        token.split("_", 2)[2],
        settings.neo4j.password.get_secret_value(),
        "gsk_no",
    ):
        assert secret not in text


async def test_a_scrape_shows_anchoring_pending_batches_backlog_and_the_last_final_anchors_age(
    observed: str, store: GraphStore, graph: str
) -> None:
    bearer = {"authorization": f"Bearer {await _token(store, graph)}"}
    async with httpx.AsyncClient(base_url=observed, timeout=60, headers=bearer) as http:
        for n in range(3):
            assert (await http.post("/v1/memories", json={"text": f"anchored {n}"})).status_code == 201
        _, before = await _sampled(http)
        anchored = await http.post("/v1/anchor", json={})
        assert anchored.json()["status"] == "anchored", anchored.text
        _, after = await _scrape(http)
    assert _moved(before, after, "graphsvc_memories_pending") == {(): -3}
    assert _moved(before, after, "graphsvc_batches") == {("FINALIZED",): 1}
    age = _value(after, "graphsvc_last_finalized_anchor_age_seconds")
    assert age is not None and 0 <= age < 120
    unfinished = sum(_value(after, "graphsvc_batches", status=s) or 0 for s in UNFINISHED)
    assert _value(after, "graphsvc_backlog", worker="reconcile") == unfinished
    assert _value(after, "graphsvc_neo4j_sample_success") == 1


@contextmanager
def _log_lines(settings: Settings) -> Iterator[io.StringIO]:
    """Every line logged meanwhile, as `graphsvc serve` writes them (JSON, scrubbed)."""
    stream = io.StringIO()
    handler = logs.handler("json", logs.secrets_of(settings), stream)
    root, own = logging.getLogger(), logging.getLogger("graphsvc")
    levels = root.level, own.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    own.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(levels[0])
        own.setLevel(levels[1])


async def test_each_request_logs_one_json_line_with_its_request_id_and_no_token_or_secret(
    observed: str, store: GraphStore, graph: str, settings: Settings
) -> None:
    token = await _token(store, graph)
    forged = "gsk_" + "f" * 12 + "_forgedsecretvalue"
    with _log_lines(settings) as stream:
        async with httpx.AsyncClient(base_url=observed, timeout=60) as http:
            kept = await http.post(
                "/v1/recall",
                json={"query": "logs"},
                headers={"authorization": f"Bearer {token}", "x-request-id": "trace-1.2:3"},
            )
            renamed = await http.post(
                "/v1/recall",
                json={"query": "logs"},
                headers={"authorization": f"Bearer {forged}", "x-request-id": "not well formed!"},
            )
        headers = {"authorization": f"Bearer {token}", "x-request-id": "mcp-call-7"}
        async with connect("mcp-streamable-http", observed, headers) as mcp_http:
            await mcp_http("recall", {"query": "logs"})
    assert kept.headers["x-request-id"] == "trace-1.2:3"
    assert re.fullmatch(r"[0-9a-f]{32}", renamed.headers["x-request-id"])
    text = stream.getvalue()
    lines: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines()]
    requests = {
        line["request_id"]: line for line in lines if line["logger"] == "graphsvc.access" and "route" in line
    }
    assert {key: requests["trace-1.2:3"][key] for key in ("method", "route", "status", "tool")} == {
        "method": "POST",
        "route": "/v1/recall",
        "status": 200,
        "tool": "recall",
    }
    assert requests[renamed.headers["x-request-id"]]["code"] == "unauthorized"
    mcp_lines = [line for line in lines if line.get("request_id") == "mcp-call-7"]
    call = {"tool": "recall", "transport": "mcp-http", "code": "ok"}
    assert any(call.items() <= line.items() for line in mcp_lines), mcp_lines
    assert all(line["route"] == "/mcp" for line in mcp_lines if "route" in line)
    for secret in (
        token,
        forged,
        token.split("_", 2)[2],
        "forgedsecretvalue",
        settings.neo4j.password.get_secret_value(),
    ):
        assert secret not in text


def test_a_line_holding_a_credential_or_a_configured_secret_is_written_redacted(settings: Settings) -> None:
    rpc_key = "k3yInThePath0123"
    configured = settings.model_copy(
        update={
            "chain": settings.chain.model_copy(
                update={"rpc_url": f"https://user:pw12345678@rpc.example/v2/{rpc_key}"}
            )
        }
    )
    stream = io.StringIO()
    handler = logs.handler("json", logs.secrets_of(configured), stream)
    record = logging.LogRecord("graphsvc", logging.WARNING, __file__, 1, "%s", None, None)
    record.args = (
        f"Authorization: Bearer abc.def, token gsk_0a1b2c_s3cr-et, password "
        f"{settings.neo4j.password.get_secret_value()}, key {settings.chain.private_key.get_secret_value()[2:]}, "
        f"rpc {configured.chain.rpc_url}",
    )
    handler.handle(record)
    message = json.loads(stream.getvalue())["message"]
    assert message.count(logs.REDACTED) == 6 and "rpc.example" in message
    for secret in ("abc.def", "s3cr-et", "pw12345678", rpc_key, settings.neo4j.password.get_secret_value()):
        assert secret not in message
