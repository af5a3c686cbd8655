"""Performance side by side, in one run on one Neo4j, at 10k / 100k (/ 1M) memories:

- recall p50/p95 through graphsvc's service layer and through MCP (streamable HTTP), against the raw
  driver running the very statements that recall ran (recorded, then replayed);
- the peer `mcp-neo4j-memory` (its own venv, in-process, `bench/peer/`) on a graph of the same size;
- bulk ingest: `remember_many` (the path of `graphsvc import`) against a raw-driver UNWIND, and the
  peer's create_entities/create_relations;
- a pyinstrument profile of the recall hot path at the largest size.

    .venv/bin/pip install -e '.[bench]'      # matplotlib, pyinstrument
    bench/peer/setup                        # the peer's venv (.venv-peer)
    .venv/bin/python bench/perf.py --sizes 10000,100000,1000000

Prints a table; writes bench/results/perf.json, perf.png and profile-recall.txt. Data: bench/dataset.py.

`--extraction` remembers with extraction on and lets the extraction worker's steps read every memory
(rules/2: names and key phrases joining memories, which recall's walk and second pass follow) before
recall is timed at each size; it prints how fast they read.

`--embeddings` measures meaning on beside keywords alone, in the same run on the same graph
(results/perf-meaning.json): per query, recall with meaning on and with keywords alone (each first in
turn), the raw replay of the on side's statements, MCP (meaning on); the vector leg (embed/nearest)
timed alone in the replay. The query is encoded by the real model, but the bulk memories get random
unit vectors, written through the worker's own claim and store statements (the model would take the
worker hours at 100k on two cores); recall's statements cost the same whatever the vectors say, up to
how the index's graph is shaped. Ingest alternates batches with meaning on and off. Then: remember p50
with the embedding worker idle against busy (a backlog encoded by the real model), and the tenant check
(a small graph's nearest 20 and recall top 10, taken on the fresh server, compared at every size beside
the large graph).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import neo4j
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset
from common import neo4j_settings, served

from graphsvc.app import Services
from graphsvc.config import EmbeddingsSettings
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.encoder.onnx import DEFAULT_MODEL, DIMENSIONS, MODEL_ID_LENGTH, MODELS, OnnxEncoder
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.index.term_fold import fold
from graphsvc.services.memory import MemoryService

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PEER_PYTHON = HERE.parent / ".venv-peer" / "bin" / "python"
GRAPH = "perf"
TENANT, TENANT_SIZE, TENANT_SEED, TENANT_QUERIES, TENANT_NEAREST = "perf-tenant", 1000, 3, 20, 20
BUSY_BACKLOG, BUSY_ROUNDS, BUSY_EACH = 3000, 4, 100
BATCH = 1000
WARMUP = 10
RAW_INGEST = """
UNWIND $rows AS row
CREATE (m:Memory {graph: $graph, id: row.id, text: row.text, tags: row.tags})
WITH m, row
UNWIND row.entities AS ent
MERGE (e:Entity {graph: $graph, id: ent.id})
  ON CREATE SET e.label = ent.label, e.name = ent.name
CREATE (m)-[:MENTIONS]->(e)
"""


class Recorder:
    """The store, noting each statement (text, parameters) a call runs so it can be replayed raw."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        self.calls.append((name, self.store.statements[name].text, params))
        return await self.store.run(name, **params)

    async def write_transaction(self, work: Any, **options: Any) -> Any:
        return await self.store.write_transaction(work, **options)


async def random_vectors(store: Any, dimensions: int, seed: int) -> int:
    """Every memory of the embedding backlog gets a random unit vector, through the worker's own
    statements (embed/claim, embed/store); returns how many."""
    import numpy as np

    from graphsvc.services.backlog import Backlog

    rng = np.random.default_rng(seed)
    stored, queue = 0, Backlog(store, "embed", "bench")
    while claimed := await queue.claim(1000, 600_000, "bench"):
        vectors = rng.standard_normal((len(claimed), dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = [
            {"graph": r["graph"], "id": r["id"], "vector": v.tolist()}
            for r, v in zip(claimed, vectors, strict=True)
        ]
        [done] = await store.run(
            "embed/store", token="bench", rows=rows, model=MODELS[DEFAULT_MODEL].sha256[:MODEL_ID_LENGTH]
        )
        stored += done["stored"]
    return stored


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "p50_ms": round(1000 * at(0.50), 2),
        "p95_ms": round(1000 * at(0.95), 2),
        "mean_ms": round(1000 * sum(ordered) / len(ordered), 2),
        "n": len(ordered),
    }


async def remember(memory: MemoryService, items: list[dict[str, Any]], graph: str = GRAPH) -> None:
    """One batch through remember_many (the `graphsvc import` path); every item must be created."""
    receipts = await memory.remember_many([RememberInput(**item, graph=graph) for item in items])
    assert all(r.status == "created" for r in receipts), receipts


async def ingest(memories: list[MemoryService], start: int, stop: int) -> list[float]:
    """Memories start..stop-1 through remember_many, BATCH at a time, the batches dealt in turn to each
    of `memories` (meaning on, keywords alone); items per second of each."""
    spent = [0.0] * len(memories)
    items = dataset.memories(stop, start=start)
    for at in range(start, stop, BATCH):
        side = (at // BATCH) % len(memories)
        started = time.perf_counter()
        await remember(memories[side], list(itertools.islice(items, BATCH)))
        spent[side] += time.perf_counter() - started
    share = (stop - start) / len(memories)
    return [share / seconds for seconds in spent]


async def ingest_side_by_side(
    memory: MemoryService, driver: neo4j.AsyncDriver, count: int
) -> dict[str, float]:
    """The first `count` memories, batch by batch, through remember_many and then through one plain
    UNWIND (no hash, no window) into a graph of its own: both meet the same server state (warm-up,
    cache, index merges). Items per second of each, leaving out the first batch (it compiles each
    side's statements on a just-started server)."""
    spent = {"graphsvc": 0.0, "raw": 0.0}
    items = dataset.memories(count)
    for at in range(count // BATCH):
        batch = list(itertools.islice(items, BATCH))
        rows = [
            {
                "id": f"raw_{at}_{i}",
                "text": m["text"],
                "tags": m["tags"],
                "entities": [{**e, "id": f"{e['label']}:{e['name']}"} for e in m["entities"]],
            }
            for i, m in enumerate(batch)
        ]
        started = time.perf_counter()
        await remember(memory, batch)
        between = time.perf_counter()
        await driver.execute_query(RAW_INGEST, rows=rows, graph=GRAPH + "-raw")
        if at:
            spent["graphsvc"] += between - started
            spent["raw"] += time.perf_counter() - between
    await forget_graph(driver, GRAPH + "-raw")
    return {side: (count - BATCH) / seconds for side, seconds in spent.items()}


async def recall_latency(
    recorder: Recorder,
    memory: MemoryService,
    driver: neo4j.AsyncDriver,
    url: str,
    queries: list[str],
    keywords_only: MemoryService | None = None,
) -> dict[str, Any]:
    """Per query: the service layer with meaning on and with keywords alone (when given), one before the
    other in turn (whichever comes first runs right after the last query's MCP call, whose server shares
    this process), then the raw replay of the on side's statements (each timed, the vector leg apart),
    then MCP (meaning on)."""
    service, raw, mcp, returned = [], [], [], []
    off: list[float] = []
    statements: dict[str, list[float]] = {}

    async def timed(side: MemoryService, query: str) -> tuple[float, Any]:
        started = time.perf_counter()
        result = await side.recall(RecallInput(query=query, graph=GRAPH))
        return time.perf_counter() - started, result

    async with Client(f"{url}/mcp") as client:
        for n, query in enumerate(queries[:WARMUP] + queries):
            warm = n < WARMUP
            off_elapsed = 0.0
            if keywords_only is not None and n % 2:
                off_elapsed, _ = await timed(keywords_only, query)
            recorder.calls = []
            elapsed, result = await timed(memory, query)
            calls = list(recorder.calls)
            if keywords_only is not None and not n % 2:
                off_elapsed, _ = await timed(keywords_only, query)
            raw_elapsed = 0.0
            for name, text, params in calls:
                started = time.perf_counter()
                await driver.execute_query(text, params, routing_=neo4j.RoutingControl.READ)
                took = time.perf_counter() - started
                raw_elapsed += took
                if not warm:
                    statements.setdefault(name, []).append(took)
            started = time.perf_counter()
            reply = await client.call_tool("recall", {"query": query, "graph": GRAPH})
            mcp_elapsed = time.perf_counter() - started
            assert not reply.is_error, reply.content
            if not warm:
                service.append(elapsed)
                raw.append(raw_elapsed)
                mcp.append(mcp_elapsed)
                if keywords_only is not None:
                    off.append(off_elapsed)
                returned.append((len(result.memories), len(result.context[0]), len(calls)))
    return {
        "service": summary(service),
        "mcp": summary(mcp),
        "raw": summary(raw),
        **({"keywords_only": summary(off)} if off else {}),
        "statements": {name: summary(times) for name, times in sorted(statements.items())},
        "mean_memories": round(sum(r[0] for r in returned) / len(returned), 1),
        "mean_context_nodes": round(sum(r[1] for r in returned) / len(returned), 1),
        "mean_statements": round(sum(r[2] for r in returned) / len(returned), 1),
    }


async def tenant_view(memory: MemoryService, embeddings: EmbeddingService) -> list[dict[str, Any]]:
    """The tenant graph's nearest TENANT_NEAREST memories and recall top 10 (ids and scores) for each
    of its queries."""
    views = []
    for query in dataset.queries(TENANT_QUERIES, TENANT_SIZE, memory_seed=TENANT_SEED):
        vector = embeddings.encode_query(query)
        assert vector is not None
        breadth = RecallConfig().vector_breadth
        nearest = await embeddings.nearest(TENANT, await vector, TENANT_NEAREST, breadth)
        top = await memory.recall(RecallInput(query=query, graph=TENANT))
        views.append(
            {"nearest": [r["id"] for r in nearest.rows], "top10": [[m.id, m.score] for m in top.memories]}
        )
    return views


async def remember_idle_and_busy(memory: MemoryService, embeddings: EmbeddingService) -> dict[str, Any]:
    """remember p50, one memory a call, with the embedding worker idle and busy in turn (BUSY_ROUNDS
    rounds of BUSY_EACH each), the worker encoding a backlog of BUSY_BACKLOG memories with the real
    model meanwhile (as the server runs it: one low-priority thread)."""
    graph = GRAPH + "-busy"
    backlog = dataset.memories(BUSY_BACKLOG, seed=17)
    for _ in range(BUSY_BACKLOG // BATCH):
        await remember(memory, list(itertools.islice(backlog, BATCH)), graph)
    items = dataset.memories(2 * BUSY_ROUNDS * BUSY_EACH, seed=19)
    idle: list[float] = []
    busy: list[float] = []
    embedded = 0
    running, paused = asyncio.Event(), asyncio.Event()

    async def work() -> None:  # the server's worker loop, paused between batches while idle is timed
        nonlocal embedded
        while True:
            if not running.is_set():
                paused.set()
                await running.wait()
                paused.clear()
            embedded += await embeddings.embed_pending()

    worker = asyncio.create_task(work())
    try:
        for _ in range(BUSY_ROUNDS):
            for times in (idle, busy):
                if times is busy:
                    running.set()
                    await asyncio.sleep(0.5)  # encoding by the first remember
                else:
                    running.clear()
                    await paused.wait()  # its batch done
                for item in itertools.islice(items, BUSY_EACH):
                    started = time.perf_counter()
                    await memory.remember(RememberInput(**item, graph=graph))
                    times.append(time.perf_counter() - started)
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
    return {"idle": summary(idle), "busy": summary(busy), "embedded_meanwhile": embedded}


async def profile(memory: MemoryService, queries: list[str]) -> str | None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        return None
    profiler = Profiler(async_mode="enabled")
    profiler.start()
    for query in queries:
        await memory.recall(RecallInput(query=query, graph=GRAPH))
    profiler.stop()
    return profiler.output_text(unicode=False, color=False)


def run_peer(settings: Any, sizes: list[int], queries: int) -> dict[str, Any] | None:
    if not PEER_PYTHON.exists():
        print(f"peer skipped: {PEER_PYTHON} missing (run bench/peer/setup)", file=sys.stderr)
        return None
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [
                str(PEER_PYTHON), "-W", "ignore", str(HERE / "peer" / "peer_bench.py"),
                "--uri", settings.neo4j.uri,
                "--password", settings.neo4j.password.get_secret_value(),
                "--sizes", ",".join(map(str, sizes)),
                "--queries", str(queries),
                "--json", out.name,
            ],
            check=True,
        )  # fmt: skip
        return json.loads(Path(out.name).read_text())


async def forget_graph(driver: neo4j.AsyncDriver, graph: str) -> None:
    async with driver.session() as session:
        await session.run(
            "MATCH (n {graph: $graph}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS",
            graph=graph,
        )
        await session.run("MATCH (s:GraphState {name: $graph}) DELETE s", graph=graph)
        await session.run("MATCH (s:GraphStats {name: $graph}) DELETE s", graph=graph)
        await session.run("MATCH (d:TermDelta {graphName: $graph}) DELETE d", graph=graph)
        await session.run(
            "MATCH (t:GraphTerm {graphName: $graph}) CALL (t) { DELETE t } IN TRANSACTIONS OF 10000 ROWS",
            graph=graph,
        )


async def measure(args: argparse.Namespace, settings: Any) -> dict[str, Any]:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.peer_from:  # the peer's figures of an earlier run on this machine (its side is unchanged)
        peer = json.loads(args.peer_from.read_text())["peer"]
    elif args.no_peer:
        peer = None
    else:
        peer = run_peer(settings, [n for n in sizes if n <= args.peer_max], args.peer_queries)
    services = Services.build(settings)
    await services.start()
    recorder = Recorder(services.store)
    embeddings = EmbeddingService(recorder, OnnxEncoder.load(), "ok") if args.embeddings else None  # type: ignore[arg-type]
    extraction = services.extraction if args.extraction else None
    memory = MemoryService(recorder, embeddings=embeddings, extraction=extraction)  # type: ignore[arg-type]
    keywords_only = MemoryService(recorder) if embeddings else None  # type: ignore[arg-type]
    neo = settings.neo4j
    driver = neo4j.AsyncGraphDatabase.driver(
        neo.uri, auth=(neo.user, neo.password.get_secret_value()), notifications_min_severity="OFF"
    )
    try:
        server = (
            await driver.execute_query("CALL dbms.components() YIELD versions RETURN versions[0] AS v")
        ).records
        for graph in (GRAPH, TENANT, GRAPH + "-busy"):
            await forget_graph(driver, graph)
        tenant: list[dict[str, Any]] | None = None
        if embeddings is not None:
            await remember(memory, list(dataset.memories(TENANT_SIZE, seed=TENANT_SEED)), TENANT)
            while await embeddings.embed_pending():  # the tenant's vectors by the model; the rest random
                pass
            await fold(services.store, TENANT)
            tenant = await tenant_view(memory, embeddings)
        results: dict[str, Any] = {
            "machine": {
                "cpus": os.cpu_count(),
                "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
                "platform": platform.platform(),
                "neo4j_heap": args.heap,
                "neo4j_pagecache": args.pagecache,
            },
            "versions": {
                "python": platform.python_version(),
                "neo4j_server": server[0]["v"],
                "neo4j_driver": version("neo4j"),
                "neo4j_rust_ext": version("neo4j-rust-ext"),
                "graphsvc": version("graphsvc"),
                "mcp": version("mcp"),
            },
            "queries": args.queries,
            "recall_settings": "query only, limit 10, hops 1 (the defaults)"
            + (", embeddings on (random vectors for the memories)" if args.embeddings else "")
            + (", extraction on (every memory extracted)" if args.extraction else ""),
            "ingest_side_by_side": {
                side: round(rate, 1)
                for side, rate in (await ingest_side_by_side(memory, driver, sizes[0])).items()
            },
            "sizes": {},
            "peer": peer,
        }
        print(f"first {sizes[0]:,} ingested side by side: {results['ingest_side_by_side']}", file=sys.stderr)
        have = sizes[0]
        for n in sizes:
            sides = [memory, keywords_only] if keywords_only else [memory]
            rates = await ingest(sides, have, n) if n > have else [results["ingest_side_by_side"]["graphsvc"]]
            print(f"{n:,} memories: ingest {rates} items/s", file=sys.stderr)
            row: dict[str, Any] = {"ingest_items_per_s": round(rates[0], 1)}
            if len(rates) > 1:
                row["ingest_keywords_only_items_per_s"] = round(rates[1], 1)
            if embeddings is not None:
                await embeddings.backfill()  # the batches remembered with keywords alone
                stored = await random_vectors(services.store, DIMENSIONS, seed=n)
                print(f"{n:,} memories: {stored:,} random vectors stored", file=sys.stderr)
            if extraction is not None:  # what the worker reads from the texts, before recall is timed
                started = time.perf_counter()
                read = 0
                while done := await extraction.extract_pending():
                    read += done
                row["extracted_per_s"] = round(read / (time.perf_counter() - started), 1)
                print(f"{n:,} memories: {read:,} extracted, {row['extracted_per_s']}/s", file=sys.stderr)
            await fold(services.store, GRAPH)
            have = n
            with served(settings) as url:  # started here: its worker finds no backlog to encode
                row["recall"] = await recall_latency(
                    recorder, memory, driver, url, dataset.queries(args.queries, n), keywords_only
                )
            if embeddings is not None and tenant is not None:
                now = await tenant_view(memory, embeddings)
                row["tenant"] = {
                    "queries": len(now),
                    "nearest_identical": sum(
                        a["nearest"] == b["nearest"] for a, b in zip(tenant, now, strict=True)
                    ),
                    "top10_identical": sum(
                        a["top10"] == b["top10"] for a, b in zip(tenant, now, strict=True)
                    ),
                }
            results["sizes"][str(n)] = row
            print(f"{n:,} memories: {json.dumps(row)}", file=sys.stderr)
        if embeddings is not None:
            results["remember_worker"] = await remember_idle_and_busy(memory, embeddings)
            print(f"remember, worker idle/busy: {results['remember_worker']}", file=sys.stderr)
        text = await profile(memory, dataset.queries(100, sizes[-1], seed=5))
        if text:
            (
                RESULTS / ("profile-recall-embeddings.txt" if args.embeddings else "profile-recall.txt")
            ).write_text(text)
        if os.environ.get("GRAPHSVC_NEO4J_URI"):
            for graph in (GRAPH, TENANT, GRAPH + "-busy"):
                await forget_graph(driver, graph)
        return results
    finally:
        await driver.close()
        await services.close()


def table(results: dict[str, Any]) -> str:
    peer = {str(s["size"]): s for s in (results["peer"] or {}).get("results", [])}
    lines = [
        "| memories | service p50 / p95 | MCP p50 / p95 | raw driver p50 / p95 | service / raw p50 "
        "| peer p50 / p95 | MCP / peer p50 | ingest items/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, row in results["sizes"].items():
        r = row["recall"]
        other = peer.get(n, {}).get("search")
        lines.append(
            f"| {int(n):,} | {r['service']['p50_ms']} / {r['service']['p95_ms']} ms "
            f"| {r['mcp']['p50_ms']} / {r['mcp']['p95_ms']} ms | {r['raw']['p50_ms']} / {r['raw']['p95_ms']} ms "
            f"| {r['service']['p50_ms'] / r['raw']['p50_ms']:.2f}x "
            + (
                f"| {other['p50_ms']} / {other['p95_ms']} ms | {r['mcp']['p50_ms'] / other['p50_ms']:.3f}x "
                if other
                else "| not run | - "
            )
            + f"| {row['ingest_items_per_s']:,.0f} |"
        )
    if "ingest_side_by_side" not in results:  # results of an earlier method (results/perf-1m.json)
        return "\n".join(lines)
    first, raw = results["ingest_side_by_side"]["graphsvc"], results["ingest_side_by_side"]["raw"]
    peer_ingest = [s["ingest"]["items_per_s"] for s in (results["peer"] or {}).get("results", [])[:1]]
    lines.append(
        f"\nbulk ingest of the first {int(next(iter(results['sizes']))):,}, batch by batch side by side: "
        f"graphsvc {first:,.0f} items/s, raw UNWIND {raw:,.0f} ({first / raw:.2f}x)"
        + (f", peer {peer_ingest[0]} ({first / peer_ingest[0]:.0f}x)" if peer_ingest else "")
    )
    return "\n".join(lines)


def meaning_table(results: dict[str, Any]) -> str:
    """Meaning on beside keywords alone and the raw driver (runs with --embeddings)."""
    lines = [
        "| memories | on p50 / p95 | keywords alone p50 / p95 | on - alone p50 | raw (on's statements) p50 "
        "| on / raw p50 | vector leg p50 / p95 | ingest on / alone items/s | tenant: nearest 20, top 10 same |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, row in results["sizes"].items():
        r = row["recall"]
        on, off, raw = r["service"], r["keywords_only"], r["raw"]
        leg = r["statements"].get("embed/nearest", {"p50_ms": "-", "p95_ms": "-"})
        tenant = row.get("tenant", {})
        lines.append(
            f"| {int(n):,} | {on['p50_ms']} / {on['p95_ms']} ms | {off['p50_ms']} / {off['p95_ms']} ms "
            f"| {on['p50_ms'] - off['p50_ms']:+.1f} ms | {raw['p50_ms']} ms | {on['p50_ms'] / raw['p50_ms']:.2f}x "
            f"| {leg['p50_ms']} / {leg['p95_ms']} ms "
            f"| {row['ingest_items_per_s']:,.0f} / {row.get('ingest_keywords_only_items_per_s', '-')} "
            f"| {tenant.get('nearest_identical', '-')}, {tenant.get('top10_identical', '-')} "
            f"of {tenant.get('queries', '-')} |"
        )
    if worker := results.get("remember_worker"):
        idle, busy = worker["idle"]["p50_ms"], worker["busy"]["p50_ms"]
        lines.append(
            f"\nremember p50, embedding worker idle / busy: {idle} / {busy} ms ({busy / idle - 1:+.0%}; "
            f"{worker['embedded_meanwhile']} memories embedded meanwhile)"
        )
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [int(n) for n in results["sizes"]]
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for key, label in (
        ("service", "graphsvc service"),
        ("mcp", "graphsvc MCP"),
        ("raw", "raw driver, same Cypher"),
    ):
        for stat, style in (("p50_ms", "-o"), ("p95_ms", ":")):
            values = [results["sizes"][str(n)]["recall"][key][stat] for n in sizes]
            axes.plot(sizes, values, style, label=f"{label} {stat[:3]}")
    peer = sorted((s["size"], s["search"]) for s in (results["peer"] or {}).get("results", []))
    if peer:
        axes.plot([p[0] for p in peer], [p[1]["p50_ms"] for p in peer], "-s", label="mcp-neo4j-memory p50")
        axes.plot([p[0] for p in peer], [p[1]["p95_ms"] for p in peer], ":", label="mcp-neo4j-memory p95")
    axes.set(xscale="log", yscale="log", xlabel="memories in the graph", ylabel="recall latency (ms)")
    axes.set_title("Recall latency against graph size")
    axes.legend(fontsize=7)
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="recall queries per size")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--peer-max", type=int, default=100_000, help="largest graph given to the peer")
    parser.add_argument("--peer-queries", type=int, default=60, help="its search returns every hit: slow")
    parser.add_argument("--embeddings", action="store_true", help="recall with the semantic signal on")
    parser.add_argument(
        "--extraction",
        action="store_true",
        help="extraction on: every memory read by the extractor (the worker's steps) before recall is timed",
    )
    parser.add_argument("--heap", default="4g")
    parser.add_argument("--pagecache", default="4g")
    parser.add_argument("--peer-from", type=Path, help="reuse the peer's figures from an earlier perf.json")
    parser.add_argument(
        "--report",
        type=Path,
        metavar="JSON",
        help="only print and plot saved results (e.g. results/perf.json)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="JSON", help="where to write the results (default results/)"
    )
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    saved = args.report or args.out or RESULTS / ("perf-meaning.json" if args.embeddings else "perf.json")
    if not args.report:
        with neo4j_settings(heap=args.heap, pagecache=args.pagecache) as settings:
            settings.embeddings = EmbeddingsSettings(enabled=args.embeddings)
            results = asyncio.run(measure(args, settings))
        saved.write_text(json.dumps(results, indent=2) + "\n")
    results = json.loads(saved.read_text())
    print(table(results))
    if any("keywords_only" in row["recall"] for row in results["sizes"].values()):
        print(meaning_table(results))
    if plot(results, saved.with_suffix(".png")):
        print(f"plot: {saved.with_suffix('.png')}")


if __name__ == "__main__":
    main()
