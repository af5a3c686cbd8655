"""The LocusGraph tools (seed 002) on graphsvc's model, over MCP (both transports) and REST, with a token."""

from __future__ import annotations

import secrets

import pytest

from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.store.graph import GraphStore
from tests.interfaces.test_access import _snapshot
from tests.transports import TRANSPORTS, ToolFailure, connect

pytestmark = pytest.mark.neo4j

SEED_EVENT = {
    "context_id": "skill:react_hooks",
    "event_kind": "fact",
    "source": "agent",
    "payload": {
        "data": {
            "topic": "useEffect cleanup",
            "value": "Always return a cleanup function when subscribing to external stores",
        }
    },
}


@pytest.fixture
async def token(store: GraphStore) -> tuple[str, str]:
    graph = "locus-" + secrets.token_hex(4)
    return graph, (await AccessService(store, required=True).create(graph, [READ, WRITE]))[0]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_seed_examples_round_trip(transport: str, secured_url: str, token: tuple[str, str]) -> None:
    _, secret = token
    async with connect(transport, secured_url, {"authorization": f"Bearer {secret}"}) as call:
        stored = await call("store_event", SEED_EVENT)
        assert stored.data["event_id"].startswith("mem_") and stored.data["contexts"] == ["skill:react_hooks"]
        if stored.text is not None:
            assert stored.text.startswith(f"Stored fact event {stored.data['event_id']} in skill:react_hooks")

        found = await call(
            "retrieve_memories",
            {"query": "React hook best practices", "limit": 5, "context_types": {"skill": ["react_hooks"]}},
        )
        assert found.data["memories"][0]["text"] == (
            "useEffect cleanup: Always return a cleanup function when subscribing to external stores"
        )
        assert found.data["memories"][0]["event_kind"] == "fact" and found.data["memories"][0]["id"] is None
        with_ids = await call("retrieve_memories", {"query": "useEffect cleanup", "include_ids": True})
        assert with_ids.data["memories"][0]["id"] == stored.data["event_id"]
        assert with_ids.data["memories"][0]["context_ids"] == ["skill:react_hooks"]
        assert (await call("retrieve_memories", {"query": "useEffect", "context_ids": ["skill:vue"]})).data[
            "total"
        ] == 0

        # aliases: event_type / eventType -> event_kind, content -> payload, event_id -> context_id
        await call(
            "store_event",
            {"eventType": "decision", "content": "Use JWT with short expiry", "event_id": "skill:auth"},
        )
        await call(
            "store_event",
            {
                "event_type": "observation",
                "payload": {"data": {"topic": "auth", "value": "JWT refresh works"}},
                "context_id": "error:auth_timeout",
                "reinforces": ["skill:auth"],
            },
        )
        await call(
            "store_event",
            {
                "event_kind": "feedback",
                "payload": "Sessions beat JWT for our auth",
                "context_id": "error:auth_timeout",
                "contradicts": ["skill:auth"],
                "source": "user",
                "timestamp": "1718000000",
            },
        )

        listed = await call("list_contexts", {"context_type": "skill", "limit": 10})
        assert [c["context_id"] for c in listed.data["contexts"]] == ["skill:auth", "skill:react_hooks"]
        assert listed.data["total"] == 2 and listed.data["contexts"][0]["events"] == 3
        paged = await call("list_contexts", {"limit": 1, "page": 1})
        assert (paged.data["total"], [c["context_id"] for c in paged.data["contexts"]]) == (3, ["skill:auth"])

        insights = await call(
            "generate_insights",
            {
                "task": "Refactor the authentication module",
                "context_query": "auth JWT sessions",
                "limit": 10,
                "context_types": {"error": [], "skill": []},
            },
        )
        by_context = {i["context_id"]: i for i in insights.data["insights"]}
        assert by_context["skill:auth"]["reinforced"] == 1
        assert [c["text"] for c in by_context["skill:auth"]["contradicted_by"]] == [
            "Sessions beat JWT for our auth"
        ]
        # The react_hooks fact matches no query word; it was remembered next to the JWT decision, so
        # its window matches and it may come along, ranked after every context that matches itself.
        assert list(by_context)[-1] == "skill:react_hooks" or "skill:react_hooks" not in by_context
        assert max(k["score"] for k in by_context["skill:auth"]["knowledge"]) > max(
            (k["score"] for k in by_context.get("skill:react_hooks", {"knowledge": []})["knowledge"]),
            default=0,
        )
        if insights.text is not None:
            assert insights.text.splitlines()[0] == "Insights for: Refactor the authentication module"


BAD_EVENTS = [
    {"event_kind": "rumour", "payload": "x"},
    {"event_kind": "fact", "source": "oracle", "payload": "x"},
    {"event_kind": "fact", "context_id": "react_hooks", "payload": "x"},
    {"event_kind": "fact", "payload": "x", "reinforces": ["no-type"]},
    {"event_kind": "fact", "payload": "x", "timestamp": "yesterday"},
    {"payload": "x"},
]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_bad_events_are_refused_and_write_nothing(
    transport: str, secured_url: str, token: tuple[str, str], store: GraphStore
) -> None:
    graph, secret = token
    before = await _snapshot(store, graph)
    async with connect(transport, secured_url, {"authorization": f"Bearer {secret}"}) as call:
        for event in BAD_EVENTS:
            with pytest.raises(ToolFailure) as refused:
                await call("store_event", event)
            assert refused.value.code == "invalid_input", event
    assert await _snapshot(store, graph) == before
