"""The backlogs every graph shares (services/backlog.py), with the real encoder and extractor on a real
Neo4j: the workers read only memories, set aside what they cannot read without failing the rest,
claim fairly across graphs (a write's leftovers first), and say when they fall behind."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphsvc.app import Services
from graphsvc.config import AuthSettings, EmbeddingsSettings, Settings
from graphsvc.domain.models import RememberInput
from graphsvc.encoder.onnx import OnnxEncoder
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.metrics import Metrics
from graphsvc.services.backlog import OTHERS
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def encoder() -> OnnxEncoder:
    return OnnxEncoder.load()


@pytest.fixture
async def workers(
    store: GraphStore, encoder: OnnxEncoder
) -> AsyncIterator[tuple[EmbeddingService, ExtractionService]]:
    """Both workers, fresh (their own round and counts), with nothing left in either backlog."""
    embeddings = EmbeddingService(store, encoder, "ok")
    extraction = ExtractionService(store, RulesExtractor(), "ok")
    await _drain(embeddings, extraction)
    yield embeddings, extraction
    await extraction.close()


async def _drain(embeddings: EmbeddingService, extraction: ExtractionService) -> None:
    """Both workers until neither claims anything (bounded: each call takes a batch or ends)."""
    for _ in range(1000):
        if not (await embeddings.embed_pending() + await extraction.extract_pending()):
            return
    raise AssertionError("the backlogs did not empty")


async def _cypher(store: GraphStore, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await store._driver.execute_query(query, params, database_=store._database)  # type: ignore[arg-type]
    return [r.data() for r in records]


async def _nodes(store: GraphStore, graph: str) -> dict[str, dict[str, Any]]:
    rows = await _cypher(
        store,
        "MATCH (n:Memory|Entity {graph: $graph}) RETURN n.id AS id, labels(n) AS labels, n.embedding IS NOT NULL AS embedded, "
        "n.extractedWith AS extractedWith",
        graph=graph,
    )
    return {r["id"]: r for r in rows}


async def test_planted_backlog_labels_and_unreadable_memories_never_stall_another_graphs_memories(
    store: GraphStore,
    workers: tuple[EmbeddingService, ExtractionService],
    graph: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    embeddings, extraction = workers
    other = f"{graph}-other"
    memory = MemoryService(store, embeddings=embeddings, extraction=extraction)
    mine = [RememberInput(text=f"Alice met Bob in Lisbon on day {n}", graph=other) for n in range(6)]
    ids = [receipt.id for receipt in await memory.remember_many(mine)]
    # As a tenant could plant them before the labels were reserved, in a database kept since: entities
    # carrying the backlogs' labels; and memories no model reads (a number for a text, no text at all).
    await _cypher(
        store,
        "MERGE (:GraphState {name: $graph}) WITH 1 AS one UNWIND range(1, 3) AS n "
        "CREATE (:Entity:Unembedded:Unextracted {graph: $graph, id: 'Unembedded:x' + n, label: 'Unembedded', "
        "name: 'x' + n})",
        graph=graph,
    )
    await _cypher(
        store,
        "CREATE (:Memory:Unembedded:Unextracted {graph: $graph, id: 'mem_number', text: 42, "
        "createdAt: '2026-12-01T00:00:00.000Z'}), (:Memory:Unembedded:Unextracted {graph: $graph, id: 'mem_none'})",
        graph=graph,
    )
    caplog.set_level(logging.WARNING, "graphsvc")
    await _drain(embeddings, extraction)
    theirs = await _nodes(store, other)
    assert all(theirs[i]["embedded"] and theirs[i]["extractedWith"] == RulesExtractor().name for i in ids)
    planted = await _nodes(store, graph)
    for n in (1, 2, 3):  # never read, never changed
        entity = planted[f"Unembedded:x{n}"]
        assert set(entity["labels"]) == {"Entity", "Unembedded", "Unextracted"} and not entity["embedded"]
    for unreadable in ("mem_number", "mem_none"):
        assert set(planted[unreadable]["labels"]) == {"Memory", "Unembeddable", "Unextractable"}
    assert (embeddings.queue.set_aside, extraction.queue.set_aside) == (2, 2)
    assert (await embeddings.queue.state()).set_aside >= 2 and (await extraction.queue.state()).set_aside >= 2
    logged = [r for r in caplog.records if "mem_number" in r.getMessage()]
    assert len(logged) == 2  # once by each worker
    await _drain(embeddings, extraction)  # set aside: never claimed again
    assert len([r for r in caplog.records if "mem_number" in r.getMessage()]) == 2


async def test_another_graphs_new_memories_wait_one_claim_behind_a_large_backlog_and_leftovers_go_first(
    store: GraphStore, workers: tuple[EmbeddingService, ExtractionService], graph: str
) -> None:
    embeddings, extraction = workers
    bulk, small = f"{graph}-a", f"{graph}-b"
    memory = MemoryService(store, embeddings=embeddings, extraction=extraction)
    await memory.remember_many([RememberInput(text=f"imported line {n}", graph=bulk) for n in range(60)])
    [late] = await memory.remember_many([RememberInput(text="the import's last line", graph=bulk)])
    # a write that could not embed its memory in time leaves it so (services/embeddings.py)
    await _cypher(
        store, "MATCH (m:Memory {graph: $graph, id: $id}) SET m.embedFirst = true", graph=bulk, id=late.id
    )
    reqs = [RememberInput(text=f"new {n}", graph=small) for n in range(3)]
    new = [r.id for r in await memory.remember_many(reqs)]
    assert await embeddings.embed_pending(limit=8) >= 1
    assert (await _nodes(store, bulk))[late.id]["embedded"]  # the leftover first, wherever the round is
    for _ in range(100):  # the round goes on (over every graph of the database) until it reaches them
        smalls = await _nodes(store, small)
        if all(smalls[i]["embedded"] for i in new):
            break
        assert await embeddings.embed_pending(limit=8)
    embedded = sum(n["embedded"] for n in (await _nodes(store, bulk)).values())
    assert embedded <= 1 + 8  # the leftover, and at most one claim of the 60 before the other graph's
    assert (await embeddings.queue.state(top=10)).graphs[graph_key(bulk)] == 61 - embedded
    await _drain(embeddings, extraction)


async def test_health_names_a_worker_behind_once_what_it_claims_waited_past_its_setting(
    settings: Settings, store: GraphStore, graph: str
) -> None:
    served = settings.model_copy(
        update={
            "auth": AuthSettings(required=False),
            "embeddings": EmbeddingsSettings(enabled=True, behind_s=600),
        }
    )
    services = Services.build(served)
    await services.start()
    try:
        await _drain(services.embeddings, services.extraction)
        await services.memory.remember(RememberInput(text="written just now", graph=graph))
        await _drain(services.embeddings, services.extraction)
        health = await services.health()
        assert health["behind"] == [] and health["workers"]["embeddings"]["behind"] is False
        assert 0 <= health["workers"]["embeddings"]["waitS"] < 600
        # two memories written an hour ago that wait still (as memories stuck behind an import would)
        await services.memory.remember(RememberInput(text="written long ago", graph=graph))
        hour_ago = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 3600))
        await _cypher(
            store,
            "MATCH (m:Memory {graph: $graph}) SET m:Unembedded, m.createdAt = $at",
            graph=graph,
            at=hour_ago,
        )
        assert await services.embeddings.embed_pending(limit=1) == 1
        health = await services.health()
        assert health["behind"] == ["embeddings"] and health["status"] == "ok"
        assert health["workers"]["embeddings"]["behind"] is True
        assert health["workers"]["embeddings"]["waitS"] >= 3600
        metrics = Metrics()
        metrics.waits["embeddings"] = services.embeddings.queue.wait_s
        metrics.queues["embeddings"] = services.embeddings.queue.state
        scraped = (await metrics.scrape()).decode()
        assert 'graphsvc_worker_wait_seconds{worker="embeddings"} ' in scraped
        assert f'graphsvc_graph_backlog{{graph="{graph_key(graph)}",worker="embeddings"}} 1.0' in scraped
        assert f'graphsvc_graph_backlog{{graph="{OTHERS}",worker="embeddings"}} ' in scraped
        assert 'graphsvc_set_aside{worker="embeddings"} ' in scraped
        await _drain(services.embeddings, services.extraction)  # caught up: no longer behind
        assert (await services.health())["behind"] == []
    finally:
        await services.close()
