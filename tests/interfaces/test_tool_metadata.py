"""Each MCP tool's annotations say what it does: every tool is called (twice) on a graph of its own,
and the graph before and after shows whether it wrote, removed or overwrote, and wrote again."""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

import pytest
from mcp import Client

from graphsvc.domain.models import LinkInput, RememberInput
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.transports import ToolFailure, connect

pytestmark = pytest.mark.neo4j

POOL, USDC = {"label": "Pool", "name": "A"}, {"label": "Token", "name": "USDC"}
BOOKKEEPING = {"window"}  # neighbours' recall windows move as memories come and go
CALLS: dict[str, Any] = {
    "remember": lambda m: {"text": "swap again", "entities": [POOL]},
    "recall": lambda m: {"query": "swap"},
    "link": lambda m: {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"fee": 2}},
    "explore": lambda m: {"start": "Pool:A"},
    "forget": lambda m: {"id": m},
    "anchor_now": lambda m: {},
    "verify_memory": lambda m: {"id": m},
    "store_event": lambda m: {"event_kind": "fact", "payload": "swap", "context_id": "skill:swap"},
    "retrieve_memories": lambda m: {"query": "swap"},
    "list_contexts": lambda m: {},
    "generate_insights": lambda m: {"task": "swap"},
}


async def _state(store: GraphStore, graph: str) -> dict[str, Any]:
    """Every node and relationship of `graph`: labels (not Pending, a queue) or type, and properties."""
    query = (
        "MATCH (n {graph: $graph}) RETURN elementId(n) AS key, [l IN labels(n) WHERE l <> 'Pending'] AS "
        "kind, properties(n) AS props UNION ALL MATCH ({graph: $graph})-[r]->() "
        "RETURN elementId(r) AS key, [type(r)] AS kind, properties(r) AS props"
    )
    records, _, _ = await store._driver.execute_query(query, graph=graph)
    return {
        r["key"]: (r["kind"], {k: v for k, v in r["props"].items() if k not in BOOKKEEPING}) for r in records
    }


def _removed_or_overwritten(before: dict[str, Any], after: dict[str, Any]) -> bool:
    for key, (kind, props) in before.items():
        if key not in after or set(kind) - set(after[key][0]):
            return True
        if any(after[key][1].get(name) != value for name, value in props.items()):
            return True
    return False


async def _seeded(memory: MemoryService) -> tuple[str, str]:
    graph = "a-" + secrets.token_hex(6)
    stored = await memory.remember(RememberInput(text="swap failed on pool A", entities=[POOL], graph=graph))
    await memory.remember(RememberInput(text="USDC is a stable coin", entities=[USDC], graph=graph))
    await memory.link(
        LinkInput.model_validate(
            {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"fee": 1}, "graph": graph}
        )
    )
    return graph, stored.id


async def test_each_tools_annotations_say_what_it_does_to_the_graph(
    server_url: str, store: GraphStore, memory: MemoryService
) -> None:
    async with Client(f"{server_url}/mcp") as client:
        annotations = {tool.name: tool.annotations for tool in (await client.list_tools()).tools}
    assert set(annotations) == set(CALLS)
    async with connect("mcp-streamable-http", server_url) as call:
        for tool, args in CALLS.items():
            graph, memory_id = await _seeded(memory)
            before = await _state(store, graph)
            await call(tool, args(memory_id) | {"graph": graph})
            after = await _state(store, graph)
            with contextlib.suppress(ToolFailure):  # forgetting twice: not_found
                await call(tool, args(memory_id) | {"graph": graph})
            again = await _state(store, graph)
            hint = annotations[tool]
            assert hint is not None and hint.read_only_hint == (after == before), tool
            if not hint.read_only_hint:
                assert hint.destructive_hint == _removed_or_overwritten(before, after), tool
                assert hint.idempotent_hint == (again == after), tool


async def test_every_tool_schema_is_a_plain_object_as_model_apis_take_it(server_url: str) -> None:
    async with Client(f"{server_url}/mcp") as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.input_schema["type"] == "object", tool.name
        assert not {"anyOf", "oneOf", "allOf"} & set(tool.input_schema), tool.name
        assert "default" not in tool.input_schema["properties"]["graph"], tool.name  # the token's
