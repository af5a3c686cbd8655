"""The graph that builds itself: names and key phrases read from the text, off the write path.

Unit tests of the bounds and the normalised names need no Neo4j; the worker's tests run on the real
Neo4j: extracted MENTIONS with their provenance, names meeting the agent's entities, memories of
different sessions joined through what they name, hostile texts kept to their graph.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import httpx
import pytest

from graphsvc.app import Services
from graphsvc.config import AuthSettings, ExtractionSettings, Settings
from graphsvc.domain.extraction import (
    LABELS,
    MAX_MENTIONS,
    MAX_NAME,
    MAX_NAMED,
    MAX_TOPICS,
    Mention,
    bounded,
    mention,
    normalise,
)
from graphsvc.domain.models import (
    EntityIn,
    ExploreInput,
    GraphInput,
    IdInput,
    LinkInput,
    RecallInput,
    RememberInput,
)
from graphsvc.extractor.rules import VERSION, RulesExtractor
from graphsvc.extractor.spacy_ner import (
    MODEL_SHA256,
    ExtractorUnavailable,
    SpacyExtractor,
    folder_digest,
    model_folder,
)
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.memory import MemoryService
from graphsvc.services.provenance import Writer, writing_as
from graphsvc.store.graph import GraphStore
from tests.conftest import _serve

WORKER_WITHIN_S = 120  # a loaded machine: the app's worker reads a memory well within it

# ---- names and bounds (no Neo4j) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("St. Anne's", "st anne"),
        ("ST. ANNE", "St Anne"),
        ("the support groups", "Support Group"),
        ("Caroline\u2019s", "caroline"),
        ("  my   grandmother's  pierogi ", "grandmother pierogi"),
        ("ﬁsh tacos", "fish taco"),  # a compatibility ligature
        ("parties", "party"),
        ("classes", "class"),
    ],
)
def test_names_that_differ_in_case_possessive_plural_article_or_spacing_meet(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("MON/USDC-A", "MON/USDC-B"), ("Paris", "Parish"), ("bus", "bu"), ("news", "new"), ("USDC", "USDT")],
)
def test_names_that_differ_in_substance_stay_apart(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def test_identifiers_keep_their_form_when_normalised() -> None:
    assert normalise("Pool MON/USDC-A's") == "pool mon/usdc-a"
    assert normalise("v1.2.3s") == "v1.2.3s"


def test_bounds_keep_known_labels_short_names_and_a_fixed_number_per_memory() -> None:
    named = [m for n in range(30) if (m := mention("Person", f"Person {n}"))]
    topics = [m for n in range(30) if (m := mention("Topic", f"topic {n}"))]
    odd = [Mention("Weapon", "Sword", "sword"), Mention("Person", "x" * (MAX_NAME + 1), "x" * (MAX_NAME + 1))]
    kept = bounded([*topics, *odd, *named])
    assert len(kept) == MAX_MENTIONS
    assert [m.named for m in kept] == [True] * MAX_NAMED + [False] * MAX_TOPICS
    assert kept[0].name == "Person 0" and kept[MAX_NAMED].name == "topic 0"


def test_a_name_and_a_topic_of_the_same_norm_are_one_mention_the_name() -> None:
    kept = bounded([Mention("Topic", "choir", "choir"), Mention("Organization", "Choir", "choir")])
    assert kept == [Mention("Organization", "Choir", "choir")]


def test_a_name_of_punctuation_alone_is_no_mention() -> None:
    assert mention("Name", "'' !! …") is None
    assert bounded([Mention("Name", "--", "--")]) == []


@pytest.mark.parametrize(
    "text",
    [
        "Zzq Xkcd Qwv " * 300,  # 3,900 characters of capitalised junk
        "😀🎉 " * 1000,
        "Привет, Москва! Я люблю Санкт-Петербург. 東京タワーに行きました。" * 20,
        "X" * 4000,
        "MATCH (n) DETACH DELETE n; CALL apoc.do.it() // Entity:Memory {graph: 'other'}",
    ],
)
def test_rules_keep_any_text_within_the_bounds(text: str) -> None:
    [found] = RulesExtractor().extract([text[:4000]])
    assert len([m for m in found if m.named]) <= MAX_NAMED and len(found) <= MAX_MENTIONS
    assert all(len(m.name) <= MAX_NAME and m.norm and m.label in {"Name", "Topic"} for m in found)


def test_rules_find_a_speakers_name_a_place_and_a_topic() -> None:
    [found] = RulesExtractor().extract(
        ["Caroline: I went to the LGBTQ support group at St. Anne's yesterday"]
    )
    names = {(m.label, m.name) for m in found}
    assert {("Name", "Caroline"), ("Name", "St. Anne"), ("Topic", "support group")} <= names
    assert not {n for _, n in names} & {"I", "Yesterday", "yesterday"}


def test_extraction_is_deterministic_and_does_not_depend_on_the_texts_beside_it() -> None:
    texts = ["Melanie painted a sunset at Lake Tahoe.", "Bought 3 ETH on Uniswap", "Melanie: hi!"]
    extractor = RulesExtractor()
    assert extractor.extract(texts) == [extractor.extract([t])[0] for t in texts] == extractor.extract(texts)


# ---- the worker on Neo4j -------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def extraction(store: GraphStore) -> AsyncIterator[ExtractionService]:
    service = ExtractionService(store, RulesExtractor(), "ok")
    yield service
    await service.close()


@pytest.fixture(scope="module")
def reading(store: GraphStore, extraction: ExtractionService) -> MemoryService:
    """Memories that wait for the extraction worker (a write's own links: tests/test_at_write.py)."""
    return MemoryService(store, extraction=extraction, write_budget_s=0)


class NamesOnly(RulesExtractor):
    """A new version of the rules that keeps names only (a class of the module: the extractor's process
    receives it pickled)."""

    name = "rules/999"

    def extract_one(self, text: str) -> list[Mention]:
        return [m for m in super().extract_one(text) if m.named]


async def _drain(extraction: ExtractionService) -> None:
    """Run the worker until the backlog is empty (bounded: every call stores a batch or ends it)."""
    for _ in range(1000):
        if not await extraction.extract_pending():
            return
    raise AssertionError("the backlog did not empty")


async def _mentions(store: GraphStore, graph: str, memory_id: str) -> set[tuple[str, str | None, str | None]]:
    """(entity id, source, extractor) of each MENTIONS edge of the memory."""
    records, _, _ = await store._driver.execute_query(
        "MATCH (:Memory {graph: $graph, id: $id})-[r:MENTIONS]->(e:Entity) "
        "RETURN e.id AS id, r.source AS source, r.extractor AS extractor",
        graph=graph,
        id=memory_id,
        database_=store._database,
    )
    return {(r["id"], r["source"], r["extractor"]) for r in records}


async def _remember(memory: MemoryService, graph: str, text: str, **fields: object) -> str:
    return (await memory.remember(RememberInput.model_validate({"text": text, "graph": graph, **fields}))).id


@pytest.mark.neo4j
async def test_remember_leaves_extraction_to_the_worker_which_marks_each_edge_extracted(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    memory_id = await _remember(reading, graph, "I joined the Tuesday choir at St. Anne's")
    assert await _mentions(store, graph, memory_id) == set()  # remember did not wait for it
    assert await extraction.backlog() >= 1
    await _drain(extraction)
    found = await _mentions(store, graph, memory_id)
    assert ("Name:St. Anne", "extracted", VERSION) in found
    assert ("Topic:tuesday choir", "extracted", VERSION) in found
    assert await extraction.backlog() == 0


@pytest.mark.neo4j
async def test_an_agents_entity_of_the_same_normalised_name_is_the_node_and_stays_as_written(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    given = await _remember(
        reading, graph, "Choir practice moved", entities=[{"label": "Church", "name": "St Anne's"}]
    )
    later = await _remember(reading, graph, "St. Anne's asked me to sing the solo at the winter concert")
    await _drain(extraction)
    assert ("Church:St Anne's", "agent", None) in await _mentions(store, graph, given)
    assert ("Church:St Anne's", "extracted", VERSION) in await _mentions(store, graph, later)
    records, _, _ = await store._driver.execute_query(
        "MATCH (e:Entity {graph: $graph, normName: 'st anne'}) RETURN e.id AS id, labels(e) AS labels, "
        "e.name AS name, e.source AS source",
        graph=graph,
        database_=store._database,
    )
    assert [(r["id"], sorted(r["labels"]), r["name"], r["source"]) for r in records] == [
        ("Church:St Anne's", ["Church", "Entity"], "St Anne's", None)
    ]


@pytest.mark.neo4j
async def test_explore_from_an_extracted_entity_reaches_the_memories_of_every_session(
    reading: MemoryService, extraction: ExtractionService, graph: str
) -> None:
    sessions = [
        ("I joined the Tuesday choir at St. Anne's", "2023-03-07"),
        ("St. Anne's asked me to sing the solo at the winter concert", "2023-03-28"),
        ("The winter concert at St. Anne's sold out", "2023-12-20"),
    ]
    ids = [await _remember(reading, graph, text, occurredAt=day) for text, day in sessions]
    await _remember(reading, graph, "Lunch was a tuna sandwich", occurredAt="2023-03-08")
    await _drain(extraction)
    walked = await reading.explore(ExploreInput(start="Name:St. Anne", maxDepth=1, graph=graph))
    assert {n.id for n in walked.nodes if n.label == "Memory"} == set(ids)
    concert = await reading.explore(ExploreInput(start="Topic:winter concert", maxDepth=1, graph=graph))
    assert {n.id for n in concert.nodes if n.label == "Memory"} == set(ids[1:])


@pytest.mark.neo4j
async def test_agent_given_edges_carry_their_source_and_the_token_that_wrote_them(
    reading: MemoryService, store: GraphStore, graph: str
) -> None:
    with writing_as(Writer(token="tok_a")):
        memory_id = await _remember(
            reading,
            graph,
            "Alice avoids pool X",
            entities=[{"label": "Person", "name": "Alice"}, {"label": "Pool", "name": "X"}],
            relations=[{"from": "Alice", "type": "AVOIDS", "to": "X"}],
        )
    with writing_as(Writer(token="tok_b")):
        await reading.link(
            LinkInput(
                from_=EntityIn(label="Person", name="Alice"),
                type="TRUSTS",
                to=EntityIn(label="Person", name="Bob"),
                graph=graph,
            )
        )
    assert await _mentions(store, graph, memory_id) == {
        ("Person:Alice", "agent", None),
        ("Pool:X", "agent", None),
    }
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph})-[r]->(:Entity) RETURN r.writerToken AS token "
        "UNION ALL MATCH (:Entity {graph: $graph})-[r]->(:Entity) RETURN r.source + '/' + r.writerToken AS token",
        graph=graph,
        database_=store._database,
    )
    assert sorted(r["token"] for r in records) == ["agent/tok_a", "agent/tok_b", "tok_a", "tok_a"]


def test_link_props_cannot_forge_an_edges_provenance() -> None:
    for key in ("source", "writerToken", "extractor"):
        with pytest.raises(ValueError):
            LinkInput.model_validate(
                {
                    "from": {"label": "A", "name": "a"},
                    "type": "R",
                    "to": {"label": "B", "name": "b"},
                    "props": {key: "x"},
                }
            )


@pytest.mark.neo4j
async def test_hostile_texts_are_stored_and_extracted_within_bounds_touching_only_their_graph(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    other = graph + "-other"
    await _remember(reading, other, "Zzq Xkcd lives in the other graph")
    await _drain(extraction)
    texts = [
        ("Zzq Xkcd Qwv " * 300)[:4000],
        "😀🎉 " * 1000,
        "Привет, Москва! Я люблю Санкт-Петербург. 東京タワーに行きました。" * 20,
        "N" * 4000,
        "MATCH (n) DETACH DELETE n; CALL apoc.do.it() // (:Entity {graph: '" + other + "'})-[:MENTIONS]->()",
    ]
    ids = [await _remember(reading, graph, text) for text in texts]
    before = await _graph_size(store, other)
    await _drain(extraction)
    for memory_id in ids:
        found = await _mentions(store, graph, memory_id)
        assert len(found) <= MAX_MENTIONS and all(source == "extracted" for _, source, _ in found)
    assert await _graph_size(store, other) == before
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph})-[:MENTIONS]->(e) WHERE e.graph <> $graph RETURN count(*) AS n",
        graph=graph,
        database_=store._database,
    )
    assert records[0]["n"] == 0


async def _graph_size(store: GraphStore, graph: str) -> tuple[int, int]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (n {graph: $graph}) RETURN count(n) AS nodes, COUNT { MATCH ({graph: $graph})-[r]-() RETURN r } AS edges",
        graph=graph,
        database_=store._database,
    )
    return records[0]["nodes"], records[0]["edges"]


@pytest.mark.neo4j
async def test_forgetting_a_memory_removes_the_entities_only_it_named_and_keeps_shared_ones(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    first = await _remember(reading, graph, "We hiked to Lake Tahoe with Melanie")
    await _remember(reading, graph, "Melanie loves pottery")
    await _drain(extraction)
    await reading.forget(IdInput(id=first, graph=graph))
    records, _, _ = await store._driver.execute_query(
        "MATCH (e:Entity {graph: $graph}) RETURN collect(e.id) AS ids", graph=graph, database_=store._database
    )
    assert "Name:Melanie" in records[0]["ids"] and "Name:Lake Tahoe" not in records[0]["ids"]


@pytest.mark.neo4j
async def test_a_new_extractor_version_reads_every_memory_again_and_replaces_its_edges(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    memory_id = await _remember(reading, graph, "Caroline adopted a puppy named Biscuit")
    await _drain(extraction)

    newer = ExtractionService(store, NamesOnly(), "ok")
    await _drain(newer)  # its first step puts every memory it has not read in the backlog
    await newer.close()
    found = await _mentions(store, graph, memory_id)
    assert found and all(extractor == "rules/999" for _, _, extractor in found)
    assert not any(entity.startswith("Topic:") for entity, _, _ in found)
    await _drain(extraction)  # and back, for the tests after this one


@pytest.mark.neo4j
async def test_the_served_app_extracts_in_the_background_and_health_and_metrics_say_so(
    settings: Settings, store: GraphStore, graph: str
) -> None:
    on = ExtractionSettings(enabled=True, interval_s=0.2)
    served = settings.model_copy(update={"extraction": on, "auth": AuthSettings(required=False)})
    url = _serve(served)
    base = next(url)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as api:
            health = (await api.get("/health")).json()
            assert (health["extraction"], health["extractor"], health["extractionProblem"]) == (
                "ok",
                VERSION,
                None,
            )
            made = await api.post(
                "/v1/memories", json={"text": "Melanie painted a lake at dawn", "graph": graph}
            )
            assert made.status_code == 201, made.text
            deadline = time.monotonic() + WORKER_WITHIN_S
            while not await _mentions(store, graph, made.json()["id"]):
                assert time.monotonic() < deadline, "the worker did not extract the memory"
                await asyncio.sleep(0.2)
            # the edges are not the memory's: its receipt and hash are what remember answered
            walked = await api.post(
                "/v1/explore", json={"start": "Name:Melanie", "maxDepth": 1, "graph": graph}
            )
            assert made.json()["id"] in {n["id"] for n in walked.json()["nodes"]}
            scraped = (await api.get("/metrics")).text
            assert 'graphsvc_backlog{worker="extraction"} ' in scraped
            assert 'graphsvc_worker_failing{worker="extraction"} 0.0' in scraped
    finally:
        next(url, None)


def test_extraction_is_on_by_default_and_false_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().extraction.enabled is True
    monkeypatch.setenv("GRAPHSVC_EXTRACTION_ENABLED", "false")
    assert Settings().extraction.enabled is False


# ---- the spaCy extractor (an option: GRAPHSVC_EXTRACTION_EXTRACTOR=spacy) -------------------------


@pytest.fixture(scope="module")
def spacy_extractor() -> SpacyExtractor:
    return SpacyExtractor.load()


def test_the_spacy_extractor_reads_the_pinned_model_and_types_the_names(
    spacy_extractor: SpacyExtractor,
) -> None:
    [found] = spacy_extractor.extract(["Alice Smith moved to Paris to work for Google."])
    named = {(m.label, m.name) for m in found if m.named}
    assert named == {("Person", "Alice Smith"), ("Place", "Paris"), ("Organization", "Google")}
    assert all(m.label in LABELS for m in found)


def test_the_spacy_extractor_reads_each_text_alone(spacy_extractor: SpacyExtractor) -> None:
    texts = ["Jon opened a dance studio in Chicago.", "Gina sells clothes on Etsy.", "the kids ate lasagne"]
    assert spacy_extractor.extract(texts) == [spacy_extractor.extract([t])[0] for t in reversed(texts)][::-1]


def _copy_of_the_model(tmp_path: Path) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(model_folder(), copy)
    return copy


def test_a_missing_changed_or_damaged_spacy_model_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ExtractorUnavailable):
        SpacyExtractor.load(tmp_path / "nowhere", sha256=None)
    copy = _copy_of_the_model(tmp_path)
    assert folder_digest(copy) == MODEL_SHA256
    weights = copy / "ner" / "model"
    weights.write_bytes(weights.read_bytes()[:100_000])
    with pytest.raises(ExtractorUnavailable):
        SpacyExtractor.load(copy)  # not the pinned files
    with pytest.raises(ExtractorUnavailable):
        SpacyExtractor.load(copy, sha256=None)  # a folder of one's own that spaCy cannot read


@pytest.mark.neo4j
async def test_a_damaged_model_stores_memories_as_without_extraction_and_health_says_why(
    settings: Settings, store: GraphStore, graph: str, tmp_path: Path
) -> None:
    copy = _copy_of_the_model(tmp_path)
    (copy / "ner" / "model").write_bytes(b"not a model")
    chosen = ExtractionSettings(enabled=True, extractor="spacy", model_path=copy)
    services = Services.build(settings.model_copy(update={"extraction": chosen}))
    await services.start()
    try:
        health = await services.health()
        assert (health["extraction"], health["extractor"], health["down"]) == (
            "unavailable",
            None,
            ["extraction"],
        )
        assert health["extractionProblem"] and "extraction" not in services.workers
        made = await services.memory.remember(RememberInput(text="Melanie painted a sunset", graph=graph))
        recalled = await services.memory.recall(RecallInput(query="sunset", graph=graph))
        assert [m.id for m in recalled.memories] == [made.id]
        records, _, _ = await store._driver.execute_query(
            "MATCH (m:Memory {graph: $graph}) RETURN m:Unextracted AS waiting, COUNT { (m)-[:MENTIONS]->() } AS edges",
            graph=graph,
            database_=store._database,
        )
        assert [(r["waiting"], r["edges"]) for r in records] == [(False, 0)]
    finally:
        await services.close()


@pytest.mark.neo4j
async def test_an_extracted_memory_verifies_on_chain_its_hash_holds_only_the_authors_content(
    settings: Settings, graph: str
) -> None:
    services = Services.build(settings.model_copy(update={"extraction": ExtractionSettings(enabled=True)}))
    await services.start()
    try:
        made = await services.memory.remember(
            RememberInput(
                text="Melanie painted a sunset at Lake Tahoe with Caroline",
                entities=[EntityIn(label="Person", name="Caroline")],
                graph=graph,
            )
        )
        await _drain(services.extraction)
        assert len(await _mentions(services.store, graph, made.id)) > 1  # extracted edges beside the agent's
        anchored = await services.anchoring.anchor_now(GraphInput(graph=graph))
        assert anchored.status == "anchored", anchored
        verified = await services.anchoring.verify(IdInput(id=made.id, graph=graph))
        assert (verified.hashValid, verified.verified) == (True, True), verified
    finally:
        await services.close()


@pytest.mark.neo4j
async def test_a_relation_endpoint_named_as_an_extracted_entity_means_the_agents_entity(
    reading: MemoryService, extraction: ExtractionService, store: GraphStore, graph: str
) -> None:
    await _remember(reading, graph, "Melanie: we went camping")  # extraction makes Name:Melanie
    await _drain(extraction)
    await _remember(
        reading, graph, "Melanie likes pottery", entities=[{"label": "Person", "name": "Melanie"}]
    )
    related = await _remember(
        reading,
        graph,
        "Melanie teaches Oscar",
        entities=[{"label": "Person", "name": "Oscar"}],
        relations=[{"from": "Melanie", "type": "TEACHES", "to": "Oscar"}],
    )
    records, _, _ = await store._driver.execute_query(
        "MATCH (a:Entity {graph: $graph})-[:TEACHES]->(b) RETURN a.id AS a, b.id AS b",
        graph=graph,
        database_=store._database,
    )
    assert related and [(r["a"], r["b"]) for r in records] == [("Person:Melanie", "Person:Oscar")]
    await _drain(extraction)  # the memory that extraction joined to Name:Melanie joins the agent's
    records, _, _ = await store._driver.execute_query(
        "MATCH (e:Entity {graph: $graph, normName: 'melanie'}) RETURN e.id AS id",
        graph=graph,
        database_=store._database,
    )
    assert [r["id"] for r in records] == ["Person:Melanie"]


@pytest.mark.neo4j
async def test_a_killed_extractor_process_fails_one_step_and_the_next_starts_another(
    store: GraphStore, graph: str
) -> None:
    service = ExtractionService(store, RulesExtractor(), "ok")
    memory = MemoryService(store, extraction=service, write_budget_s=0)  # the worker reads them
    try:
        await _remember(memory, graph, "Melanie painted a lake")
        await _drain(service)
        assert service._background is not None
        os.kill(await service._background.run(os.getpid), signal.SIGKILL)
        later = await _remember(memory, graph, "Melanie sold the painting to Caroline")
        with pytest.raises(BrokenProcessPool):
            await service.extract_pending(lease_ms=1)  # its claims lapse at once
        assert await service.extract_pending(lease_ms=1) >= 1
        assert ("Name:Caroline", "extracted", VERSION) in await _mentions(store, graph, later)
    finally:
        await service.close()
