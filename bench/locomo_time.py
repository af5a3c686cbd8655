"""LoCoMo's questions that name a time, in-process: the quick check behind recall's time weight.

Ingests the development conversations twice through `remember_many` (one graph with each turn's
session date as `occurredAt`, one without), then asks every question with `recall(limit=50)` at each
time weight given, and prints R@10 per category and for the questions that name a time. The same
turns, order and windows as bench/locomo.py (which goes through MCP, one `remember` per turn, and
is the figure of record); `--no-reading` asks as the recall before time windows did (no window);
`--strip-time-words` takes the query's time expressions out of its keywords (a variant, not kept). Each
variant is a RecallConfig handed to its own RecallService (docs/recall.md, *Recall's settings*).
Several minutes on a busy machine.

    .venv/bin/python bench/locomo_time.py [--weights 0,0.5,1,2] [--no-reading]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import secrets
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings
from locomo import CATEGORIES, DATA, DEV_HALF, chosen, names_a_time, remember_input, turns

from graphsvc.app import Services
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.services.memory import MemoryService
from graphsvc.services.recall.service import RecallService

BATCH = 100


async def ingest(memory: MemoryService, samples: list[dict], graph: str, dates: bool) -> dict[str, str]:
    """Every turn in conversation order; returns memory id -> dia_id."""
    items = [
        (dia_id, RememberInput.model_validate({**remember_input(s, session, turn, dates), "graph": graph}))
        for s in samples
        for session, dia_id, turn in turns(s)
    ]
    by_memory: dict[str, str] = {}
    for at in range(0, len(items), BATCH):
        chunk = items[at : at + BATCH]
        receipts = await memory.remember_many([req for _, req in chunk])
        by_memory |= {r.id or "": dia_id for r, (dia_id, _) in zip(receipts, chunk, strict=True)}
    return by_memory


async def ask(
    recall: RecallService, samples: list[dict], graph: str, by_memory: dict[str, str], misses: bool = False
) -> dict:
    recalled: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        for qa in s["qa"]:
            evidence = set(qa.get("evidence") or [])
            if not evidence:
                continue
            result = await recall.recall(RecallInput(query=qa["question"], limit=50, graph=graph))
            ranked = [by_memory.get(m.id) for m in result.memories][:10]
            score = len(evidence & set(ranked)) / len(evidence)
            timed = "names a time" if names_a_time(qa["question"]) else "names no time"
            if misses and timed == "names a time" and score < 1:
                window = result.window.model_dump() if result.window else None
                print(f"  miss {score:.2f} {qa['question']!r} evidence {sorted(evidence)} window {window}")
            for name in ("all", CATEGORIES[qa["category"]], timed):
                recalled[name].append(score)
    return {name: (sum(v) / len(v), len(v)) for name, v in recalled.items()}


async def main_async(
    samples: list[dict],
    settings: Any,
    config: RecallConfig,
    weights: list[float],
    when_scores: list[float],
    misses: bool = False,
    dates_only: bool = False,
) -> None:
    settings.deadline_s = 300  # a cold server on a busy machine
    services = Services.build(settings)
    await services.start()
    try:
        graphs = {}
        for dates in (True,) if dates_only else (False, True):
            graph = f"locomo-time-{secrets.token_hex(3)}"
            graphs[dates] = (graph, await ingest(services.memory, samples, graph, dates))
        while await services.embeddings.embed_pending():  # meaning on, as the service (no worker here)
            pass
        names = ["all", *CATEGORIES.values(), "names a time", "names no time"]
        print(f"{'run':28}" + "".join(f"{n:>14}" for n in names))
        for weight, when in itertools.product(weights, when_scores):
            variant = config.model_copy(update={"time_weight": weight, "when_score": when})
            recall = RecallService(services.store, lambda: datetime.now(UTC), services.embeddings, variant)
            for dates, (graph, by_memory) in graphs.items():
                got = await ask(recall, samples, graph, by_memory, misses and dates)
                label = f"W {weight:g}, when {when:g}, {'dates' if dates else 'no dates'}"
                print(f"{label:28}" + "".join(f"{got[n][0]:14.3f}" for n in names), flush=True)
        print(f"{'questions':28}" + "".join(f"{got[n][1]:14d}" for n in names))
    finally:
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA if DATA.exists() else None)
    parser.add_argument("--conversations", default=DEV_HALF)
    parser.add_argument("--weights", default="1", help="time weights to try, comma-separated")
    parser.add_argument(
        "--when-scores", default=str(RecallConfig().when_score), help="time terms for 'when' questions"
    )
    parser.add_argument(
        "--keep-relative", action="store_true", help="variant: relative time words stay in the keywords"
    )
    parser.add_argument("--no-reading", action="store_true", help="recall as before time windows")
    parser.add_argument("--strip-time-words", action="store_true", help="variant: time words leave keywords")
    parser.add_argument("--misses", action="store_true", help="print the time-naming questions missed")
    parser.add_argument("--dates-only", action="store_true", help="only the graph with dates")
    args = parser.parse_args()
    if args.data is None:
        parser.error("--data: the path of data/locomo10.json from snap-research/LoCoMo")
    words = "all" if args.strip_time_words else "keep" if args.keep_relative else "relative"
    config = RecallConfig(time_windows=not args.no_reading, time_words=words)
    samples = chosen(json.loads(args.data.read_text()), args.conversations)
    with neo4j_settings() as settings:
        weights = [float(w) for w in args.weights.split(",")]
        when_scores = [float(w) for w in args.when_scores.split(",")]
        asyncio.run(main_async(samples, settings, config, weights, when_scores, args.misses, args.dates_only))


if __name__ == "__main__":
    main()
