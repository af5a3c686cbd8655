"""Read your writes (issue 44): a memory is found by meaning, and joined to the graph, when remember answers.

The real model (bge-small-en-v1.5) and the rules extractor on a real Neo4j. An interactive remember,
store_event and a small batch write the memory's vector and extracted links in their own transaction,
as the workers would have written them; the receipt says `meaning` / `links` "ready", "pending" (past
the budget, or an extractor that stays in the background: left to the workers, first in line) or
"off". A transaction run again neither encodes again nor loses the vector; a duplicate's receipt says
how its memory stands. Bulk writes go to the backlog. Recall says how many of the graph's memories it
could not weigh by meaning (`pending`)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

from graphsvc.domain.locus import StoreEventInput
from graphsvc.domain.models import EntityIn, RecallInput, RememberInput
from graphsvc.domain.render import recall_text
from graphsvc.encoder.onnx import OnnxEncoder
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.metrics import Metrics
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.services.test_memory_service import _LostAck

pytestmark = pytest.mark.neo4j
RELEASE_WITHIN_S = 60  # a held encoder waits at most this for the test to let it go
# A memory asked about in other words, among memories that share a common word with the question
# (keywords alone find only them) and others (tests/paraphrase.py's pair, its distractors and more).
ANSWER = "Dana adopted a small terrier from the animal shelter last spring."
QUESTION = "Who got a new puppy?"
DISTRACTORS = [
    "The car needs new tyres before winter.",
    "The new intern starts on Monday.",
    "Ravi repainted the kitchen cabinets green.",
    "We planted tomatoes and basil in the garden.",
    "The wifi password changed after the router reset.",
]


class NotCheap(RulesExtractor):
    """The rules, as an extractor too slow to read in a write would be (spaCy): read in the background.
    (A class of the module: the extractor's process receives it pickled.)"""

    cheap = False


class Counting:
    """The real encoder, counting the texts it encodes, and (while `held`) encoding none until
    `release()`: a write that waits for it runs out of its budget."""

    def __init__(self, encoder: OnnxEncoder) -> None:
        self._encoder = encoder
        self.dimensions, self.name, self.model = encoder.dimensions, encoder.name, encoder.model
        self.texts: list[str] = []
        self._go = threading.Event()
        self._go.set()

    def hold(self) -> None:
        self._go.clear()

    def release(self) -> None:
        self._go.set()

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        assert self._go.wait(RELEASE_WITHIN_S), "the test never released the encoder"
        self.texts += texts
        return self._encoder.encode(texts)

    def encode_query(self, text: str) -> list[float]:
        return self._encoder.encode_query(text)

    def __reduce__(self) -> tuple[Any, ...]:
        """The worker's process receives the real encoder (an Event does not cross processes)."""
        return (_same, (self._encoder,))


def _same(encoder: OnnxEncoder) -> OnnxEncoder:
    return encoder


@pytest.fixture(scope="module")
def encoder() -> Iterator[Counting]:
    counting = Counting(OnnxEncoder.load())
    yield counting
    counting.release()


@pytest.fixture(scope="module")
def embeddings(store: GraphStore, encoder: Counting) -> EmbeddingService:
    return EmbeddingService(store, encoder, "ok")


@pytest.fixture(scope="module")
async def extraction(store: GraphStore) -> AsyncIterator[ExtractionService]:
    service = ExtractionService(store, RulesExtractor(), "ok")
    yield service
    await service.close()


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
async def memory(
    store: GraphStore, embeddings: EmbeddingService, extraction: ExtractionService, metrics: Metrics
) -> AsyncIterator[MemoryService]:
    """Meaning and links at write (the default budget), reporting to `metrics`."""
    made = MemoryService(store, embeddings=embeddings, extraction=extraction, freshness=metrics)
    yield made
    await made.close()


@pytest.fixture
def waiting(store: GraphStore, embeddings: EmbeddingService, extraction: ExtractionService) -> MemoryService:
    """Memories whose vectors and links wait for the workers (the write path before issue 44)."""
    return MemoryService(store, embeddings=embeddings, extraction=extraction, write_budget_s=0)


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def _state(store: GraphStore, graph: str, memory_id: str) -> dict[str, Any]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph, id: $id}) "
        "RETURN m:Unembedded AS unembedded, m:Unextracted AS unextracted, m.embeddingModel AS model, "
        "m.embedding IS NOT NULL AS vector, m.extractedWith AS extractedWith, m.embedFirst AS embedFirst, "
        "m.extractFirst AS extractFirst, m.embedClaim AS embedClaim, m.extractClaim AS extractClaim, "
        "[(m)-[r:MENTIONS]->(e) | [e.id, r.source, r.extractor]] AS mentions",
        graph=graph,
        id=memory_id,
        database_=store._database,
    )
    [row] = records
    return dict(row) | {"mentions": sorted(map(tuple, row["mentions"]))}


async def _drain(embeddings: EmbeddingService, extraction: ExtractionService) -> None:
    """Run both workers until their backlogs are empty (bounded: each call stores a batch or ends it)."""
    for _ in range(1000):
        if not await embeddings.embed_pending() + await extraction.extract_pending():
            return
    raise AssertionError("the backlogs did not empty")


async def _ranked(memory: MemoryService, graph: str, query: str) -> list[str]:
    return [m.id for m in (await memory.recall(RecallInput(query=query, graph=graph, limit=5))).memories]


async def test_a_remembered_memory_is_found_by_meaning_and_joined_to_the_graph_when_remember_answers(
    memory: MemoryService, encoder: Counting, store: GraphStore, metrics: Metrics, graph: str
) -> None:
    for text in DISTRACTORS:
        await memory.remember(RememberInput(text=text, graph=graph))
    answered = await memory.remember(RememberInput(text=ANSWER, graph=graph))
    assert (answered.meaning, answered.links) == ("ready", "ready")
    assert (await _ranked(memory, graph, QUESTION))[0] == answered.id
    state = await _state(store, graph, answered.id)
    assert state["vector"] and state["model"] == encoder.model and not state["unembedded"]
    assert state["extractedWith"] == RulesExtractor.name and not state["unextracted"]
    assert ("Name:Dana", "extracted", RulesExtractor.name) in state["mentions"]
    assert state["embedClaim"] is state["extractClaim"] is state["embedFirst"] is None
    assert _sample(metrics, "graphsvc_searchable_seconds_count", path="write") == len(DISTRACTORS) + 1
    assert _sample(metrics, "graphsvc_pending_receipts_total", part="meaning") == 0


async def test_links_read_at_write_are_those_the_worker_would_write(
    memory: MemoryService,
    waiting: MemoryService,
    store: GraphStore,
    embeddings: EmbeddingService,
    extraction: ExtractionService,
    graph: str,
) -> None:
    # The agent names the church; the text names it too, and a choir: the agent's entity is the node.
    church = [EntityIn(label="Church", name="St Anne's")]
    text = "Choir practice at St. Anne's moved to Tuesday; Maria leads the winter concert."
    now = await memory.remember(RememberInput(text=text, entities=church, graph=graph))
    waited = await waiting.remember(RememberInput(text=text, entities=church, graph=graph + "-worker"))
    assert (waited.meaning, waited.links) == ("pending", "pending")
    await _drain(embeddings, extraction)
    written, worked = await _state(store, graph, now.id), await _state(store, graph + "-worker", waited.id)
    assert written["mentions"] == worked["mentions"]
    assert ("Church:St Anne's", "agent", None) in written["mentions"]
    assert ("Topic:winter concert", "extracted", RulesExtractor.name) in written["mentions"]


async def test_past_its_budget_a_memory_goes_to_the_backlog_first_in_line_and_the_receipt_says_pending(
    store: GraphStore,
    embeddings: EmbeddingService,
    extraction: ExtractionService,
    encoder: Counting,
    graph: str,
) -> None:
    metrics = Metrics()
    hurried = MemoryService(
        store, embeddings=embeddings, extraction=extraction, write_budget_s=0.05, freshness=metrics
    )
    for text in DISTRACTORS:
        await hurried.remember(RememberInput(text=text, graph=graph))
    encoder.hold()
    try:
        answered = await hurried.remember(RememberInput(text=ANSWER, graph=graph))
    finally:
        encoder.release()
    assert (answered.meaning, answered.links) == ("pending", "ready")
    state = await _state(store, graph, answered.id)
    assert state["unembedded"] and state["embedFirst"] is True and not state["vector"]
    assert state["embedClaim"] is None and state["extractedWith"] == RulesExtractor.name
    assert _sample(metrics, "graphsvc_pending_receipts_total", part="meaning") == 1
    assert _sample(metrics, "graphsvc_searchable_seconds_count", path="write") == len(DISTRACTORS)
    recalled = await hurried.recall(RecallInput(query=QUESTION, graph=graph))
    assert recalled.pending == 1 and answered.id not in [m.id for m in recalled.memories]
    assert recall_text(recalled).splitlines()[-1] == (
        "(1 memory of this graph not weighed by meaning yet: still being embedded)"
    )
    await _drain(embeddings, extraction)
    assert (await _state(store, graph, answered.id))["vector"]
    again = await hurried.recall(RecallInput(query=QUESTION, graph=graph))
    assert again.pending is None and "pending" not in again.model_dump()
    assert [m.id for m in again.memories][:1] == [answered.id]
    await hurried.close()


async def test_an_extractor_that_is_not_cheap_stays_in_the_background_and_links_say_pending(
    store: GraphStore, embeddings: EmbeddingService, graph: str
) -> None:
    careful = ExtractionService(store, NotCheap(), "ok")
    slow = MemoryService(store, embeddings=embeddings, extraction=careful)
    answered = await slow.remember(RememberInput(text="Alice Smith moved to Paris.", graph=graph))
    assert (answered.meaning, answered.links) == ("ready", "pending")
    state = await _state(store, graph, answered.id)
    assert state["unextracted"] and state["extractFirst"] is True and state["mentions"] == []
    for _ in range(1000):  # bounded: each call reads a batch or ends it
        if not await careful.extract_pending():
            break
    state = await _state(store, graph, answered.id)
    assert ("Name:Paris", "extracted", RulesExtractor.name) in state["mentions"]
    await careful.close()
    await slow.close()


async def test_a_transaction_run_again_neither_encodes_again_nor_loses_the_vector(
    store: GraphStore,
    embeddings: EmbeddingService,
    extraction: ExtractionService,
    encoder: Counting,
    graph: str,
) -> None:
    retried = MemoryService(_LostAck(store, rerun=True), embeddings=embeddings, extraction=extraction)  # type: ignore[arg-type]
    text = "The boiler in the cellar was serviced on Monday."
    answered = await retried.remember(RememberInput(text=text, graph=graph))
    assert (answered.meaning, answered.links) == ("ready", "ready")  # its receipt, from the stored memory
    assert encoder.texts.count(text) == 1
    state = await _state(store, graph, answered.id)
    assert state["vector"] and not state["unembedded"] and state["extractedWith"] == RulesExtractor.name


async def test_a_duplicates_receipt_says_how_its_memory_stands(
    memory: MemoryService,
    waiting: MemoryService,
    store: GraphStore,
    embeddings: EmbeddingService,
    extraction: ExtractionService,
    graph: str,
) -> None:
    first = await waiting.remember(RememberInput(text="Pay the plumber on the first.", graph=graph))
    again = await memory.remember(RememberInput(text="Pay the plumber on the first.", graph=graph))
    assert again.id == first.id and (again.meaning, again.links) == ("pending", "pending")
    await _drain(embeddings, extraction)
    third = await memory.remember(RememberInput(text="Pay the plumber on the first.", graph=graph))
    assert third.id == first.id and (third.meaning, third.links) == ("ready", "ready")
    off = await MemoryService(store).remember(
        RememberInput(text="Pay the plumber on the first.", graph=graph)
    )
    assert off.id == first.id and (off.meaning, off.links) == ("off", "off")


async def test_a_small_batch_reads_its_texts_at_write_and_a_bulk_one_leaves_them_to_the_workers(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    small = [
        RememberInput(text=f"Small batch note {n} about the garden shed.", graph=graph) for n in range(3)
    ]
    receipts = await memory.remember_many(small, interactive=True)
    assert [(r.status, r.meaning, r.links) for r in receipts] == [("created", "ready", "ready")] * 3
    bulk = [RememberInput(text=f"Imported note {n} about the garden shed.", graph=graph) for n in range(3)]
    imported = await memory.remember_many(bulk)
    assert [(r.meaning, r.links) for r in imported] == [("pending", "pending")] * 3
    state = await _state(store, graph, imported[0].id or "")
    assert state["unembedded"] and state["unextracted"] and state["embedFirst"] is None
    large = [RememberInput(text=f"A large batch's note {n}.", graph=graph) for n in range(17)]
    assert {r.meaning for r in await memory.remember_many(large, interactive=True)} == {"pending"}


async def test_store_event_is_found_by_meaning_when_it_answers(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    locus = LocusService(memory, store)
    for text in DISTRACTORS:
        await memory.remember(RememberInput(text=text, graph=graph))
    stored = await locus.store_event(
        StoreEventInput.model_validate(
            {"event_kind": "observation", "payload": ANSWER, "context_id": "home:pets", "graph": graph}
        )
    )
    assert (stored.meaning, stored.extracted) == ("ready", "ready")
    assert (await _ranked(memory, graph, QUESTION))[0] == stored.event_id


async def test_with_embeddings_and_extraction_off_the_receipt_says_off_and_recall_counts_nothing(
    store: GraphStore, graph: str
) -> None:
    plain = MemoryService(store)
    answered = await plain.remember(RememberInput(text=ANSWER, graph=graph))
    assert (answered.meaning, answered.links) == ("off", "off")
    assert (await plain.recall(RecallInput(query="Denver", graph=graph))).pending is None
