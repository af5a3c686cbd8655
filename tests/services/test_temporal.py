"""Memories that change over time: `supersedes`, `validFrom` / `validTo`, recall `asOf` and `history`,
each version anchored and verifiable. On a real Neo4j and a real local chain."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import Settings
from graphsvc.domain.models import ExploreInput, GraphInput, IdInput, RecallInput, RememberInput
from graphsvc.domain.render import recall_text
from graphsvc.errors import NotFound
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from tests.conftest import count_nodes
from tests.transports import TRANSPORTS, ToolFailure, connect

pytestmark = pytest.mark.neo4j


def _at(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


async def _moves(memory: MemoryService, graph: str) -> list[str]:
    """Alice in Lisbon from 2020, in Berlin from 2022, in Tokyo from 2024: each superseding the last."""
    ids: list[str] = []
    for city, year in (("Lisbon", 2020), ("Berlin", 2022), ("Tokyo", 2024)):
        stored = await memory.remember(
            RememberInput(
                text=f"Alice lives in {city}",
                entities=[{"label": "Person", "name": "Alice"}, {"label": "City", "name": city}],
                supersedes=ids[-1:],
                validFrom=_at(year),
                graph=graph,
            )
        )
        ids.append(stored.id)
    return ids


async def _recalled(memory: MemoryService, graph: str, **options: Any) -> list[str]:
    result = await memory.recall(RecallInput(query="where does Alice live", graph=graph, **options))
    return [m.id for m in result.memories]


async def test_a_fact_updated_three_times_recalls_the_latest_now_and_each_version_as_of_its_time(
    memory: MemoryService, graph: str
) -> None:
    lisbon, berlin, tokyo = await _moves(memory, graph)
    assert await _recalled(memory, graph) == [tokyo]
    assert await _recalled(memory, graph, asOf=_at(2021, 6)) == [lisbon]
    assert await _recalled(memory, graph, asOf=_at(2023, 6)) == [berlin]
    assert await _recalled(memory, graph, asOf=_at(2025)) == [tokyo]
    assert await _recalled(memory, graph, asOf=_at(2019)) == []
    history = await memory.recall(RecallInput(query="where does Alice live", history=True, graph=graph))
    superseded = {m.id: m.supersededBy for m in history.memories}
    assert superseded == {lisbon: [berlin], berlin: [tokyo], tokyo: []}
    assert {m.id: m.validFrom for m in history.memories}[berlin] == "2022-01-01T00:00:00.000Z"
    assert f"superseded by {tokyo}" in recall_text(history)


async def test_every_version_verifies_against_its_anchor_and_its_envelope_names_what_it_replaced(
    memory: MemoryService, store: Any, settings: Settings, graph: str
) -> None:
    lisbon, berlin, tokyo = await _moves(memory, graph)
    c = settings.chain
    assert c.rpc_url and c.private_key
    chain = AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)
    try:
        anchoring = AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
        assert (await anchoring.anchor_now(GraphInput(graph=graph))).status == "anchored"
        for memory_id in (lisbon, berlin, tokyo):
            assert (await anchoring.verify(IdInput(id=memory_id, graph=graph))).verified
        envelope = (await anchoring.bundle(IdInput(id=tokyo, graph=graph))).envelope or {}
        assert envelope["schema"] == "graphsvc.memory/v2" and envelope["supersedes"] == [berlin]
        assert (envelope["validFrom"], envelope["validTo"]) == ("2024-01-01T00:00:00.000Z", None)
        await memory.forget(
            IdInput(id=lisbon, graph=graph)
        )  # a predecessor goes: the successor still verifies
        assert (await anchoring.verify(IdInput(id=berlin, graph=graph))).verified
    finally:
        await chain.close()


async def test_forgetting_a_successor_makes_its_predecessor_hold_again(
    memory: MemoryService, graph: str
) -> None:
    _, berlin, tokyo = await _moves(memory, graph)
    await memory.forget(IdInput(id=tokyo, graph=graph))
    assert await _recalled(memory, graph) == [berlin]


async def test_a_fact_that_ended_in_the_past_is_out_of_now_but_in_its_time_and_in_history(
    memory: MemoryService, graph: str
) -> None:
    ended = await memory.remember(
        RememberInput(text="Alice lives in Porto", validFrom=_at(2010), validTo=_at(2012), graph=graph)
    )
    assert await _recalled(memory, graph) == []
    assert await _recalled(memory, graph, asOf=_at(2011)) == [ended.id]
    assert await _recalled(memory, graph, asOf=_at(2012)) == []  # validTo is exclusive
    assert await _recalled(memory, graph, history=True) == [ended.id]


async def test_superseding_an_already_superseded_memory_ends_it_at_the_first_successor(
    memory: MemoryService, graph: str
) -> None:
    lisbon, berlin, _ = await _moves(memory, graph)
    early = await memory.remember(
        RememberInput(text="Alice lives in Madrid", supersedes=[lisbon], validFrom=_at(2021), graph=graph)
    )
    assert await _recalled(memory, graph, asOf=_at(2021, 6)) == [early.id]
    history = await memory.recall(RecallInput(query="Alice lives", history=True, graph=graph))
    assert {m.id: m.supersededBy for m in history.memories}[lisbon] == sorted([berlin, early.id])


async def test_temporal_bad_input_is_refused_and_writes_nothing(memory: MemoryService, graph: str) -> None:
    with pytest.raises(ValidationError):
        RememberInput(text="x", validFrom=_at(2024), validTo=_at(2023), graph=graph)
    with pytest.raises(ValidationError):
        RecallInput(query="x", asOf="not a date", graph=graph)  # type: ignore[arg-type]
    elsewhere = await memory.remember(RememberInput(text="in another graph", graph=graph + "-other"))
    for unknown in ("mem_0000000000000000", elsewhere.id):
        with pytest.raises(NotFound):
            await memory.remember(RememberInput(text="replaces nothing", supersedes=[unknown], graph=graph))
    assert await count_nodes(memory._store, graph) == 0  # type: ignore[arg-type]


async def test_bulk_remember_takes_the_temporal_fields_and_explore_shows_supersedes(
    memory: MemoryService, graph: str
) -> None:
    [first] = await memory.remember_many([RememberInput(text="v1 of the plan", graph=graph)])
    assert first.id
    [second] = await memory.remember_many(
        [RememberInput(text="v2 of the plan", supersedes=[first.id], validFrom=_at(2030), graph=graph)]
    )
    explored = await memory.explore(ExploreInput(start=second.id or "", maxDepth=1, graph=graph))
    assert [(e.from_, e.type, e.to) for e in explored.edges] == [(second.id, "SUPERSEDES", first.id)]
    plan = await memory.recall(RecallInput(query="plan", graph=graph))
    assert [m.id for m in plan.memories] == [first.id]  # v2 starts in 2030: v1 holds until then


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_transport_takes_the_temporal_fields_and_refuses_bad_ones(
    transport: str, server_url: str, graph: str
) -> None:
    async with connect(transport, server_url) as call:
        old = await call("remember", {"text": "the meeting is on Monday", "graph": graph})
        new = await call(
            "remember",
            {"text": "the meeting moved to Tuesday", "supersedes": [old.data["id"]], "graph": graph},
        )
        now = await call("recall", {"query": "meeting", "graph": graph})
        assert [m["id"] for m in now.data["memories"]] == [new.data["id"]]
        everything = await call("recall", {"query": "meeting", "history": True, "graph": graph})
        assert {m["id"]: m.get("supersededBy", []) for m in everything.data["memories"]}[old.data["id"]] == [
            new.data["id"]
        ]
        for bad in (
            {"text": "x", "validFrom": "2024-01-01T00:00:00Z", "validTo": "2023-01-01T00:00:00Z"},
            {"text": "x", "supersedes": ["mem_0000000000000000"]},
        ):
            with pytest.raises(ToolFailure) as refused:
                await call("remember", {**bad, "graph": graph})
            assert refused.value.code in ("invalid_input", "not_found")
        with pytest.raises(ToolFailure) as refused:
            await call("recall", {"query": "meeting", "asOf": "yesterday-ish", "graph": graph})
        assert refused.value.code == "invalid_input"


async def test_rest_recall_as_of_answers_what_held_then(server_url: str, graph: str) -> None:
    async with httpx.AsyncClient(base_url=server_url) as http:
        body = {
            "text": "the office is in Lyon",
            "validFrom": "2001-01-01",
            "validTo": "2002-01-01",
            "graph": graph,
        }
        stored = (await http.post("/v1/memories", json=body)).json()
        then = (
            await http.post(
                "/v1/recall", json={"query": "office", "asOf": "2001-06-01T00:00:00Z", "graph": graph}
            )
        ).json()
        assert [m["id"] for m in then["memories"]] == [stored["id"]]
        assert then["memories"][0]["validTo"] == "2002-01-01T00:00:00.000Z"
