"""The client's overhead over raw httpx (issue 39: at most 1 ms p50), one run, one server.

    .venv/bin/python bench/client_overhead.py [--calls 2000]

`graphsvc serve` as a process of its own (bench/common.py: spawn; its log in bench/results/) on a fresh
local Neo4j (or GRAPHSVC_NEO4J_URI), embeddings off (the recall's own cost is not measured here). The same
recall (limit 10 over a graph of 200 memories) is sent by `graphsvc.client.Client` and by a plain
`httpx.Client` posting the JSON and reading `response.json()`, alternately call by call on the same
server, so drift touches both alike. Prints each one's p50 and p95 and the overhead (client minus raw)
at p50, beside the client's own work without the network (building and checking the input, validating
the answer into the contract's models), timed on the last answer.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings, spawn

from graphsvc.client import Client, calls
from graphsvc.domain.models import RecallInput, RememberInput

QUERY = "which pool does the trader use"


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def run(url: str, count: int) -> dict[str, float]:
    graph = "bench-" + secrets.token_hex(4)
    with Client(url, graph=graph) as client, httpx.Client(base_url=url, headers={"X-Graph-Id": graph}) as raw:
        client.remember_batch(
            [
                RememberInput(text=f"trader {i} uses pool {i % 7} for {QUERY.split()[i % 6]}")
                for i in range(200)
            ]
        )
        ask = RecallInput(query=QUERY)

        def by_client() -> None:
            client.recall(ask)

        def by_httpx() -> None:
            answer = raw.post("/v1/recall", json={"query": QUERY})
            answer.raise_for_status()
            answer.json()

        for _ in range(50):  # warm both paths and the server's statements
            by_client(), by_httpx()
        client_ms, raw_ms = [], []
        for _ in range(count):
            client_ms.append(_timed(by_client))
            raw_ms.append(_timed(by_httpx))
        last = raw.post("/v1/recall", json={"query": QUERY})
        local = [_timed(lambda: calls.answered(calls.recall(ask), last)) for _ in range(count)]
    return {
        "client_p50": statistics.median(client_ms),
        "client_p95": _percentile(client_ms, 0.95),
        "raw_p50": statistics.median(raw_ms),
        "raw_p95": _percentile(raw_ms, 0.95),
        "overhead_p50": statistics.median(client_ms) - statistics.median(raw_ms),
        "local_p50": statistics.median(local),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with neo4j_settings() as settings:
        env = {
            "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
            "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
            "GRAPHSVC_AUTH_REQUIRED": "false",
            "GRAPHSVC_EMBEDDINGS_ENABLED": "false",
        }
        server, url = spawn(env, Path(__file__).resolve().parent / "results" / "client-overhead-serve.log")
        try:
            figures = run(url, args.calls)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"recall over REST, {args.calls} calls each, alternating, one server:")
    print(f"  graphsvc.client.Client  p50 {figures['client_p50']:.3f} ms  p95 {figures['client_p95']:.3f} ms")
    print(f"  raw httpx.Client        p50 {figures['raw_p50']:.3f} ms  p95 {figures['raw_p95']:.3f} ms")
    print(f"  overhead at p50         {figures['overhead_p50']:+.3f} ms (target <= 1 ms)")
    print(f"  the client's own work without the network, p50 {figures['local_p50']:.3f} ms")


if __name__ == "__main__":
    main()
