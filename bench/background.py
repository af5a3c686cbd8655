"""The background workers: throughput quiet and with clients calling, side by side in one run; how long
another graph's new memories wait behind a backlog; and what the fair claim costs at 100,000.

    flock /tmp/graphsvc-bench.lock .venv/bin/python bench/background.py [--backlog 20000] [--clients 8]
        [--rounds 3] [--window 20] [--fair 10000] [--claim 100000] [--out results/background.json]

- **Throughput.** `graphsvc serve` as a process of its own (embeddings and extraction on, as deployed),
  BACKLOG memories of a graph (the labelled set's texts, numbered: English chat turns, diary lines, agent
  notes) in one worker's backlog at a time (as after an import or a new model), full again at the start
  of each WINDOW-second window; windows alternate, ROUNDS times, quiet and with CLIENTS clients calling
  remember + recall over REST on another graph (whose new memories join the backlog too, and count): the
  worker's memories a second in each, the median each way and the ratio of each pair (so that a shared
  machine's load, which drifts, weighs on both sides of a pair alike), and the clients' calls a second
  and p50 beside (and with no backlog at all).
- **Fairness.** FAIR memories of one graph waiting for the embedding worker; 10 memories of another
  graph join the backlog: seconds until those 10 are embedded, against the time the FAIR take.
- **The claim's cost.** CLAIM memories of one graph and 10 of another waiting, and 10,000 graphs with
  none: the claim statement (embed/claim) and the backlog's read for /metrics (embed/backlog), p50.
The workers' figures are read from Neo4j (the graph's memories still waiting), every 0.25 s.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings, spawn

from graphsvc.app import Services
from graphsvc.config import EmbeddingsSettings, ExtractionSettings, Settings
from graphsvc.domain.models import RememberInput
from graphsvc.services.memory import MemoryService

LABELLED = Path(__file__).with_name("extraction") / "labelled.jsonl"
BACKLOG, CLIENTS, ROUNDS, WINDOW_S, FAIR, CLAIM = 20_000, 8, 3, 20.0, 10_000, 100_000
POLL_S = 0.25
CHUNK = 500
LABELS = {"embeddings": "Unembedded", "extraction": "Unextracted"}
CLIENTS_GRAPH = "clients"


def texts(n: int, tag: str) -> list[str]:
    labelled = [json.loads(line)["text"] for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    return [f"{labelled[i % len(labelled)]} ({tag} {i})" for i in range(n)]


def p50_ms(seconds: list[float]) -> float | None:
    return round(statistics.median(seconds) * 1000, 1) if seconds else None


async def load(memory: MemoryService, graph: str, items: list[str]) -> None:
    """`items` remembered into `graph` in bulk, marked for no worker (each phase marks what it drains)."""
    for at in range(0, len(items), CHUNK):
        await memory.remember_many([RememberInput(text=t, graph=graph) for t in items[at : at + CHUNK]])


async def cypher(services: Services, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await services.store._driver.execute_query(
        query, params, database_=services.store._database
    )  # pyright: ignore[reportPrivateUsage]
    return [r.data() for r in records]


async def waiting(services: Services, worker: str, graph: str) -> int:
    label = LABELS[worker]
    [row] = await cypher(services, f"MATCH (m:{label} {{graph: $graph}}) RETURN count(m) AS n", graph=graph)
    return row["n"]


async def mark(services: Services, worker: str, graph: str) -> int:
    """Every memory of `graph` waits for `worker` again (as after an import, or a new model)."""
    label, total = LABELS[worker], 0
    while True:
        [row] = await cypher(
            services,
            f"MATCH (m:Memory {{graph: $graph}}) WHERE NOT m:{label} WITH m LIMIT 5000 SET m:{label} "
            "RETURN count(m) AS n",
            graph=graph,
        )
        total += row["n"]
        if not row["n"]:
            return total


DONE = {"embeddings": "m.embedding IS NOT NULL", "extraction": "m.extractedWith IS NOT NULL"}


async def done_elsewhere(services: Services, worker: str) -> int:
    """Memories of the clients' graph that `worker` has done (their remembers join its backlog too)."""
    query = f"MATCH (m:Memory {{graph: $graph}}) WHERE {DONE[worker]} AND NOT m:{LABELS[worker]} RETURN count(m) AS n"
    [row] = await cypher(services, query, graph=CLIENTS_GRAPH)
    return row["n"]


async def window(services: Services, worker: str, graph: str, seconds: float) -> float:
    """The worker's memories a second over `seconds`, the graph's backlog full at the start: those of the
    graph it did, and of the clients' graph."""
    await mark(services, worker, graph)
    left, elsewhere = await waiting(services, worker, graph), await done_elsewhere(services, worker)
    started = time.monotonic()
    await asyncio.sleep(seconds)
    done = left - await waiting(services, worker, graph) + await done_elsewhere(services, worker) - elsewhere
    return round(done / (time.monotonic() - started), 1)


class Clients:
    """CLIENTS clients, each calling remember then recall over REST on one graph, until stopped."""

    def __init__(self, url: str, count: int) -> None:
        self.url, self.count = url, count
        self.remember: list[float] = []
        self.recall: list[float] = []
        self.errors = 0  # answers other than 2xx (a 503 past the deadline on an overloaded machine)
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._texts = itertools.cycle(texts(2_000, "client"))

    async def __aenter__(self) -> Clients:
        self.started = time.monotonic()
        self._tasks = [asyncio.create_task(self._client()) for _ in range(self.count)]
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)
        self.seconds = time.monotonic() - self.started

    async def _client(self) -> None:
        async with httpx.AsyncClient(base_url=self.url, timeout=60) as api:
            while not self._stop.is_set():
                text = next(self._texts)
                await self._timed(api, "/v1/memories", {"text": text, "graph": CLIENTS_GRAPH}, self.remember)
                question = {"query": text.split(" (")[0], "graph": CLIENTS_GRAPH, "limit": 10}
                await self._timed(api, "/v1/recall", question, self.recall)

    async def _timed(
        self, api: httpx.AsyncClient, path: str, body: dict[str, Any], into: list[float]
    ) -> None:
        started = time.perf_counter()
        answer = await api.post(path, json=body)
        if answer.is_success:
            into.append(time.perf_counter() - started)
        else:
            self.errors += 1

    def figures(self) -> dict[str, Any]:
        calls = len(self.remember) + len(self.recall)
        return {
            "calls_per_s": round(calls / self.seconds, 1),
            "remember_p50_ms": p50_ms(self.remember),
            "recall_p50_ms": p50_ms(self.recall),
            "errors": self.errors,
        }


async def while_calling(
    url: str, clients: int, work: Callable[[], Awaitable[Any]]
) -> tuple[Any, dict[str, Any]]:
    async with Clients(url, clients) as calling:
        await asyncio.sleep(2)  # the clients at speed first
        done = await work()
    return done, calling.figures()


async def throughput(services: Services, url: str, args: argparse.Namespace) -> dict[str, Any]:
    graph = "bench-backlog"
    await load(services.memory, graph, texts(args.backlog, "backlog"))

    async def idle() -> None:
        await asyncio.sleep(args.window)

    await while_calling(url, args.clients, idle)  # a warm server first: its statements compiled
    results: dict[str, Any] = {"no backlog": {"clients": (await while_calling(url, args.clients, idle))[1]}}
    for worker in LABELS:
        rounds = []
        for _ in range(args.rounds):
            quiet = await window(services, worker, graph, args.window)
            busy, clients = await while_calling(
                url, args.clients, lambda w=worker: window(services, w, graph, args.window)
            )
            rounds.append({"quiet": quiet, "busy": busy, "clients": clients, "load": os.getloadavg()[0]})
        await cypher(
            services, f"MATCH (m:{LABELS[worker]} {{graph: $graph}}) REMOVE m:{LABELS[worker]}", graph=graph
        )
        quiet, busy = (statistics.median(r[side] for r in rounds) for side in ("quiet", "busy"))
        results[worker] = {
            "rounds": rounds,
            "quiet_per_s": quiet,
            "busy_per_s": busy,
            "busy_over_quiet": [round(r["busy"] / r["quiet"], 2) for r in rounds],
            "clients": {k: statistics.median(r["clients"][k] for r in rounds) for k in rounds[0]["clients"]},
        }
        print(f"{worker}: {json.dumps(results[worker])}", file=sys.stderr)
    return results


async def fairness(services: Services, fair: int) -> dict[str, Any]:
    """FAIR memories of one graph wait; 10 new ones of another join: how long each takes."""
    big, small = "bench-fair-a", "bench-fair-b"
    await load(services.memory, big, texts(fair, "fair"))
    await load(services.memory, small, texts(10, "new"))
    started = time.monotonic()
    await mark(services, "embeddings", big)
    await asyncio.sleep(2)  # the import's backlog drains meanwhile
    joined = time.monotonic()
    await mark(services, "embeddings", small)
    small_s = big_s = None
    while small_s is None or big_s is None:
        await asyncio.sleep(POLL_S)
        now = time.monotonic()
        if small_s is None and not await waiting(services, "embeddings", small):
            small_s = round(now - joined, 2)
        if big_s is None and not await waiting(services, "embeddings", big):
            big_s = round(now - started, 1)
    return {"backlog": fair, "new_10_embedded_after_s": small_s, "backlog_drained_after_s": big_s}


async def claim_cost(settings: Settings, size: int) -> dict[str, Any]:
    """embed/claim and embed/backlog with `size` memories of one graph and 10 of another waiting, and
    10,000 graphs without any: p50 of 20 (claims held for no time, so each finds the same)."""
    services = Services.build(settings)
    await services.start(listening=False)
    try:
        await load(services.memory, "bench-claim-a", texts(size, "claim"))
        await load(services.memory, "bench-claim-b", texts(10, "claim-b"))
        await cypher(services, "UNWIND range(1, 10000) AS n MERGE (:GraphState {name: 'bench-idle-' + n})")
        for graph in ("bench-claim-a", "bench-claim-b"):
            await mark(services, "embeddings", graph)
        store, runs = services.store, {}
        for name, params in {
            "claim, round from the start": {"after": ""},
            "claim, after the large graph": {"after": "bench-claim-a"},
            "claim, among the idle graphs": {"after": "bench-idle-"},
        }.items():
            times = []
            for _ in range(20):
                started = time.perf_counter()
                await store.run("embed/claim", graphs=256, limit=64, lease_ms=-1, token="bench", **params)
                times.append(time.perf_counter() - started)
            runs[name] = p50_ms(times)
        times = []
        for _ in range(5):
            started = time.perf_counter()
            await store.run("embed/backlog", top=10)
            times.append(time.perf_counter() - started)
        runs["backlog per graph (/metrics)"] = p50_ms(times)
        return runs
    finally:
        await services.close()


async def measure(args: argparse.Namespace, settings: Settings, log: Path) -> dict[str, Any]:
    on = {"GRAPHSVC_EMBEDDINGS_ENABLED": "true", "GRAPHSVC_EXTRACTION_ENABLED": "true"}
    neo = settings.neo4j
    env = on | {
        "GRAPHSVC_NEO4J_URI": neo.uri,
        "GRAPHSVC_NEO4J_PASSWORD": neo.password.get_secret_value(),
        "GRAPHSVC_AUTH_REQUIRED": "false",
    }
    # the bench's own writes, marked for no worker: each phase marks what it measures
    local = settings.model_copy(
        update={
            "embeddings": EmbeddingsSettings(enabled=False),
            "extraction": ExtractionSettings(enabled=False),
            "deadline_s": 300,  # its bulk loads, on a loaded machine
        }
    )
    results: dict[str, Any] = {"load_before": os.getloadavg()}
    server, url = spawn(env, log)
    services = Services.build(local)
    await services.start(listening=False)
    try:
        results["throughput"] = await throughput(services, url, args)
        if args.fair:
            results["fairness"] = await fairness(services, args.fair)
            print(f"fairness: {json.dumps(results['fairness'])}", file=sys.stderr)
    finally:
        await services.close()
        server.terminate()
        server.wait(timeout=60)
    if args.claim:
        results["claim_ms"] = await claim_cost(local, args.claim)
    results["load_after"] = os.getloadavg()
    return results


def table(results: dict[str, Any]) -> str:
    rows = [
        "| worker | quiet memories/s | busy memories/s | busy / quiet, each round | clients calls/s | "
        "remember p50 | recall p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    through = results["throughput"]
    idle = through["no backlog"]["clients"]
    rows.append(
        f"| none (no backlog) | | | | {idle['calls_per_s']} | {idle['remember_p50_ms']} ms | "
        f"{idle['recall_p50_ms']} ms |"
    )
    for worker in LABELS:
        w, c = through[worker], through[worker]["clients"]
        ratios = ", ".join(str(r) for r in w["busy_over_quiet"])
        rows.append(
            f"| {worker} | {w['quiet_per_s']} | {w['busy_per_s']} | {ratios} | {c['calls_per_s']} | "
            f"{c['remember_p50_ms']} ms | {c['recall_p50_ms']} ms |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backlog", type=int, default=BACKLOG)
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--window", type=float, default=WINDOW_S, help="seconds")
    parser.add_argument("--fair", type=int, default=FAIR, help="0: skip the fairness")
    parser.add_argument("--claim", type=int, default=CLAIM, help="0: skip the claim's cost")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with neo4j_settings(heap="2g", pagecache="1g") as settings, tempfile.TemporaryDirectory() as work:
        results = asyncio.run(measure(args, settings, Path(work) / "serve.log"))
    print(json.dumps(results, indent=1))
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
