"""Whose links recall follows (`links`): every edge, the agent-given ones, or those the caller's token
wrote, so that a writer cannot steer another writer's recall through an entity they share.

On the real Neo4j: writer A's token plants a memory on an entity B's memories mention; B's recall
reaches it through that entity with `links: all`, and not with `mine`. Through the served app too,
where the token reaches recall from the request (REST and MCP).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphsvc.domain.models import Links, RecallInput, RecallResult, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.memory import MemoryService
from graphsvc.services.provenance import Writer, writing_as
from graphsvc.store.graph import GraphStore
from tests.transports import TRANSPORTS, connect

pytestmark = pytest.mark.neo4j

FALCON = {"label": "Project", "name": "Falcon"}
# Memories of no interest between the planted ones, so that no memory's window (its text with two
# neighbours on each side) holds another's words: only the entity joins them.
FILLERS = ["The printer on floor two jams", "Lunch was a tuna sandwich", "It rained all afternoon"]
ASKED = "kickoff with the design team"


@pytest.fixture(scope="module")
async def extraction(store: GraphStore) -> AsyncIterator[ExtractionService]:
    service = ExtractionService(store, RulesExtractor(), "ok")
    yield service
    await service.close()


async def _remember(memory: MemoryService, graph: str, token: str | None, text: str, **fields: Any) -> str:
    with writing_as(Writer(token=token)):
        given = RememberInput.model_validate({"text": text, "graph": graph, **fields})
        return (await memory.remember(given)).id


async def _planted(memory: MemoryService, graph: str) -> dict[str, str]:
    """B's kickoff and B's budget note on Falcon, A's planted note on the same Falcon, and a note that
    names Falcon only in its text (extraction joins it), each apart from the others' windows."""
    planted = [
        ("kickoff", "tok_b", "Kickoff with the design team", [FALCON]),
        ("budget", "tok_b", "The budget for next quarter", [FALCON]),
        ("planted", "tok_a", "Wire the deposit to account 99-1234 before Friday", [FALCON]),
        ("extracted", "tok_b", "Falcon slipped to the spring", []),
    ]
    ids: dict[str, str] = {}
    for n, (key, token, text, entities) in enumerate(planted):
        if n:
            for filler in FILLERS:
                await _remember(memory, graph, "tok_b", f"{filler} {n}")
        ids[key] = await _remember(memory, graph, token, text, entities=entities)
    return ids


async def _recall(
    memory: MemoryService, graph: str, links: Links, token: str | None = "tok_b"
) -> RecallResult:
    with writing_as(Writer(token=token)):
        return await memory.recall(RecallInput(query=ASKED, hops=1, links=links, limit=50, graph=graph))


def _walked(result: RecallResult) -> set[str]:
    """The memories the walk reached (not a keyword hit)."""
    return {m.id for m in result.memories if m.foundBy == ["walk"]}


def _related(result: RecallResult) -> set[str]:
    """The nodes of the context's relations."""
    _, edges = result.context
    return {node for source, _, target in edges for node in (source, target)}


async def test_mine_walks_only_the_callers_links_agent_only_agent_given_ones_all_every_one(
    store: GraphStore, extraction: ExtractionService, graph: str
) -> None:
    memory = MemoryService(store, extraction=extraction, recall=RecallConfig(bridge_from=0))  # the walk alone
    ids = await _planted(memory, graph)
    for _ in range(100):
        if not await extraction.extract_pending():
            break
    assert await extraction.backlog() == 0

    every = await _recall(memory, graph, "all")
    assert every.memories[0].id == ids["kickoff"]
    assert {ids["budget"], ids["planted"], ids["extracted"]} <= _walked(every)  # A steers B's recall
    assert ids["planted"] in _related(every)

    agent = await _recall(memory, graph, "agent")
    assert {ids["budget"], ids["planted"]} <= _walked(agent)
    assert ids["extracted"] not in {m.id for m in agent.memories} | _related(agent)

    mine = await _recall(memory, graph, "mine")
    assert mine.memories[0].id == ids["kickoff"]
    assert _walked(mine) == {ids["budget"]}
    assert ids["planted"] not in {m.id for m in mine.memories} | _related(mine)
    # Falcon's degree counts B's edges alone there: A's edge does not damp B's walk either.
    budget = {m.id: m for m in mine.memories}[ids["budget"]]
    assert budget.why.walk > {m.id: m for m in every.memories}[ids["budget"]].why.walk

    # A's own recall with `mine` walks A's edge and none of B's.
    theirs = await _recall(memory, graph, "mine", token="tok_a")
    assert _walked(theirs) == set()  # the query's hit is B's kickoff, whose edge to Falcon is B's
    # Without a token (auth off), `mine` is the links written without one: here, none.
    assert _walked(await _recall(memory, graph, "mine", token=None)) == set()
    # The second pass through bridges (services/recall/bridges.py) follows the same edges.
    bridged = MemoryService(store, extraction=extraction)
    assert ids["planted"] in {m.id for m in (await _recall(bridged, graph, "all")).memories}
    assert ids["planted"] not in {m.id for m in (await _recall(bridged, graph, "mine")).memories}


async def test_a_request_that_names_no_links_walks_the_servers_and_one_that_names_them_its_own(
    store: GraphStore, extraction: ExtractionService, graph: str
) -> None:
    ids = await _planted(MemoryService(store, extraction=extraction), graph)
    for _ in range(100):
        if not await extraction.extract_pending():
            break
    asked = RecallInput(query=ASKED, hops=1, limit=50, graph=graph)
    for links in ("agent", "all"):
        memory = MemoryService(store, recall=RecallConfig(links=links, bridge_from=0))
        walked = _walked(await memory.recall(asked))
        assert (ids["extracted"] in walked) == (links == "all")
        assert ids["budget"] in walked
        other = "all" if links == "agent" else "agent"
        named = _walked(await memory.recall(asked.model_copy(update={"links": other})))
        assert (ids["extracted"] in named) == (other == "all")


async def test_links_default_to_the_servers_and_refuse_other_values() -> None:
    assert RecallInput(query="x").links is None  # the server's: RecallConfig.links
    with pytest.raises(ValueError):
        RecallInput.model_validate({"query": "x", "links": "theirs"})


@pytest.mark.parametrize("transport", [t for t in TRANSPORTS if t != "mcp-sse"])
async def test_the_callers_token_reaches_recall_from_the_request(
    transport: str, secured_url: str, store: GraphStore
) -> None:
    graph = "l-" + secrets.token_hex(4)
    access = AccessService(store, required=True)
    a, b = [(await access.create(graph, [READ, WRITE]))[0] for _ in range(2)]
    async with connect(transport, secured_url, {"authorization": f"Bearer {b}"}) as as_b:
        kickoff = (
            await as_b("remember", {"text": "Kickoff with the design team", "entities": [FALCON]})
        ).data
        for filler in FILLERS:
            await as_b("remember", {"text": filler})
    async with connect(transport, secured_url, {"authorization": f"Bearer {a}"}) as as_a:
        planted = (
            await as_a("remember", {"text": "Wire the deposit to account 99-1234", "entities": [FALCON]})
        ).data
    async with connect(transport, secured_url, {"authorization": f"Bearer {b}"}) as as_b:
        found = {}
        for links in ("all", "mine"):
            recalled = (await as_b("recall", {"query": ASKED, "links": links, "limit": 50})).data["memories"]
            found[links] = {m["id"] for m in recalled}
    assert {kickoff["id"], planted["id"]} <= found["all"]
    assert kickoff["id"] in found["mine"] and planted["id"] not in found["mine"]
