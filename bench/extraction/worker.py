"""Extraction through the worker, and what it costs remember, on one Neo4j in one run.

    flock /tmp/graphsvc-bench.lock .venv/bin/python bench/extraction/worker.py [--sizes 10000,100000]

At each size (a graph of bench/dataset.py's memories, bulk-loaded as bench/perf.py loads them):
- remember p50 / p95, one memory a call (ROUNDS rounds of EACH, alternating): extraction off (the
  remember of a server with GRAPHSVC_EXTRACTION_ENABLED=false), on with the worker idle, and on with the
  worker busy reading a backlog meanwhile (as the server runs it: a low-priority thread beside the loop);
- the worker's throughput: memories read and stored a second (claim, extract, store) over a backlog
  of BACKLOG texts of the labelled set, and the extractor alone over the same texts.
`--today` measures remember only, for a checkout without extraction (PYTHONPATH at another worktree):
so the code before extraction and this one are timed on the same server in one session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dataset
from common import neo4j_settings

from graphsvc.app import Services
from graphsvc.domain.models import RememberInput
from graphsvc.services.memory import MemoryService

GRAPH = "bench-extract"
BATCH = 500
ROUNDS, EACH = 6, 50
BACKLOG = 5_000
LABELLED = Path(__file__).with_name("labelled.jsonl")


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
        "n": len(ordered),
    }


def texts(n: int) -> list[str]:
    labelled = [json.loads(line)["text"] for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    return [f"{labelled[i % len(labelled)]} ({i})" for i in range(n)]


async def load(memory: MemoryService, start: int, stop: int) -> None:
    items = dataset.memories(stop, start=start)
    while chunk := list(itertools.islice(items, BATCH)):
        await memory.remember_many([RememberInput(**item, graph=GRAPH) for item in chunk])


async def remember_p50(sides: dict[str, MemoryService], worker: Any | None, start: int) -> dict[str, Any]:
    """remember, one memory a call, each side in turn, round by round; before a busy round the backlog
    graph waits to be read again, and the worker reads it meanwhile."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    items = dataset.memories(start + ROUNDS * EACH * len(sides), seed=23, start=start)
    for _ in range(ROUNDS):
        for name, memory in sides.items():
            busy = None
            if name == "on, worker busy" and worker is not None:
                await unread(worker)
                busy = asyncio.create_task(drain(worker))
                await asyncio.sleep(0.2)
            for item in itertools.islice(items, EACH):
                started = time.perf_counter()
                await memory.remember(RememberInput(**item, graph=GRAPH + "-remember"))
                times[name].append(time.perf_counter() - started)
            if busy is not None:
                busy.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await busy
    return {name: summary(t) for name, t in times.items()}


async def drain(worker: Any) -> int:
    done = 0
    while stored := await worker.extract_pending():
        done += stored
    return done


async def unread(worker: Any) -> None:
    """Every memory of the backlog graph waits to be read again (as after a new extractor version)."""
    await worker._store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) SET m:Unextracted", graph=GRAPH + "-backlog"
    )


async def throughput(memory: MemoryService, worker: Any, size: int) -> dict[str, Any]:
    """The worker over a backlog of `size` texts (the labelled set's, numbered), read twice (the
    second time replacing what the first wrote, as a new version does); and the extractor alone."""
    backlog = texts(size)
    for at in range(0, len(backlog), BATCH):
        chunk = backlog[at : at + BATCH]
        await memory.remember_many([RememberInput(text=t, graph=GRAPH + "-backlog") for t in chunk])
    rates = []
    for _ in range(2):
        await unread(worker)
        started = time.perf_counter()
        stored = await drain(worker)
        rates.append(stored / (time.perf_counter() - started))
    started = time.perf_counter()
    worker._extractor.extract(backlog)
    alone = len(backlog) / (time.perf_counter() - started)
    return {
        "memories": size,
        "worker_per_s": [round(r, 1) for r in rates],
        "extractor_alone_per_s": round(alone, 1),
    }


async def measure(args: argparse.Namespace, settings: Any) -> dict[str, Any]:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    services = Services.build(settings)
    await services.start()
    today = args.today or "extraction" not in inspect.signature(MemoryService).parameters
    sides: dict[str, MemoryService] = {"off": MemoryService(services.store)}
    worker = None
    if not today:
        from graphsvc.extractor.rules import RulesExtractor
        from graphsvc.services.extraction import ExtractionService

        worker = ExtractionService(services.store, RulesExtractor(), "ok")
        on = MemoryService(services.store, extraction=worker)
        sides |= {"on, worker idle": on, "on, worker busy": on}
    results: dict[str, Any] = {"code": "today" if today else "extraction", "sizes": {}}
    try:
        if worker is not None:  # first, on a fresh server: its backfill finds only the backlog graph
            results["worker"] = await throughput(sides["off"], worker, args.backlog)
            print(f"worker: {results['worker']}", file=sys.stderr)
        have = 0
        for n in sizes:
            await load(sides["off"], have, n)
            have = n
            row: dict[str, Any] = {"remember": await remember_p50(sides, worker, start=n + 1_000_000)}
            print(f"{n:,}: {json.dumps(row)}", file=sys.stderr)
            results["sizes"][str(n)] = row
    finally:
        if worker is not None:
            await worker.close()
        await services.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--today", action="store_true", help="remember only (the code before extraction)")
    parser.add_argument(
        "--backlog", type=int, default=BACKLOG, help="texts the worker's throughput is read over"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with neo4j_settings(heap="2g", pagecache="1g") as settings:
        results = asyncio.run(measure(args, settings))
    results["load"] = os.getloadavg()
    print(json.dumps(results, indent=1))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
