"""The vector index's quantization, measured on the search recall runs (cypher/embed/nearest.cypher).

Neo4j 2026.08 made vector indexes quantized by default: one bit per dimension, the search asked for
three times the candidates and rescored (`vector.default_search_expansion_factor` 3). This loads
`--size` random unit vectors into one graph (as perf.py's bulk: the index's worst case) and 500 texts
embedded by the model into another (a tenant of real vectors beside them), makes the index with each
quantization Neo4j offers (BINARY, the default; SCALAR; NONE) in turn, and for each asks the filtered
search for its k nearest (20, 50, 100), keeps the best 20, as embed/nearest does: p50 / p95 over three
rounds of the queries, and the share of the exact nearest 20 (numpy over the same vectors) it returned.
A fresh local Neo4j unless GRAPHSVC_NEO4J_URI is set; a few minutes at 100,000.

    .venv/bin/python bench/vector_index.py [--size 100000] [--queries 60]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import neo4j
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset
from common import neo4j_settings

from graphsvc.encoder.onnx import OnnxEncoder

CONFIGS = ("BINARY", "SCALAR", "NONE")
BREADTHS = (20, 50, 100)
KEEP = 20
CHUNK = 5_000
SEARCH = """CYPHER 25 MATCH (v:Vec)
SEARCH v IN (VECTOR INDEX vec FOR $q WHERE v.graphKey = $g LIMIT $k) SCORE AS s
WITH v, s ORDER BY s DESC LIMIT $keep
RETURN collect(v.i) AS found"""


def load(driver: neo4j.Driver, size: int, tenant: np.ndarray) -> np.ndarray:
    """The random graph ('big') and the tenant's; returns the random vectors, row i the node v.i."""
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for graph, rows in (("big", vectors), ("tenant", tenant)):
        for at in range(0, len(rows), CHUNK):
            driver.execute_query(
                "UNWIND $rows AS r CREATE (:Vec {graphKey: $g, i: r.i, embedding: r.v})",
                g=graph,
                rows=[{"i": at + n, "v": v.tolist()} for n, v in enumerate(rows[at : at + CHUNK])],
            )
    return vectors


def measure(
    driver: neo4j.Driver, quantization: str, exact: dict[str, list[set[int]]], queries: np.ndarray
) -> None:
    """`exact`: per graph, each query's exact nearest KEEP (the same for every quantization)."""
    driver.execute_query("DROP INDEX vec IF EXISTS")
    started = time.monotonic()
    driver.execute_query(  # quantization is one of CONFIGS
        "CYPHER 25 CREATE VECTOR INDEX vec FOR (v:Vec) ON v.embedding WITH [v.graphKey] OPTIONS {indexConfig: "
        f"{{`vector.dimensions`: 384, `vector.similarity_function`: 'cosine', `vector.quantization.type`: '{quantization}'}}}}"
    )
    driver.execute_query("CALL db.awaitIndexes(3600)")
    print(f"{quantization}: index made in {time.monotonic() - started:.0f} s", flush=True)
    for graph, nearest_by_query in exact.items():
        for k in BREADTHS:
            times, share = [], 0
            for round_ in range(3):
                for q, nearest in zip(queries, nearest_by_query, strict=True):
                    started = time.perf_counter()
                    [record] = driver.execute_query(SEARCH, q=q.tolist(), g=graph, k=k, keep=KEEP).records
                    times.append(time.perf_counter() - started)
                    if round_ == 0:
                        share += len(nearest & set(record["found"]))
            times = sorted(times[10:])  # the first ten warm the index
            print(
                f"  {graph:6} k {k:3}: p50 {1000 * times[len(times) // 2]:5.2f} ms, "
                f"p95 {1000 * times[int(0.95 * len(times))]:5.2f} ms, "
                f"exact nearest {KEEP}: {share / (KEEP * len(queries)):.3f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="random vectors in the big graph")
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    model = OnnxEncoder.load()
    tenant = np.array(model.encode([m["text"] for m in dataset.memories(500, seed=99)]), dtype=np.float32)
    queries = np.array(
        [model.encode_query(q) for q in dataset.queries(args.queries, 10_000, seed=3)], dtype=np.float32
    )
    with neo4j_settings(heap="4g", pagecache="4g") as settings:
        neo = settings.neo4j
        auth = (neo.user, neo.password.get_secret_value())
        with neo4j.GraphDatabase.driver(neo.uri, auth=auth, notifications_min_severity="OFF") as driver:
            big = load(driver, args.size, tenant)
            exact = {
                graph: [set(np.argsort(-(vectors @ q), kind="stable")[:KEEP].tolist()) for q in queries]
                for graph, vectors in (("big", big), ("tenant", tenant))
            }
            print(f"{args.size:,} random vectors and {len(tenant)} of the model's, {args.queries} queries")
            for quantization in CONFIGS:
                measure(driver, quantization, exact, queries)


if __name__ == "__main__":
    main()
