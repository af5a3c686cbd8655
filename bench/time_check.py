"""A synthetic year of daily memories and questions that name a time: how often recall answers them.

One memory a day through 2025 ("Went swimming at the lake with Ana", `occurredAt` its day), a tenth
of them written the next day and saying so ("Yesterday I went hiking..."), and a trip. The service's
clock says 31 December 2025, 18:00 UTC, so "last week" and "yesterday" are read against it. Each
question has the set of memories that answer it; for each we report

- precision@n: the share of the top n that answer it, n the number of answers (10 at most);
- recall@10 and recall@50: the share of the answers among the top 10 and the top 50.

`--no-reading` asks as the recall before time windows did (time words as keywords, no window).

    .venv/bin/python bench/time_check.py [--no-reading]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings

from graphsvc.app import Services
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.services.memory import MemoryService

NOW = datetime(2025, 12, 31, 18, 0, tzinfo=UTC)
ACTIVITIES = [
    ("went swimming at the lake", "swim"),
    ("went hiking in the hills", "hike"),
    ("cooked a risotto for friends", "cook"),
    ("read a novel about sailors", "read"),
    ("played chess at the club", "chess"),
    ("went to the cinema", "cinema"),
    ("worked late on the budget report", "work"),
    ("visited my parents", "parents"),
    ("went to the gym", "gym"),
    ("painted the kitchen", "paint"),
]
PEOPLE = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fay"]
TRIP = date(2025, 6, 14)  # "Flew to Lisbon for the trip"


def year_of_days(seed: int = 7) -> list[tuple[date, str, str, str]]:
    """(day, kind, text, occurredAt) for every day of 2025."""
    rng = random.Random(seed)
    days: list[tuple[date, str, str, str]] = []
    day = date(2025, 1, 1)
    while day.year == 2025:
        what, kind = rng.choice(ACTIVITIES)
        text = f"{what.capitalize()} with {rng.choice(PEOPLE)}"
        occurred = day.isoformat()
        if day == TRIP:
            text, kind = "Flew to Lisbon for the trip with Ana", "trip"
        elif rng.random() < 0.1 and day < date(2025, 12, 30):
            text, occurred = f"Yesterday I {what} with {rng.choice(PEOPLE)}", (day + timedelta(1)).isoformat()
        days.append((day, kind, text, occurred))
        day += timedelta(1)
    return days


def _week(monday: date) -> Callable[[date], bool]:
    return lambda d: monday <= d < monday + timedelta(7)


QUESTIONS: list[tuple[str, Callable[[date, str], bool]]] = [
    ("what did I do yesterday", lambda d, k: d == date(2025, 12, 30)),
    ("what did I do last week", lambda d, k: _week(date(2025, 12, 22))(d)),
    ("what did I do two weeks ago", lambda d, k: date(2025, 12, 14) <= d <= date(2025, 12, 20)),
    ("what did I do in March", lambda d, k: d.month == 3),
    ("what did I do on 14 February", lambda d, k: d == date(2025, 2, 14)),
    ("what did I do on the Friday before 14 June 2025", lambda d, k: d == date(2025, 6, 13)),
    ("what did I do the week before 1 August 2025", lambda d, k: date(2025, 7, 25) <= d <= date(2025, 7, 31)),
    ("what did I do last weekend", lambda d, k: d in (date(2025, 12, 27), date(2025, 12, 28))),
    ("when did I go swimming in March", lambda d, k: d.month == 3 and k == "swim"),
    ("chess in October 2025", lambda d, k: d.month == 10 and k == "chess"),
    ("what did I cook last month", lambda d, k: d.month == 11 and k == "cook"),
    ("what did I do on the Friday before the trip", lambda d, k: d == date(2025, 6, 13)),
]


async def run(memory: MemoryService, graph: str) -> list[tuple[str, float, float, float, int]]:
    days = year_of_days()
    receipts = await memory.remember_many(
        [RememberInput(text=text, occurredAt=occurred, graph=graph) for _, _, text, occurred in days]
    )
    rows: list[tuple[str, float, float, float, int]] = []
    for question, answers in QUESTIONS:
        wanted = {r.id for r, (d, kind, _, _) in zip(receipts, days, strict=True) if answers(d, kind)}
        result = await memory.recall(RecallInput(query=question, limit=50, graph=graph))
        ids = [m.id for m in result.memories]
        top = ids[: min(10, len(wanted))]
        precision = sum(i in wanted for i in top) / len(top) if top else 0.0
        top10 = sum(i in wanted for i in ids[:10]) / len(wanted)
        rows.append((question, precision, top10, sum(i in wanted for i in ids) / len(wanted), len(wanted)))
    return rows


async def main_async(settings: Any, config: RecallConfig) -> None:
    settings.deadline_s = 300  # a cold server on a busy machine
    services = Services.build(settings)
    await services.start()
    memory = MemoryService(services.store, clock=lambda: NOW, recall=config)
    try:
        rows = await run(memory, f"time-check-{secrets.token_hex(3)}")
    finally:
        await memory.close()
        await services.close()
    print(f"{'question':52}{'precision@n':>12}{'recall@10':>11}{'recall@50':>11}{'answers':>9}")
    for question, precision, top10, top50, n in rows:
        print(f"{question:52}{precision:12.2f}{top10:11.2f}{top50:11.2f}{n:9d}")
    means = [sum(r[k] for r in rows) / len(rows) for k in (1, 2, 3)]
    print(f"{'mean':52}{means[0]:12.2f}{means[1]:11.2f}{means[2]:11.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-reading", action="store_true", help="recall as before time windows")
    args = parser.parse_args()
    with neo4j_settings() as settings:
        asyncio.run(main_async(settings, RecallConfig(time_windows=not args.no_reading)))


if __name__ == "__main__":
    main()
