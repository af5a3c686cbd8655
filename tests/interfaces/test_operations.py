"""One table of operations builds MCP and REST; the answers the fuzzer found off the schema are on it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.services.operations import OPERATIONS, ROUTES, TOOLS
from graphsvc.store.graph import GraphStore

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def _rpc(http: httpx.Client, method: str, params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One JSON-RPC request to the stateless streamable HTTP endpoint, its result."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = http.post("/mcp", json=body, headers=MCP_HEADERS | headers)
    assert response.status_code == 200, response.text
    data = [
        line.removeprefix("data:").strip() for line in response.text.splitlines() if line.startswith("data:")
    ]
    return httpx.Response(200, content=data[-1]).json()["result"]


@pytest.mark.neo4j
def test_every_operation_is_declared_once_and_published_where_its_table_entry_says(server_url: str) -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names))
    schema = httpx.get(f"{server_url}/openapi.json", timeout=30).json()
    operation_ids = {op["operationId"] for methods in schema["paths"].values() for op in methods.values()}
    # Outside the table: /health, and the export, which streams JSON lines (its own router, rest/export.py).
    assert operation_ids - {"health", "export_graph"} == {op.name for op in ROUTES}
    assert {op.name for op in TOOLS} <= {op.name for op in ROUTES}  # every tool is on REST as well


@pytest.mark.neo4j
def test_mcp_lists_exactly_the_tools_of_the_table_in_its_order(server_url: str) -> None:
    with httpx.Client(base_url=server_url, timeout=30) as http:
        listed = _rpc(http, "tools/list", {}, {})["tools"]
    assert [tool["name"] for tool in listed] == [op.name for op in TOOLS]


@pytest.mark.neo4j
def test_a_method_the_batch_path_does_not_take_is_405_not_a_malformed_memory_id(server_url: str) -> None:
    for method in ("DELETE", "GET", "PUT"):
        response = httpx.request(method, f"{server_url}/v1/memories/batch", timeout=30)
        assert response.status_code == 405, response.text
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert response.headers["allow"] == "POST"
    malformed = httpx.delete(f"{server_url}/v1/memories/not-an-id", timeout=30)
    assert malformed.status_code == 422 and malformed.json()["error"]["fields"] == ["memory_id"]


@pytest.mark.neo4j
def test_valid_from_equal_to_valid_to_is_an_empty_interval_kept_but_held_at_no_instant(
    server_url: str, graph: str
) -> None:
    instant = "2024-05-01T00:00:00Z"
    with httpx.Client(base_url=server_url, timeout=30) as http:
        stored = http.post(
            "/v1/memories",
            json={"text": "an empty interval", "validFrom": instant, "validTo": instant, "graph": graph},
        )
        assert stored.status_code == 201, stored.text
        at = http.post("/v1/recall", json={"query": "empty interval", "asOf": instant, "graph": graph}).json()
        history = http.post(
            "/v1/recall", json={"query": "empty interval", "history": True, "graph": graph}
        ).json()
        reversed_ = http.post(
            "/v1/memories",
            json={"text": "x", "validFrom": instant, "validTo": "2024-04-30T00:00:00Z", "graph": graph},
        )
    assert at["memories"] == []
    assert [m["id"] for m in history["memories"]] == [stored.json()["id"]]
    assert reversed_.status_code == 422 and reversed_.json()["error"]["code"] == "invalid_input"


@pytest.mark.neo4j
def test_a_batch_item_that_is_no_remember_input_is_rejected_alone_as_the_schema_says(
    server_url: str, graph: str
) -> None:
    items = [
        {"text": "kept", "relations": []},
        {"text": "bad", "relations": [{"from": "a", "type": "", "to": "b"}]},
    ]
    with httpx.Client(base_url=server_url, timeout=30) as http:
        reply = http.post("/v1/memories/batch", json={"items": items, "graph": graph})
        published = http.get("/openapi.json").json()["components"]["schemas"]["RememberBatchInput"]
    assert reply.status_code == 200, reply.text
    assert [r["status"] for r in reply.json()["receipts"]] == ["created", "rejected"]
    assert "relations.0.type" in reply.json()["receipts"][1]["error"]
    # The schema takes any item (a remember input, or a value rejected alone): the request is valid.
    assert published["properties"]["items"]["items"] == {
        "anyOf": [{"$ref": "#/components/schemas/RememberInput"}, {}]
    }


def _token_lookups(http: httpx.Client) -> float:
    families = text_string_to_metric_families(http.get("/metrics").text)
    return sum(
        sample.value
        for family in families
        for sample in family.samples
        if sample.name == "graphsvc_neo4j_statement_duration_seconds_count"
        and sample.labels.get("statement") == "auth/token"
    )


@pytest.mark.neo4j
async def test_an_mcp_tool_call_looks_its_token_up_once_at_the_http_edge(
    secured_url: str, store: GraphStore, graph: str
) -> None:
    token, _ = await AccessService(store, required=True).create(graph, [READ, WRITE])
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=secured_url, timeout=30) as http:
        before = _token_lookups(http)
        result = _rpc(
            http, "tools/call", {"name": "remember", "arguments": {"text": "looked up once"}}, bearer
        )
        after = _token_lookups(http)
    assert not result["isError"], result
    assert after - before == 1
