"""The vector leg beside other tenants: a graph's nearest memories and recall top 10 on a fresh
server and beside 100k and 1M memories of other graphs, and the vector leg's latency at each size.

One graph of 1,000 synthetic memories (bench/dataset.py) is remembered and embedded by the model; for
each of its queries, the service's nearest 20 (embed/nearest, timed), the exact nearest 20 (every
cosine of the graph, in Cypher) and recall's top 10 (ids and scores) are taken. Then memories of
another graph are added, with random unit vectors and no text (a raw UNWIND: the vector index is what
they crowd), and the same is asked again. Prints a table; about 15 minutes to 1M on two cores.

    .venv/bin/python bench/tenants.py [--sizes 100000,1000000] [--queries 50] [--breadths 20,40,100]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset
from common import neo4j_settings
from perf import remember

from graphsvc.app import Services
from graphsvc.domain.models import RecallInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.index.term_fold import fold
from graphsvc.services.recall.service import RecallService

GRAPH, OTHERS, SIZE, SEED, NEAREST, BATCH = "tenant", "others", 1000, 3, 20, 2000
EXACT = """MATCH (m:Memory {graph: $graph}) WHERE m.embedding IS NOT NULL
RETURN m.id AS id ORDER BY vector.similarity.cosine(m.embedding, $vector) DESC, m.id LIMIT $limit"""
CROWD = """UNWIND $rows AS row
CREATE (:Memory {graph: $graph, graphKey: $key, id: row.id, embedding: row.vector})"""


async def cypher(driver: neo4j.AsyncDriver, text: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await driver.execute_query(text, params)
    return [record.data() for record in records]


async def views(
    services: Services,
    driver: neo4j.AsyncDriver,
    vectors: list[list[float]],
    queries: list[str],
    breadth: int,
) -> dict[str, Any]:
    """Per query: the service's nearest ids, the exact nearest ids, recall's top 10 (the index asked
    for `breadth`); the leg's times."""
    config = services.settings.recall.model_copy(update={"vector_breadth": breadth})
    recall = RecallService(services.store, lambda: datetime.now(UTC), services.embeddings, config)
    times, rows = [], []
    for query, vector in zip(queries, vectors, strict=True):
        started = time.perf_counter()
        nearest = [r["id"] for r in (await services.embeddings.nearest(GRAPH, vector, NEAREST, breadth)).rows]
        times.append(time.perf_counter() - started)
        exact = [r["id"] for r in await cypher(driver, EXACT, graph=GRAPH, vector=vector, limit=NEAREST)]
        top = await recall.recall(RecallInput(query=query, graph=GRAPH))
        rows.append({"nearest": nearest, "exact": exact, "top": [(m.id, m.score) for m in top.memories]})
    return {"rows": rows, "times": times}


async def crowd(driver: neo4j.AsyncDriver, count: int, start: int, rng: np.random.Generator) -> None:
    """Memories start..count-1 of the other graph, random unit vectors, no text."""
    for at in range(start, count, BATCH):
        vectors = rng.standard_normal((min(BATCH, count - at), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = [{"id": f"o{at + i}", "vector": v.tolist()} for i, v in enumerate(vectors)]
        await cypher(driver, CROWD, rows=rows, graph=OTHERS, key=graph_key(OTHERS))


def line(size: int, breadth: int, fresh: dict[str, Any], now: dict[str, Any]) -> str:
    pairs = list(zip(fresh["rows"], now["rows"], strict=True))
    same = sum(a["nearest"] == b["nearest"] for a, b in pairs)
    top = sum(a["top"] == b["top"] for a, b in pairs)
    found = statistics.mean(len(set(b["nearest"]) & set(b["exact"])) / NEAREST for _, b in pairs)
    ordered = sorted(now["times"])
    p50, p95 = ordered[len(ordered) // 2], ordered[int(0.95 * len(ordered))]
    return (
        f"| {size:,} | {breadth} | {1000 * p50:.1f} / {1000 * p95:.1f} ms | {found:.3f} | {same} of {len(pairs)} "
        f"| {top} of {len(pairs)} |"
    )


async def main_async(settings: Any, sizes: list[int], count: int, breadths: list[int]) -> None:
    services = Services.build(settings)
    await services.start()
    neo = settings.neo4j
    driver = neo4j.AsyncGraphDatabase.driver(neo.uri, auth=(neo.user, neo.password.get_secret_value()))
    try:
        await remember(services.memory, list(dataset.memories(SIZE, seed=SEED)), GRAPH)
        await fold(services.store, GRAPH)  # its own term statistics, as the server's worker folds them
        while await services.embeddings.embed_pending():
            pass
        queries = dataset.queries(count, SIZE, memory_seed=SEED)
        vectors = []
        for query in queries:
            vector = services.embeddings.encode_query(query)
            assert vector is not None
            vectors.append(await vector)
        print(
            "| other graphs' memories | index asked for | vector leg p50 / p95 | share of the exact nearest 20 "
            "| nearest 20 as on the fresh server | recall top 10 as on the fresh server |"
        )
        print("|---|---|---|---|---|---|")
        fresh = {}
        for breadth in breadths:
            await views(services, driver, vectors[:5], queries[:5], breadth)  # warm-up
            fresh[breadth] = await views(services, driver, vectors, queries, breadth)
            print(line(0, breadth, fresh[breadth], fresh[breadth]), flush=True)
        rng, have = np.random.default_rng(5), 0
        for size in sizes:
            started = time.perf_counter()
            await crowd(driver, size, have, rng)
            have = size
            print(
                f"  ({size:,} others in {time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True
            )
            for breadth in breadths:
                await views(services, driver, vectors[:5], queries[:5], breadth)
                now = await views(services, driver, vectors, queries, breadth)
                print(line(size, breadth, fresh[breadth], now), flush=True)
    finally:
        await driver.close()
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=50)
    breadth = RecallConfig().vector_breadth
    parser.add_argument("--breadths", default=str(breadth), help="how many the index is asked for")
    args = parser.parse_args()
    with neo4j_settings(heap="4g", pagecache="4g") as settings:
        breadths = [int(b) for b in args.breadths.split(",")]
        asyncio.run(main_async(settings, [int(s) for s in args.sizes.split(",")], args.queries, breadths))


if __name__ == "__main__":
    main()
