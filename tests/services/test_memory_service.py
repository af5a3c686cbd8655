"""The memory service on a real Neo4j: tenancy, injection, bounds, ranking."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphsvc.domain.models import (
    CONTEXT_NODE_CAP,
    ExploreInput,
    IdInput,
    LinkInput,
    RecallInput,
    RememberInput,
)
from graphsvc.errors import Conflict, GraphsvcError, NotFound, Refused, Unavailable
from graphsvc.services.memory import MemoryService
from graphsvc.services.remember import RETRY_WINDOW_S
from graphsvc.store.graph import GraphStore
from tests.conftest import count_nodes, recounted, term_stats

pytestmark = pytest.mark.neo4j


async def test_graphs_never_see_each_other(memory: MemoryService, graph: str) -> None:
    other = graph + "-other"
    mine = await memory.remember(
        RememberInput(text="secret plan alpha", entities=[{"label": "Project", "name": "Alpha"}], graph=graph)
    )
    await memory.remember(
        RememberInput(text="public plan alpha", entities=[{"label": "Project", "name": "Alpha"}], graph=other)
    )
    recalled = await memory.recall(RecallInput(query="plan alpha", graph=other))
    assert [m.text for m in recalled.memories] == ["public plan alpha"]
    with pytest.raises(NotFound):
        await memory.explore(ExploreInput(start=mine.id, graph=other))
    with pytest.raises(NotFound):
        await memory.forget(IdInput(id=mine.id, graph=other))
    by_entity = await memory.recall(RecallInput(entity="Project:Alpha", graph=graph))
    assert [m.id for m in by_entity.memories] == [mine.id]


async def test_cypher_in_names_and_text_is_stored_as_data(memory: MemoryService, graph: str, store) -> None:
    await memory.remember(RememberInput(text="keep me", graph=graph))
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    stored = await memory.remember(
        RememberInput(text=evil, entities=[{"label": "Person", "name": evil}], tags=[evil], graph=graph)
    )
    assert stored.entities[0].id == f"Person:{evil}"
    assert await count_nodes(store, graph) == 3
    recalled = await memory.recall(RecallInput(entity=evil, graph=graph))
    assert recalled.memories[0].text == evil


@pytest.mark.parametrize(
    "query",
    [
        "the of and",
        "AND OR NOT",
        "*",
        '"unterminated',
        "title:(x",
        "a~ b^3 [1 TO 5] {x}",
        "ロケット 🚀",
        "word " * 800,
    ],
)
async def test_recall_never_fails_on_odd_queries(memory: MemoryService, graph: str, query: str) -> None:
    await memory.remember(RememberInput(text="the rocket launched on time", graph=graph))
    result = await memory.recall(RecallInput(query=query, graph=graph))
    assert result.contextTruncated is False


@pytest.mark.parametrize("query", ["the", "AND OR NOT", "to be or not to be"])
async def test_a_query_of_stop_words_only_recalls_nothing_rather_than_every_memory(
    memory: MemoryService, graph: str, query: str
) -> None:
    for text in ("the rocket launched on time", "The river is wide", "Lunch was late"):
        await memory.remember(RememberInput(text=text, graph=graph))
    assert (await memory.recall(RecallInput(query=query, graph=graph))).memories == []
    river = await memory.recall(RecallInput(query=f"{query} river", hops=0, graph=graph))
    assert river.memories[0].text == "The river is wide"


async def test_non_latin_text_is_found_by_its_words(memory: MemoryService, graph: str) -> None:
    stored = await memory.remember(RememberInput(text="Встреча в Москве перенесена", graph=graph))
    result = await memory.recall(RecallInput(query="москве", graph=graph))
    assert [m.id for m in result.memories] == [stored.id]


async def test_recall_context_is_capped_and_says_so(memory: MemoryService, graph: str) -> None:
    hub = {"label": "Person", "name": "Caroline"}
    for n in range(CONTEXT_NODE_CAP + 20):
        await memory.remember(RememberInput(text=f"note {n}", entities=[hub], graph=graph))
    result = await memory.recall(RecallInput(entity="Caroline", hops=1, limit=50, graph=graph))
    assert result.contextTruncated is True
    assert len(result.memories) == 50
    nodes, _ = result.context
    assert len(nodes) == CONTEXT_NODE_CAP
    explored = await memory.explore(ExploreInput(start="Person:Caroline", maxDepth=1, limit=300, graph=graph))
    assert (len(explored.nodes), explored.truncated) == (300, True)


async def test_a_rare_shared_entity_outranks_a_hub(memory: MemoryService, graph: str) -> None:
    hub, rare = {"label": "Person", "name": "Mel"}, {"label": "Place", "name": "Lake Tahoe"}
    for n in range(30):
        await memory.remember(RememberInput(text=f"Mel said thing {n}", entities=[hub], graph=graph))
    await memory.remember(RememberInput(text="Mel went kayaking", entities=[hub, rare], graph=graph))
    near = await memory.remember(RememberInput(text="The cabin by the water", entities=[rare], graph=graph))
    result = await memory.recall(RecallInput(query="kayaking", hops=1, graph=graph))
    assert result.memories[0].text == "Mel went kayaking"
    assert result.memories[1].id == near.id


async def test_link_creates_missing_entities_and_keeps_one_edge_per_type(
    memory: MemoryService, graph: str
) -> None:
    link = LinkInput.model_validate(
        {
            "from": {"label": "Pool", "name": "A"},
            "type": "TRADES_ON",
            "to": {"label": "Token", "name": "B"},
            "graph": graph,
        }
    )
    first, second = await memory.link(link), await memory.link(link)
    assert first.id == second.id and (first.created, second.created) == (True, False)
    explored = await memory.explore(ExploreInput(start="Pool:A", types=["TRADES_ON"], graph=graph))
    assert [(e.from_, e.type, e.to) for e in explored.edges] == [("Pool:A", "TRADES_ON", "Token:B")]


async def test_forget_keeps_entities_still_in_use_and_drops_orphans(
    memory: MemoryService, graph: str, store
) -> None:
    shared, lonely = {"label": "Token", "name": "USDC"}, {"label": "Token", "name": "DOGE"}
    keep = await memory.remember(RememberInput(text="USDC is stable", entities=[shared], graph=graph))
    gone = await memory.remember(RememberInput(text="DOGE and USDC", entities=[shared, lonely], graph=graph))
    await memory.forget(IdInput(id=gone.id, graph=graph))
    explored = await memory.explore(ExploreInput(start="Token:USDC", graph=graph))
    assert {n.id for n in explored.nodes} == {"Token:USDC", keep.id}
    assert await count_nodes(store, graph) == 2


class _LostAck:
    """The real store, where a write transaction's commit goes unacknowledged once: `rerun` re-runs
    the work in a new transaction as the driver's retry does; otherwise the caller gets the error a
    dropped connection gives (Unavailable) although the commit landed."""

    def __init__(self, store: GraphStore, *, rerun: bool):
        self._store, self._rerun, self.lost = store, rerun, 0

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return await self._store.run(name, **params)

    async def write_transaction(self, work: Any, *, bounded: bool = True) -> Any:
        result = await self._store.write_transaction(work, bounded=bounded)
        if self.lost:
            return result
        self.lost += 1
        if self._rerun:
            return await self._store.write_transaction(work, bounded=bounded)
        raise Unavailable("Neo4j cannot be reached")


async def _stored(store: GraphStore, graph: str, text: str) -> list[str]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g, text: $t}) RETURN m.id AS id", g=graph, t=text, database_=store._database
    )
    return [r["id"] for r in records]


REMEMBERED = {
    "text": "Pool MON/USDC-A is thin after 18:00",
    "entities": [{"label": "Pool", "name": "MON/USDC-A"}, {"label": "Token", "name": "MON"}],
    "relations": [{"from": "MON/USDC-A", "type": "QUOTES", "to": "MON"}],
    "tags": ["liquidity"],
}


async def test_a_remember_rerun_by_the_driver_after_its_commit_answers_its_own_receipt(
    store: GraphStore, graph: str
) -> None:
    retried = MemoryService(_LostAck(store, rerun=True))  # type: ignore[arg-type]
    result = await retried.remember(RememberInput(**REMEMBERED, graph=graph))
    assert await _stored(store, graph, REMEMBERED["text"]) == [result.id]
    assert [(e.from_, e.type, e.to) for e in result.edges][-1] == ("Pool:MON/USDC-A", "QUOTES", "Token:MON")


async def test_a_client_retrying_a_remember_whose_answer_was_lost_gets_the_stored_receipt(
    store: GraphStore, memory: MemoryService, graph: str
) -> None:
    lossy = MemoryService(_LostAck(store, rerun=False))  # type: ignore[arg-type]
    with pytest.raises(Unavailable):
        await lossy.remember(RememberInput(**REMEMBERED, graph=graph))
    [stored] = await _stored(store, graph, REMEMBERED["text"])
    retry = await lossy.remember(RememberInput(**REMEMBERED, graph=graph))
    again = await memory.remember(RememberInput(**REMEMBERED, graph=graph))
    assert retry.id == again.id == stored and retry.hash == again.hash
    assert len(retry.edges) == 3
    assert await _stored(store, graph, REMEMBERED["text"]) == [stored]


async def test_the_same_content_after_the_retry_window_is_a_new_memory(store: GraphStore, graph: str) -> None:
    now = [datetime(2026, 12, 1, tzinfo=UTC)]
    memory = MemoryService(store, clock=lambda: now[0])
    first = await memory.remember(RememberInput(text="checked the pool", graph=graph))
    now[0] += timedelta(seconds=RETRY_WINDOW_S + 1)
    second = await memory.remember(RememberInput(text="checked the pool", graph=graph))
    assert first.id != second.id
    assert sorted(await _stored(store, graph, "checked the pool")) == sorted([first.id, second.id])


async def test_a_rejected_remember_writes_nothing(
    store: GraphStore, memory: MemoryService, graph: str
) -> None:
    await memory.remember(RememberInput(text="first", graph=graph))
    records, _, _ = await store._driver.execute_query(
        "MATCH (s:GraphState {name: $g}) RETURN s.seq AS seq", g=graph, database_=store._database
    )
    bad = RememberInput(text="x", relations=[{"from": "Nobody", "type": "KNOWS", "to": "Ghost"}], graph=graph)
    with pytest.raises(NotFound):
        await memory.remember(bad)
    after, _, _ = await store._driver.execute_query(
        "MATCH (s:GraphState {name: $g}) RETURN s.seq AS seq", g=graph, database_=store._database
    )
    assert after[0]["seq"] == records[0]["seq"] and await count_nodes(store, graph) == 1


class _Counting:
    """The real store, counting remember transactions (those that open with memory/begin; not the term
    statistics' folds) and refusing the one numbered `refuse`: a group the database would not take as
    a whole."""

    def __init__(
        self, store: GraphStore, *, refuse: int = 0, refusal: type[GraphsvcError] = Conflict
    ) -> None:
        self._store, self.writes, self._refuse, self._refusal = store, 0, refuse, refusal

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return await self._store.run(name, **params)

    async def write_transaction(self, work: Any, *, bounded: bool = True) -> Any:
        counting = self

        class Counted:
            def __init__(self, tx: Any) -> None:
                self._tx = tx

            async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
                if name == "memory/begin":
                    counting.writes += 1
                    if counting.writes == counting._refuse:
                        raise counting._refusal("refused as a whole")
                return await self._tx.run(name, **params)

        return await self._store.write_transaction(lambda tx: work(Counted(tx)), bounded=bounded)


async def _by_seq(store: GraphStore, graph: str) -> list[dict[str, Any]]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g}) RETURN m.id AS id, m.text AS text, m.seq AS seq, m.window AS window "
        "ORDER BY m.seq",
        g=graph,
        database_=store._database,
    )
    return [r.data() for r in records]


async def test_concurrent_remembers_of_one_graph_share_transactions_each_with_its_own_receipt(
    store: GraphStore, graph: str
) -> None:
    counting = _Counting(store)
    memory = MemoryService(counting)  # type: ignore[arg-type]
    texts = [f"concurrent note {n}" for n in range(40)]
    results = await asyncio.gather(*(memory.remember(RememberInput(text=t, graph=graph)) for t in texts))
    assert len({r.id for r in results}) == 40 and counting.writes < 40
    stored = await _by_seq(store, graph)
    assert sorted(m["id"] for m in stored) == sorted(r.id for r in results)
    assert [m["seq"] for m in stored] == list(range(stored[0]["seq"], stored[0]["seq"] + 40))
    for i, m in enumerate(stored):  # each window: its text with two neighbours each side, in seq order
        assert m["window"] == "\n".join(n["text"] for n in stored[max(0, i - 2) : i + 3])


async def test_recall_finds_each_memory_as_soon_as_its_remember_answers(
    memory: MemoryService, graph: str
) -> None:
    """The fulltext index is eventually consistent (Lucene takes a commit's updates in the background):
    recall waits for them, so a writer finds its memory right away, while 7 others keep writing."""

    async def writer(w: int) -> list[str]:
        missed = []
        for n in range(20):
            word = f"zq{w}x{n}marker"
            stored = await memory.remember(RememberInput(text=f"writer {w} note {word}", graph=graph))
            found = await memory.recall(RecallInput(query=word, graph=graph))
            if stored.id not in {m.id for m in found.memories}:
                missed.append(word)
        return missed

    assert [m for missed in await asyncio.gather(*(writer(w) for w in range(8))) for m in missed] == []


async def test_concurrent_remembers_of_several_graphs_share_transactions_and_stay_apart(
    store: GraphStore, graph: str
) -> None:
    """One transaction holds the writers of several graphs; each graph keeps its own remember order,
    windows of its own memories only and term statistics as a recount finds them; a bad item of one
    graph fails alone."""
    counting = _Counting(store)
    memory = MemoryService(counting)  # type: ignore[arg-type]
    graphs = [f"{graph}-{g}" for g in range(4)]
    reqs = [RememberInput(text=f"{g} shared note {n}", graph=graphs[g]) for n in range(10) for g in range(4)]
    bad = RememberInput(
        text="bad", relations=[{"from": "Nobody", "type": "KNOWS", "to": "Ghost"}], graph=graphs[1]
    )
    results = await asyncio.gather(
        *(memory.remember(r) for r in [*reqs[:20], bad, *reqs[20:]]), return_exceptions=True
    )
    assert [type(r).__name__ for r in results].count("NotFound") == 1 and isinstance(results[20], NotFound)
    assert counting.writes < 20  # 41 remembers: alone, then groups of whatever graph
    for g, name in enumerate(graphs):
        stored = await _by_seq(store, name)
        assert [m["text"] for m in stored] == [f"{g} shared note {n}" for n in range(10)]
        assert [m["seq"] for m in stored] == list(range(1, 11))
        for i, m in enumerate(stored):
            assert m["window"] == "\n".join(n["text"] for n in stored[max(0, i - 2) : i + 3])
        assert await term_stats(store, name) == await recounted(store, name)


async def test_in_a_group_commit_a_bad_remember_fails_alone(store: GraphStore, graph: str) -> None:
    memory = MemoryService(store)
    bad = RememberInput(
        text="bad", relations=[{"from": "Nobody", "type": "KNOWS", "to": "Ghost"}], graph=graph
    )
    good = [RememberInput(text=f"good {n}", graph=graph) for n in range(10)]
    results = await asyncio.gather(
        *(memory.remember(r) for r in [*good[:5], bad, *good[5:]]), return_exceptions=True
    )
    assert [type(r).__name__ for r in results] == ["RememberResult"] * 5 + ["NotFound"] + [
        "RememberResult"
    ] * 5
    assert await count_nodes(store, graph) == 10


@pytest.mark.parametrize("refusal", [Conflict, Refused])
async def test_a_group_the_database_refuses_as_a_whole_is_written_one_by_one(
    store: GraphStore, graph: str, refusal: type[GraphsvcError]
) -> None:
    counting = _Counting(store, refuse=2, refusal=refusal)
    memory = MemoryService(counting)  # type: ignore[arg-type]
    first = asyncio.ensure_future(memory.remember(RememberInput(text="alone first", graph=graph)))
    await asyncio.sleep(0)  # the first write is in flight: the next ones queue into one group
    rest = [memory.remember(RememberInput(text=f"queued {n}", graph=graph)) for n in range(5)]
    results = await asyncio.gather(first, *rest)
    assert len({r.id for r in results}) == 6 and await count_nodes(store, graph) == 6
    assert counting.writes == 1 + 1 + 5  # alone, the refused group, then each of the group alone
