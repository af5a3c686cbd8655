"""recall over stdio in process against recall over streamable HTTP MCP (issue 39: stdio p50 at most
HTTP's), one run, one Neo4j.

    .venv/bin/python bench/stdio_bench.py [--calls 300] [--memories 200] [--embeddings]

Two processes of graphsvc on the same Neo4j (a fresh local one, or GRAPHSVC_NEO4J_URI): `graphsvc
serve` (its log in bench/results/) reached by the MCP Python SDK's streamable HTTP client, and `graphsvc
mcp` started by the SDK's stdio client. A graph of `--memories` memories is remembered through HTTP; the
same recall (limit 10) is then sent alternately over each, call by call, so drift touches both alike,
after a warm-up. Embeddings are off unless --embeddings (then both encode the query). Prints each
transport's p50 and p95 in ms and the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings, spawn

RESULTS = Path(__file__).resolve().parent / "results"
QUERY = "which pool does the trader use"
WARM_UP = 20


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    result = await call()
    assert not result.is_error, result
    return (time.perf_counter() - started) * 1000


async def run(env: dict[str, str], calls: int, memories: int) -> dict[str, list[float]]:
    server, url = spawn(env, RESULTS / "stdio_bench-serve.log")
    graph = "bench-" + secrets.token_hex(4)
    recall = {"query": QUERY, "limit": 10, "graph": graph}
    graphsvc = str(Path(sys.executable).parent / "graphsvc")
    stdio_env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")} | env
    parameters = StdioServerParameters(command=graphsvc, args=["mcp"], env=stdio_env)
    try:
        async with (
            Client(f"{url}/mcp") as http,
            Client(stdio_client(parameters, errlog=(RESULTS / "stdio_bench-mcp.log").open("a"))) as stdio,
        ):
            for n in range(memories):
                text = f"trader {n} swaps on pool {n % 17} and avoids pool {n % 5}"
                await http.call_tool("remember", {"text": text, "graph": graph})
            timed: dict[str, list[float]] = {"stdio": [], "http": []}
            for n in range(WARM_UP + calls):
                for name, client in (("stdio", stdio), ("http", http)):
                    took = await _timed(lambda c=client: c.call_tool("recall", recall))
                    if n >= WARM_UP:
                        timed[name].append(took)
            return timed
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--embeddings", action="store_true", help="recall with meaning (the model on)")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    with neo4j_settings() as settings:
        env = {
            "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
            "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
            "GRAPHSVC_EMBEDDINGS_ENABLED": "true" if args.embeddings else "false",
            "GRAPHSVC_AUTH_REQUIRED": "false",
        }
        timed = asyncio.run(run(env, args.calls, args.memories))
    print(f"recall, limit 10, {args.memories} memories, {args.calls} calls each, alternating:")
    for name, samples in timed.items():
        p50, p95 = statistics.median(samples), _percentile(samples, 0.95)
        print(f"  {name:<6} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms")
    print(
        f"  stdio / http at p50: {statistics.median(timed['stdio']) / statistics.median(timed['http']):.2f}"
    )
    print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
