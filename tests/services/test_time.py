"""Recall that knows when: `occurredAt` (stored, hashed in envelope v3, verifiable), the times a
memory's text mentions, and recall's time window (from the query's words or `from`/`to`). On a real
Neo4j and a real local chain."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import Settings
from graphsvc.domain.hashing import memory_envelope
from graphsvc.domain.locus import StoreEventInput
from graphsvc.domain.models import GraphInput, IdInput, RecallInput, RememberInput
from graphsvc.domain.proof import ProofBundle
from graphsvc.domain.render import recall_text
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from graphsvc.verifier import Rpc, verify_bundle
from tests.conftest import count_nodes
from tests.transports import TRANSPORTS, ToolFailure, connect

pytestmark = pytest.mark.neo4j

SAID_ON = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


@pytest.fixture
async def on_8_may(store: GraphStore) -> AsyncIterator[MemoryService]:
    """A memory service whose clock says 8 May 2023: "now" for remember and recall."""
    service = MemoryService(store, clock=lambda: SAID_ON)
    yield service
    await service.close()


async def _ids(memory: MemoryService, graph: str, **recall: Any) -> list[str]:
    return [m.id for m in (await memory.recall(RecallInput(graph=graph, **recall))).memories]


def test_a_memory_without_occurred_at_keeps_its_v1_or_v2_envelope() -> None:
    fields: dict[str, Any] = {
        "id": "mem_1",
        "graph": "g",
        "text": "t",
        "tags": [],
        "entities": [],
        "created_at": "c",
    }
    assert memory_envelope(**fields)["schema"] == "graphsvc.memory/v1"
    assert memory_envelope(**fields, valid_from="v")["schema"] == "graphsvc.memory/v2"
    v3 = memory_envelope(**fields, occurred_at="2023-05")
    assert v3["schema"] == "graphsvc.memory/v3" and v3["occurredAt"] == "2023-05"
    assert (v3["supersedes"], v3["validFrom"], v3["validTo"]) == ([], None, None)


async def test_occurred_at_is_stored_recalled_hashed_in_v3_and_verifies(
    memory: MemoryService, store: Any, settings: Settings, graph: str
) -> None:
    stored = await memory.remember(
        RememberInput(text="the launch party", occurredAt="2023-05-08", graph=graph)
    )
    plain = await memory.remember(RememberInput(text="the launch plan", graph=graph))
    result = await memory.recall(RecallInput(query="launch", graph=graph))
    shown = {m.id: m.model_dump() for m in result.memories}
    assert shown[stored.id]["occurredAt"] == "2023-05-08"
    assert "occurredAt" not in shown[plain.id] and "window" not in result.model_dump()
    assert "occurred 2023-05-08" in recall_text(result)
    c = settings.chain
    assert c.rpc_url and c.private_key
    chain = AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)
    try:
        anchoring = AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
        assert (await anchoring.anchor_now(GraphInput(graph=graph))).status == "anchored"
        for memory_id in (stored.id, plain.id):
            assert (await anchoring.verify(IdInput(id=memory_id, graph=graph))).verified
        bundle = await anchoring.bundle(IdInput(id=stored.id, graph=graph))
        assert bundle.envelope and bundle.envelope["schema"] == "graphsvc.memory/v3"
        assert bundle.envelope["occurredAt"] == "2023-05-08"
        plain_bundle = await anchoring.bundle(IdInput(id=plain.id, graph=graph))
        assert plain_bundle.envelope and plain_bundle.envelope["schema"] == "graphsvc.memory/v1"
        report = verify_bundle(ProofBundle.model_validate(bundle.model_dump()), Rpc(c.rpc_url), c.contract)
        assert report.verified
    finally:
        await chain.close()


async def test_last_friday_said_on_8_may_2023_is_a_memory_about_5_may(
    memory: MemoryService, graph: str
) -> None:
    friday = await memory.remember(
        RememberInput(text="Yes, I went last Friday", occurredAt="2023-05-08T13:56:00Z", graph=graph)
    )
    other = await memory.remember(RememberInput(text="I stayed home", occurredAt="2023-05-01", graph=graph))
    result = await memory.recall(RecallInput(query="what happened on 5 May 2023", graph=graph))
    assert [m.id for m in result.memories][:1] == [friday.id] and other.id not in [
        m.id for m in result.memories
    ]
    assert result.window is not None
    window = result.window.model_dump()
    assert window == {
        "from": "2023-05-05T00:00:00.000Z",
        "to": "2023-05-06T00:00:00.000Z",
        "source": "query",
        "text": "5 May 2023",
    }
    assert "time window 2023-05-05" in recall_text(result)


async def test_a_query_of_only_a_date_answers_the_memories_of_that_window(
    memory: MemoryService, graph: str
) -> None:
    in_2022 = await memory.remember(RememberInput(text="moved to Berlin", occurredAt="2022-03", graph=graph))
    await memory.remember(RememberInput(text="moved to Tokyo", occurredAt="2024", graph=graph))
    assert await _ids(memory, graph, query="2022") == [in_2022.id]
    assert await _ids(memory, graph, query="in March 2022") == [in_2022.id]


async def test_from_to_is_the_window_and_favours_its_memories_over_better_keyword_hits(
    memory: MemoryService, graph: str
) -> None:
    old = await memory.remember(RememberInput(text="trip trip to Rome", occurredAt="2021-06-01", graph=graph))
    new = await memory.remember(RememberInput(text="a trip to Oslo", occurredAt="2023-06-01", graph=graph))
    assert (await _ids(memory, graph, query="trip"))[0] == old.id
    windowed = await memory.recall(
        RecallInput(query="trip", graph=graph, **{"from": "2023", "to": "2023-12"})
    )
    assert [m.id for m in windowed.memories] == [new.id, old.id]
    assert windowed.window is not None and windowed.window.model_dump() == {
        "from": "2023-01-01T00:00:00.000Z",
        "to": "2024-01-01T00:00:00.000Z",
        "source": "explicit",
        "text": None,
    }


async def test_a_window_with_no_memories_changes_nothing(memory: MemoryService, graph: str) -> None:
    stored = await memory.remember(
        RememberInput(text="the garden party", occurredAt="2023-05-08", graph=graph)
    )
    result = await memory.recall(RecallInput(query="garden party in 1999", graph=graph))
    assert [m.id for m in result.memories] == [stored.id]
    assert result.window is not None and result.window.text == "1999"


async def test_relative_times_in_the_query_are_read_against_now_and_in_the_text_against_occurred_at(
    on_8_may: MemoryService, graph: str
) -> None:
    today = await on_8_may.remember(RememberInput(text="we painted the fence", graph=graph))
    await on_8_may.remember(RememberInput(text="we painted the shed", occurredAt="2023-04-02", graph=graph))
    mentioned = await on_8_may.remember(
        RememberInput(text="two weeks ago we repainted the door", occurredAt="2023-02-03", graph=graph)
    )
    assert (await _ids(on_8_may, graph, query="what did we do today"))[0] == today.id
    assert (await _ids(on_8_may, graph, query="what did we do in January"))[0] == mentioned.id


async def test_bulk_remember_and_store_event_take_when_it_happened(memory: MemoryService, graph: str) -> None:
    [bulk] = await memory.remember_many(
        [RememberInput(text="bulk item", occurredAt="2020-02-29", graph=graph)]
    )
    event = await LocusService(memory, memory._store).store_event(  # type: ignore[arg-type]
        StoreEventInput.model_validate(
            {"event_kind": "fact", "payload": "the event", "timestamp": "1683554160", "graph": graph}
        )
    )
    result = await memory.recall(RecallInput(query="bulk item event", graph=graph))
    occurred = {m.id: m.occurredAt for m in result.memories}
    assert occurred[bulk.id or ""] == "2020-02-29"
    assert occurred[event.event_id] == "2023-05-08T13:56:00.000Z"


def test_bad_times_are_refused_by_the_contract() -> None:
    for value in ("yesterday", "2023-02-30", "0999", "10000-01-01", "2023-13", "03/04/2023"):
        with pytest.raises(ValidationError):
            RememberInput(text="x", occurredAt=value)
    with pytest.raises(ValidationError):
        RecallInput(query="x", **{"from": "2023-06", "to": "2023-05"})
    with pytest.raises(ValidationError):
        StoreEventInput.model_validate({"event_kind": "fact", "payload": "x", "timestamp": "100000000000"})


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_transport_takes_occurred_at_and_from_to_and_refuses_bad_ones_writing_nothing(
    transport: str, server_url: str, graph: str
) -> None:
    async with connect(transport, server_url) as call:
        for bad in ({"occurredAt": "not a date"}, {"occurredAt": "2023-02-30"}, {"occurredAt": "99999"}):
            with pytest.raises(ToolFailure) as refused:
                await call("remember", {"text": "x", **bad, "graph": graph})
            assert refused.value.code == "invalid_input"
        with pytest.raises(ToolFailure) as refused:
            await call("recall", {"query": "x", "from": "2024", "to": "2023", "graph": graph})
        assert refused.value.code == "invalid_input"
        stored = await call("remember", {"text": "the kickoff", "occurredAt": "2023-05", "graph": graph})
        found = await call(
            "recall", {"query": "kickoff", "from": "2023-05-01", "to": "2023-05-31", "graph": graph}
        )
        assert [m["id"] for m in found.data["memories"]] == [stored.data["id"]]
        assert found.data["memories"][0]["occurredAt"] == "2023-05"
        assert found.data["window"]["source"] == "explicit"


async def test_nothing_is_written_when_occurred_at_is_refused(memory: MemoryService, graph: str) -> None:
    with pytest.raises(ValidationError):
        await memory.remember(RememberInput(text="x", occurredAt="2023-99", graph=graph))
    assert await count_nodes(memory._store, graph) == 0  # type: ignore[arg-type]


async def test_yesterday_in_a_question_is_a_day_not_a_word_that_other_days_memories_share(
    on_8_may: MemoryService, graph: str
) -> None:
    for day in ("2023-03-02", "2023-04-11", "2023-04-20"):
        await on_8_may.remember(
            RememberInput(text="Yesterday I did the laundry", occurredAt=day, graph=graph)
        )
    cooked = await on_8_may.remember(
        RememberInput(text="Cooked a risotto with Ann", occurredAt="2023-05-07", graph=graph)
    )
    result = await on_8_may.recall(RecallInput(query="what did I do yesterday", graph=graph))
    assert [m.id for m in result.memories][:1] == [cooked.id]
    assert result.window is not None and result.window.text == "yesterday"


async def test_a_question_that_asks_when_ranks_first_the_memory_that_says_when(
    memory: MemoryService, graph: str
) -> None:
    await memory.remember(RememberInput(text="Ann likes swimming in the lake a lot", graph=graph))
    said = await memory.remember(
        RememberInput(text="Ann went swimming in the lake last Friday", occurredAt="2023-05-08", graph=graph)
    )
    result = await memory.recall(RecallInput(query="When did Ann go swimming in the lake?", graph=graph))
    assert [m.id for m in result.memories][:1] == [said.id]
    assert result.memories[0].why is not None and result.memories[0].why.time > 0
    assert "time" in result.memories[0].foundBy
