"""Fill a server with other tenants' data, so that a benchmark can show whether they move its scores.

    await pollute(memory, turns, live=100_000, forgotten=10_000)

`live` memories stay in other graphs: one copy of `turns` (the benchmark's own texts, so the other
tenant shares its vocabulary) and synthetic memories (bench/dataset.py) for the rest, ten graphs of
them. `forgotten` memories are copies of `turns` remembered into further graphs and then forgotten, so
Lucene holds them as deleted documents until its segments merge. Everything goes through graphsvc's
own remember_many and forget, 1,000 items a batch.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import Any

import dataset

from graphsvc.domain.models import IdInput, RememberInput
from graphsvc.services.memory import MemoryService

BATCH = 1000
SYNTHETIC_GRAPHS = 10


async def _remember(memory: MemoryService, graph: str, items: Sequence[dict[str, Any]]) -> list[str]:
    """Ids of the memories created (bulk remember skips an item whose content the graph holds)."""
    created = []
    for at in range(0, len(items), BATCH):
        batch = [RememberInput(**item, graph=graph) for item in items[at : at + BATCH]]
        created += [r.id for r in await memory.remember_many(batch) if r.status == "created" and r.id]
    return created


async def _forget(memory: MemoryService, graph: str, ids: Sequence[str]) -> None:
    for memory_id in ids:
        await memory.forget(IdInput(id=memory_id, graph=graph))


async def pollute(
    memory: MemoryService,
    turns: Sequence[dict[str, Any]],
    *,
    live: int,
    forgotten: int,
    prefix: str = "other",
) -> dict[str, Any]:
    """Remember `live` memories into other graphs and `forgotten` more that are then forgotten (see the
    module doc); returns what was done and how long it took."""
    started = time.perf_counter()
    copies = await _remember(memory, f"{prefix}-turns", list(turns)[:live])
    synthetic = dataset.memories(live - len(copies))
    for n in range(SYNTHETIC_GRAPHS):
        share = list(itertools.islice(synthetic, -(-(live - len(copies)) // SYNTHETIC_GRAPHS)))
        await _remember(memory, f"{prefix}-synthetic-{n}", share)
    doomed: dict[str, list[str]] = {}
    left = forgotten
    for n in itertools.count():
        if left <= 0:
            break
        graph = f"{prefix}-forgotten-{n}"
        doomed[graph] = (await _remember(memory, graph, list(turns)[:left]))[:left]
        left -= len(doomed[graph])
    await asyncio.gather(*(_forget(memory, graph, ids) for graph, ids in doomed.items()))
    return {
        "live": live,
        "live_copies_of_turns": len(copies),
        "forgotten": sum(len(ids) for ids in doomed.values()),
        "graphs": 1 + SYNTHETIC_GRAPHS + len(doomed),
        "seconds": round(time.perf_counter() - started, 1),
    }
