"""Concurrent writers side by side, in one run on one Neo4j: remembers per second and latency of

- one client remembering single memories,
- 8 clients remembering single memories into one graph,
- 8 clients remembering single memories into 8 graphs,
- bulk import (`remember_many`, batches of 500: the path of `graphsvc import`) of as many memories,

each on fresh graphs, with the single-memory rows both over REST (aiohttp with keep-alive, from this
process, against `graphsvc serve` running as a process of its own, as deployed) and through the
service layer (in this process, no HTTP), so the HTTP cost shows apart. Every row runs once with
`--warm` memories before the measured runs, on graphs of its own.

    .venv/bin/python bench/concurrency.py [--memories 4000] [--clients 8] [--warm 1000]

Starts its own local Neo4j unless GRAPHSVC_NEO4J_URI is set. Prints a table; writes
bench/results/concurrency.json (the server's log goes to bench/results/concurrency-serve.log). Data: bench/dataset.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from itertools import islice
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset
from common import neo4j_settings, spawn

from graphsvc.app import Services
from graphsvc.domain.models import RememberInput

RESULTS = Path(__file__).resolve().parent / "results"
BULK_BATCH = 500


def _p(seconds: list[float], q: float) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _clients(
    items: list[dict[str, Any]],
    clients: int,
    graphs: list[str],
    call: Callable[[dict[str, Any]], Awaitable[None]],
) -> dict[str, float]:
    """`clients` writers, each remembering its share of `items` one at a time (client c writes to
    graphs[c % len(graphs)]); remembers per second and latency over all of them."""
    latencies: list[float] = []

    async def client(c: int) -> None:
        for item in items[c::clients]:
            started = time.perf_counter()
            await call({**item, "graph": graphs[c % len(graphs)]})
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    elapsed = time.perf_counter() - started
    return {
        "per_s": round(len(items) / elapsed, 1),
        "p50_ms": round(_p(latencies, 0.5), 1),
        "p95_ms": round(_p(latencies, 0.95), 1),
    }


async def run(n: int, clients: int, warm: int) -> dict[str, dict[str, float]]:
    data = dataset.memories(sys.maxsize)  # lazily, fresh items for every row: no duplicates met
    tag = secrets.token_hex(3)
    with neo4j_settings() as settings:
        services = Services.build(settings)
        await services.start()
        memory = services.memory

        async def service_call(item: dict[str, Any]) -> None:
            await memory.remember(RememberInput(**item))

        async def bulk(items: list[dict[str, Any]], graph: str) -> dict[str, float]:
            started = time.perf_counter()
            for i in range(0, len(items), BULK_BATCH):
                await memory.remember_many(
                    [RememberInput(**m, graph=graph) for m in items[i : i + BULK_BATCH]]
                )
            return {"per_s": round(len(items) / (time.perf_counter() - started), 1)}

        env = {
            "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
            "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
            "GRAPHSVC_AUTH_REQUIRED": "false",
        }
        # In a thread: spawn() blocks until /health answers, and this loop's folds must not pause meanwhile.
        server, url = await asyncio.to_thread(spawn, env, RESULTS / "concurrency-serve.log")
        try:
            connector = aiohttp.TCPConnector(limit=clients)
            timeout = aiohttp.ClientTimeout(total=60)
            async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as http:

                async def rest_call(item: dict[str, Any]) -> None:
                    async with http.post("/v1/memories", json=item) as response:
                        response.raise_for_status()
                        await response.read()

                async def each_row(size: int, run_tag: str) -> dict[str, dict[str, float]]:
                    """Every row, each on `size` fresh items and graphs of its own."""
                    rows: dict[str, dict[str, float]] = {}

                    def fresh() -> list[dict[str, Any]]:
                        return list(islice(data, size))

                    for via, call in (("REST", rest_call), ("service", service_call)):
                        rows[f"1 client, 1 graph ({via})"] = await _clients(
                            fresh(), 1, [f"one-{via}-{run_tag}"], call
                        )
                        rows[f"{clients} clients, 1 graph ({via})"] = await _clients(
                            fresh(), clients, [f"shared-{via}-{run_tag}"], call
                        )
                        rows[f"{clients} clients, {clients} graphs ({via})"] = await _clients(
                            fresh(),
                            clients,
                            [f"own-{via}-{run_tag}-{c}" for c in range(clients)],
                            call,
                        )
                    rows[f"bulk import (batches of {BULK_BATCH})"] = await bulk(fresh(), f"bulk-{run_tag}")
                    return rows

                # Every row once before any is measured: a fresh Neo4j compiles its hot code (its JIT
                # took 43% of its CPU in the first minute of load), and the rows run first would pay it.
                await each_row(warm, f"warm-{tag}")
                rows = await each_row(n, tag)
        finally:
            server.terminate()
            server.wait(timeout=30)
        await services.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=4000, help="memories written in each row")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warm", type=int, default=1000, help="memories of each row's unmeasured run first")
    args = parser.parse_args()
    rows = asyncio.run(run(args.memories, args.clients, args.warm))
    bulk = next(v["per_s"] for k, v in rows.items() if k.startswith("bulk"))
    print(f"{'row':<32} {'remembers/s':>12} {'of bulk':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for name, row in rows.items():
        print(
            f"{name:<32} {row['per_s']:>12,.0f} {row['per_s'] / bulk:>7.2f}x"
            f" {row.get('p50_ms', float('nan')):>8.1f} {row.get('p95_ms', float('nan')):>8.1f}"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "concurrency.json").write_text(
        json.dumps({"memories": args.memories, "rows": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
