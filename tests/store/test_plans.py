"""The hot path's statements use indexes: PROFILE on a real graph shows seeks, never a scan of a whole
label or index, nor a sort where the index gives the order."""

from __future__ import annotations

import pytest

from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.index.term_fold import fold
from graphsvc.services.memory import MemoryService
from graphsvc.services.remember import SPAN
from graphsvc.store.graph import GraphStore
from tests.stack.test_browser_guide import guide_blocks

pytestmark = pytest.mark.neo4j
SCANS = {"AllNodesScan", "NodeByLabelScan", "NodeIndexScan"}  # a whole label, or a whole index
SORTS = {"Sort", "Top", "PartialSort"}
# Operators that start from an index: a seek or an ordered scan of a range, a vector search
# (NodeVectorIndexSearch), and Neo4j 2026's MERGE through a uniqueness constraint's index (MergeUniqueNode).
INDEX_READS = ("IndexSeek", "IndexScan", "IndexSearch", "MergeUniqueNode")
# Their memories nearest a position come in the (graph, seq) index's order: a sort would read every
# memory of the graph, on every remember. A graph's contexts come in its (graph, id) index's order.
ORDERED_BY_INDEX = {"memory/begin", "memory/around", "locus/list_contexts"}


def _operators(plan: dict) -> list[tuple[str, str]]:
    details = plan.get("args", {}).get("Details", "")
    return [(plan["operatorType"].split("@")[0], details)] + [
        op for child in plan.get("children", []) for op in _operators(child)
    ]


async def _profiled(store: GraphStore, query: str, params: dict) -> list[tuple[str, str]]:
    """The operators (kind, details) of `query`'s plan, as PROFILE runs it."""
    async with store._driver.session(database=store._database) as session:
        summary = await (await session.run("PROFILE " + query, params)).consume()  # type: ignore[arg-type]
    return _operators(summary.profile)


async def test_recall_and_remember_statements_seek_indexes(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    await memory.remember_many(
        [
            RememberInput(
                text=f"note {n} about rockets",
                entities=[{"label": "Person", "name": f"P{n % 3}"}],
                graph=graph,
            )
            for n in range(30)
        ]
    )
    calls: list[tuple[str, dict]] = []
    run = store.run

    async def recording(name: str, **params: object) -> list[dict]:
        calls.append((name, params))
        return await run(name, **params)

    await fold(store, graph)  # so that memory/take_deltas, run below for its plan, takes nothing
    store.run = recording  # type: ignore[method-assign]
    try:
        recalled = await memory.recall(RecallInput(query="rockets", hops=1, graph=graph))
    finally:
        store.run = run  # type: ignore[method-assign]
    assert recalled.memories
    begin = {"graphs": [graph], "keys": ["x"], "since": "", "ids": ["mem_x"], "span": SPAN}
    calls.append(("memory/begin", begin))
    calls.append(("memory/around", {"graph": graph, "seq": 5, "span": SPAN}))
    calls.append(("locus/context_stats", {"graph": graph, "contexts": ["deploys"]}))
    calls.append(
        (
            "embed/nearest",
            {
                "key": graph_key(graph),
                "vector": [0.1] * 384,
                "limit": 5,
                "breadth": 100,
                "model": "m",
                "graph": graph,  # recall's count of the graph's backlog: a seek, at any backlog
                "cap": 1000,
            },
        )
    )
    contexts = {"graph": graph, "contextType": None, "contextName": None, "skip": 0, "limit": 50}
    calls.append(("locus/list_contexts", contexts))
    zero = {f"{f}{k}": 0 for f in ("text", "window", "tags") for k in ("Docs", "Length")}
    calls.append(("memory/commit", {"states": [], "memories": [], "windows": [], "deltas": []}))
    calls.append(("memory/take_deltas", {"graphs": [graph], "limit": 50}))
    calls.append(  # changes nothing: every count moves by 0
        (
            "memory/count",
            {
                "stats": [{"graph": graph, **zero}],
                "terms": [{"graph": graph, "term": "rocket", "text": 0, "window": 0, "tags": 0}],
            },
        )
    )
    calls.append(
        ("graph/nodes", {"graph": graph, "memoryIds": [recalled.memories[0].id], "entityIds": ["Person:P1"]})
    )
    assert {"graph/keyword_hits", "graph/neighbours"} <= {name for name, _ in calls}
    for name, params in calls:
        operators = await _profiled(store, store.statements[name].text, params)
        kinds = {kind for kind, _ in operators}
        assert not kinds & SCANS, (name, operators)
        if name in ORDERED_BY_INDEX:
            assert not kinds & SORTS, (name, operators)
        if name != "graph/keyword_hits":  # that one starts in the fulltext index (a procedure call)
            assert any(reads in kind for reads in INDEX_READS for kind in kinds), (name, operators)


async def test_a_scrape_reads_label_counts_and_index_entries_never_every_batch(store: GraphStore) -> None:
    """Whatever the graphs' size: no scan, and the newest finalized batch is one ordered index read
    (no sort of every finalized batch)."""
    unfinished = ["SEALED", "SIGNED", "SUBMITTED", "INCLUDED"]
    for name, params in (
        ("anchor/state", {"unfinished": unfinished}),
        ("anchor/unfinished_count", {"statuses": unfinished}),
    ):
        kinds = {kind for kind, _ in await _profiled(store, store.statements[name].text, params)}
        assert not kinds & (SCANS | SORTS), (name, kinds)
        assert "NodeIndexSeek" in kinds, (name, kinds)


async def test_the_guides_newest_first_queries_read_the_index_in_order(
    server_url: str, store: GraphStore, graph: str
) -> None:
    """What an operator runs from the Browser guide reads about what it shows, never every memory:
    the newest in index order, superseded chains from the SUPERSEDES relationships."""
    blocks = guide_blocks(server_url)
    for name, starts in (("memories", "NodeIndexSeek"), ("pending", "NodeIndexSeek"), ("superseded", None)):
        kinds = {kind for kind, _ in await _profiled(store, blocks[name], {"graph": graph})}
        assert not kinds & (SCANS | SORTS), (name, kinds)
        assert starts is None or starts in kinds, (name, kinds)
