"""Recall's second pass through bridges: from the first pass's best memories, through the entities
they mention that the query does not name, to the memories of other sessions that mention them.

The scoring needs no Neo4j; the pass itself runs on the real Neo4j with the extraction worker.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.memory import MemoryService
from graphsvc.services.recall import bridges
from graphsvc.services.recall.bridges import Bridge, Bridges
from graphsvc.store.graph import GraphStore

# ---- the scoring (no Neo4j) ----------------------------------------------------------------------


def test_a_bridge_carries_less_the_more_of_the_graph_mentions_it() -> None:
    carried = [bridges.share(degree, 1000) for degree in (2, 10, 100, 999, 1000)]
    assert carried == sorted(carried, reverse=True)
    assert carried[0] > 0.8 and carried[-1] == 0.0
    assert bridges.share(2, 1) == 0.0  # a graph of one memory has nothing to bridge


def test_a_bridge_from_a_better_first_memory_counts_more_and_shared_ones_add_up() -> None:
    found = Bridges(
        size=100,
        rows=[
            Bridge("best", "Name:Dana", 2, ("dana",)),
            Bridge("second", "Name:Porto", 2, ("porto",)),
            Bridge("best", "Topic:flat", 5, ("both", "second")),
            Bridge("second", "Topic:move", 2, ("best",)),
            Bridge("second", "Name:Douro", 3, ("both",)),
        ],
    )
    value = bridges.scored(found, ["best", "second"])
    assert value["dana"] > value["porto"] > 0
    assert value["both"] == min(
        1.0, bridges.share(5, 100) + bridges.share(3, 100) / 2
    )  # they add up, to 1 at most
    assert all(0 < v <= 1 for v in value.values())
    assert "best" not in value and "second" not in value  # the pass starts there: it does not reorder them
    assert (
        bridges.newcomers(value, {"best", "second"}, 2)
        == sorted(["dana", "porto", "both"], key=lambda m: -value[m])[:2]
    )


def test_a_bridged_memory_is_one_hop_past_the_shallowest_first_memory_that_reaches_it() -> None:
    found = Bridges(
        size=100,
        rows=[
            Bridge("hit", "Name:Dana", 2, ("near",)),
            Bridge("walked", "Name:Porto", 3, ("near", "far")),
        ],
    )
    # "hit" at hop 0 (depth 0), "walked" at hop 1 (depth 2): "far" is only reached from hop 1
    assert bridges.depths(found, {"hit": 0, "walked": 2}) == {"near": 2, "far": 4}


# ---- the pass on Neo4j ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def extraction(store: GraphStore) -> AsyncIterator[ExtractionService]:
    service = ExtractionService(store, RulesExtractor(), "ok")
    yield service
    await service.close()


FILLERS = [
    "The printer on floor two jams",
    "Lunch was a tuna sandwich",
    "It rained all afternoon",
    "The bus was late again",
]


@pytest.mark.neo4j
async def test_the_second_pass_reaches_another_sessions_memory_through_a_name_the_query_did_not_say(
    store: GraphStore, extraction: ExtractionService, graph: str
) -> None:
    told = [
        ("My sister Dana moved to Porto in March.", "2025-04-07"),
        *[(f"{text} {n}", "2025-04-14") for n, text in enumerate(FILLERS)],
        ("Dana says her flat has a balcony over the Douro.", "2025-05-19"),
        *[(f"{text} {n}", "2025-05-26") for n, text in enumerate(FILLERS)],
    ]
    memory = MemoryService(store, extraction=extraction)
    ids = [
        (await memory.remember(RememberInput(text=text, occurredAt=day, graph=graph))).id
        for text, day in told
    ]
    while await extraction.extract_pending():
        pass
    moved, balcony = ids[0], ids[1 + len(FILLERS)]
    # the join is a name extraction read (no entity given): the request names `links: all` (the
    # default walks agent-given links only: docs/recall.md, *Why `agent` by default*)
    asked = RecallInput(query="Where did my sister move to?", hops=1, limit=50, graph=graph, links="all")

    def place(result: list[str]) -> int:
        return result.index(balcony)

    bridged = await memory.recall(asked)
    plain = await MemoryService(store, recall=RecallConfig(bridge_from=0)).recall(asked)
    assert bridged.memories[0].id == plain.memories[0].id == moved
    by_id = {m.id: m for m in bridged.memories}
    plainly = {m.id: m for m in plain.memories}
    assert by_id[balcony].why.walk > plainly[balcony].why.walk  # the bridge Dana: rare, not in the query
    assert by_id[balcony].score > plainly[balcony].score
    assert place([m.id for m in bridged.memories]) <= place([m.id for m in plain.memories])
    # hops 0: no walk, no second pass
    alone = await memory.recall(asked.model_copy(update={"hops": 0}))
    assert balcony not in {m.id for m in alone.memories}
