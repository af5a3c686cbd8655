"""Read your writes (issue 44): is a memory found by meaning the moment its remember answers?

    flock /tmp/graphsvc-bench.lock .venv/bin/python bench/freshness.py [--parts paraphrase,remember,ingest]

- **paraphrase**: graphsvc as its own process (`graphsvc serve`, workers running), for each budget of
  `--budgets` (GRAPHSVC_WRITE_BUDGET_S; 0 leaves every vector and link to the background workers, as
  before issue 44). bench/freshness_set.py's set in a graph of its own over REST: the traps and others
  first, then each memory, its question asked the moment its remember answers (hit@1 / hit@5 "at
  once"); once both backlogs are empty, every question again ("drained"). Twice: on a quiet server, and
  right after another graph bulk-imported `--import` memories (POST /v1/memories/batch, 1,000 a request:
  the backlog) while `--clients` clients keep calling (remember and recall in graphs of their own).
- **remember**: remember p50 / p95, one memory a call, in process on a graph of `--size` memories
  (bench/dataset.py), ROUNDS rounds of EACH, the budget 0 and the default side by side, the workers
  running as in the server; and a third side, at write with its vectors encoded before the run
  ("vectors given"): what the write's own statements cost, without the encoder's share of the CPU.
- **ingest**: remember_many (the `graphsvc import` path), 1,000 a batch, items/s over `--size` memories.
Under PYTHONPATH of a checkout before issue 44 (no budget), remember and ingest measure that code alone.
Every figure is printed with the load average beside it. In-process on a fresh local Neo4j unless
GRAPHSVC_NEO4J_URI is set.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import itertools
import json
import random
import re
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset
from common import neo4j_settings, spawn
from freshness_set import OTHERS, PAIRS

from graphsvc.app import Services
from graphsvc.config import Settings
from graphsvc.domain.models import RememberInput
from graphsvc.encoder.onnx import DEFAULT_MODEL, OnnxEncoder
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.index.keywords import keywords
from graphsvc.services.index.term_stats import analyze
from graphsvc.services.memory import MemoryService

ROUNDS, EACH = 6, 50
BATCH = 1_000
DRAIN_S = 3_600  # the longest a run waits for the backlogs to empty


def load() -> str:
    """The load average (1, 5, 15 min), as `uptime` gives it."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def say(line: str) -> None:
    print(f"{line}   [load {load()}]", flush=True)


def _content(text: str) -> set[str]:
    return {term for word in keywords(text) for term in analyze(word)}


def checked() -> None:
    """Every question shares no content word with its memory (as recall analyzes words)."""
    for memory, question, _ in PAIRS:
        if shared := _content(memory) & _content(question):
            raise SystemExit(f"{question!r} shares {sorted(shared)} with its memory")


# ---- paraphrase: at once and drained, quiet and busy --------------------------------------------


async def remember(api: httpx.AsyncClient, graph: str, text: str) -> dict[str, Any]:
    answer = await api.post("/v1/memories", json={"text": text, "graph": graph})
    answer.raise_for_status()
    return answer.json()


async def ranked(api: httpx.AsyncClient, graph: str, question: str) -> list[str]:
    answer = await api.post("/v1/recall", json={"query": question, "graph": graph, "limit": 5})
    answer.raise_for_status()
    return [m["id"] for m in answer.json()["memories"]]


def hits(ranks: list[list[str]], wanted: list[str]) -> tuple[int, int]:
    return sum(r[:1] == [w] for r, w in zip(ranks, wanted, strict=True)), sum(
        w in r for r, w in zip(ranks, wanted, strict=True)
    )


async def backlog(api: httpx.AsyncClient) -> int:
    text = (await api.get("/metrics")).text
    return sum(
        int(float(n))
        for n in re.findall(r'graphsvc_backlog\{worker="(?:embeddings|extraction)"\} (\S+)', text)
    )


async def drained(api: httpx.AsyncClient) -> float:
    started = time.monotonic()
    while await backlog(api):
        if time.monotonic() - started > DRAIN_S:
            raise RuntimeError("the backlogs did not empty")
        await asyncio.sleep(1)
    return time.monotonic() - started


async def the_set(api: httpx.AsyncClient, label: str) -> dict[str, Any]:
    """The set in a graph of its own: each question at once after its memory's remember, then drained."""
    graph = f"fresh-{secrets.token_hex(4)}"
    traps = [t for _, _, ts in PAIRS for t in ts] + OTHERS
    random.Random(44).shuffle(traps)
    for text in traps:
        await remember(api, graph, text)
    wanted: list[str] = []
    at_once: list[list[str]] = []
    receipts: list[str | None] = []
    took: list[float] = []
    for memory, question, _ in PAIRS:
        started = time.perf_counter()
        made = await remember(api, graph, memory)
        took.append(time.perf_counter() - started)
        at_once.append(await ranked(api, graph, question))
        wanted.append(made["id"])
        receipts.append(made.get("meaning"))
    row: dict[str, Any] = {"at once": hits(at_once, wanted), "load at once": load()}
    row["meaning ready"] = sum(r == "ready" for r in receipts)
    row["remember p50 ms"] = round(statistics.median(took) * 1000, 1)
    say(f"{label}: at once hit@1/hit@5 {row['at once']} of {len(PAIRS)}, {row['meaning ready']} ready")
    return row | {"graph": graph, "wanted": wanted}


async def drained_figures(api: httpx.AsyncClient, row: dict[str, Any], label: str) -> dict[str, Any]:
    row["drain s"] = round(await drained(api), 1)
    again = [await ranked(api, row["graph"], question) for _, question, _ in PAIRS]
    row["drained"], row["load drained"] = hits(again, row["wanted"]), load()
    say(f"{label}: drained hit@1/hit@5 {row['drained']} of {len(PAIRS)} (drain {row['drain s']} s)")
    return row


async def imported(api: httpx.AsyncClient, count: int) -> float:
    """Another graph's bulk import, 1,000 memories a request; its items/s."""
    graph = f"neighbour-{secrets.token_hex(4)}"
    items = dataset.memories(count, seed=5)
    started = time.perf_counter()
    while chunk := list(itertools.islice(items, BATCH)):
        answer = await api.post("/v1/memories/batch", json={"items": chunk, "graph": graph}, timeout=600)
        answer.raise_for_status()
    return count / (time.perf_counter() - started)


async def client(api: httpx.AsyncClient, n: int, stop: asyncio.Event) -> int:
    """A client that keeps calling: a remember, then a recall, in a graph of its own."""
    graph, calls = f"client-{n}-{secrets.token_hex(3)}", 0
    items = dataset.memories(10**6, seed=100 + n)
    questions = dataset.queries(1000, 1000, seed=n, memory_seed=100 + n)
    while not stop.is_set():
        await api.post("/v1/memories", json={**next(items), "graph": graph})
        await api.post("/v1/recall", json={"query": questions[calls % len(questions)], "graph": graph})
        calls += 2
    return calls


async def paraphrase(url: str, args: argparse.Namespace, budget: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=url, timeout=120) as api:
        label = f"budget {budget:g} s, quiet"
        results["quiet"] = await drained_figures(api, await the_set(api, label), label)
        label = f"budget {budget:g} s, after a {args.imports:,}-memory import, {args.clients} clients"
        rate = await imported(api, args.imports)
        say(f"import: {rate:.0f} items/s")
        stop = asyncio.Event()
        callers = [asyncio.create_task(client(api, n, stop)) for n in range(args.clients)]
        try:
            row = await the_set(api, label)
        finally:
            stop.set()
            calls = sum(await asyncio.gather(*callers))
        row |= {"import items/s": round(rate), "client calls": calls, "backlog at once": await backlog(api)}
        results["busy"] = await drained_figures(api, row, label)
    return results


def serve_env(settings: Settings, budget: float) -> dict[str, str]:
    return {
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "GRAPHSVC_AUTH_REQUIRED": "false",
        "GRAPHSVC_DEADLINE_S": "120",
        "GRAPHSVC_WRITE_BUDGET_S": str(budget),
    }


async def paraphrases(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    checked()
    results: dict[str, Any] = {}
    for budget in args.budgets:
        with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as log:
            server, url = spawn(serve_env(settings, budget), Path(log.name))
        try:
            results[f"{budget:g}"] = await paraphrase(url, args, budget)
        finally:
            server.terminate()
            server.wait(timeout=60)
    return results


# ---- remember p50 and ingest, in process ----------------------------------------------------------


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


async def ingest(memory: MemoryService, graph: str, count: int) -> float:
    """remember_many, BATCH a call (the first batch left out: it compiles the statements); items/s."""
    items = dataset.memories(count + BATCH, seed=9)
    first = [RememberInput(**item, graph=graph) for item in itertools.islice(items, BATCH)]
    await memory.remember_many(first)
    started = time.perf_counter()
    while chunk := list(itertools.islice(items, BATCH)):
        await memory.remember_many([RememberInput(**item, graph=graph) for item in chunk])
    return count / (time.perf_counter() - started)


async def in_process(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    settings.deadline_s = 120
    services = Services.build(settings)
    await services.start()
    today = "write_budget_s" not in inspect.signature(MemoryService).parameters
    built = {"store": services.store, "embeddings": services.embeddings, "extraction": services.extraction}
    fresh = list(dataset.memories(args.size + ROUNDS * EACH * 3, seed=31, start=args.size))
    sides = (
        {"today": services.memory}
        if today
        else {
            "budget 0": MemoryService(**built, write_budget_s=0),  # type: ignore[arg-type]
            "at write": services.memory,
            "vectors given": MemoryService(**built | {"embeddings": given(services, fresh)}),  # type: ignore[arg-type]
        }
    )
    results: dict[str, Any] = {"code": "before issue 44" if today else "issue 44"}
    try:
        if "ingest" in args.parts:  # as perf.py measures it: no worker reading meanwhile
            rate = await ingest(services.memory, f"ingest-{secrets.token_hex(3)}", args.size)
            results["ingest items/s"] = round(rate)
            say(f"ingest: {rate:.0f} items/s ({results['code']})")
        services.start_workers()
        if "remember" in args.parts:
            results["remember"] = await remember_p50(services, sides, args.size, fresh)
    finally:
        await services.close()
    return results


class Given:
    """An encoder that answers the vectors `encoder` made of `texts` before the run."""

    def __init__(self, encoder: OnnxEncoder, texts: list[str]) -> None:
        self.name, self.model, self.dimensions = encoder.name, encoder.model, encoder.dimensions
        self._vectors = dict(zip(texts, encoder.encode(texts), strict=True))

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vectors[text] for text in texts]


def given(services: Services, items: list[dict[str, Any]]) -> EmbeddingService:
    """The embeddings of `services`, their vectors of `items` encoded now, before the run."""
    encoder = OnnxEncoder.load(services.embeddings.model_name or DEFAULT_MODEL)
    return EmbeddingService(services.store, Given(encoder, [i["text"] for i in items]), "ok")


async def remember_p50(
    services: Services, sides: dict[str, MemoryService], size: int, fresh: list[dict[str, Any]]
) -> dict[str, Any]:
    graph = f"remember-{secrets.token_hex(3)}"
    items = dataset.memories(size, seed=3)
    while chunk := list(itertools.islice(items, BATCH)):
        await services.memory.remember_many([RememberInput(**item, graph=graph) for item in chunk])
    async with asyncio.timeout(DRAIN_S):  # the workers read the graph first
        while await services.embeddings.backlog() + await services.extraction.backlog():
            await asyncio.sleep(1)
    times: dict[str, list[float]] = {name: [] for name in sides}
    items = iter(fresh)
    for _ in range(ROUNDS):
        for name, memory in sides.items():
            for item in itertools.islice(items, EACH):
                started = time.perf_counter()
                await memory.remember(RememberInput(**item, graph=graph))
                times[name].append(time.perf_counter() - started)
    figures = {name: summary(t) for name, t in times.items()}
    say(f"remember at {size:,}: {json.dumps(figures)}")
    return figures


async def main(args: argparse.Namespace) -> None:
    with neo4j_settings(heap="2g", pagecache="1g") as settings:
        results: dict[str, Any] = {"load at start": load()}
        if {"remember", "ingest"} & set(args.parts):
            results |= await in_process(settings, args)
        if "paraphrase" in args.parts:
            results["paraphrase"] = await paraphrases(settings, args)
    results["load at end"] = load()
    print(json.dumps(results, indent=1, default=str))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--parts", type=lambda s: s.split(","), default=["paraphrase", "remember", "ingest"])
    parser.add_argument("--budgets", type=lambda s: [float(b) for b in s.split(",")], default=[1.0, 0.0])
    parser.add_argument("--import", dest="imports", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--out", help="write the results as JSON here too")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(parser.parse_args()))
