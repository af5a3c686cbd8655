"""A diary of 70 days whose wording repeats week after week: does recall put the named day first?

One person's diary from Monday 6 January to Sunday 16 March 2025, two or three entries a day, each
remembered with `occurredAt` its day and time. The places and habits recur (coffee at Rosa's café,
lengths at the Millfield pool, lunch at the noodle bar, the Saturday market, choir at St. Anne's…), in
much the same words every time (a few ways of writing each down, picked at random), so only the dates
tell one Tuesday's swim from another's. Some entries
name other days the way a diary does ("Still sore from Saturday's run", "finished the book I borrowed
last week"): times that only the entry's own date resolves, pointing at days other than their own.
Written for graphsvc (issue 38), not from any benchmark's wording.

Twelve questions each ask about one day, relative to now (the service's clock: Monday 17 March 2025,
09:00 UTC: "yesterday", "last Tuesday", "three days ago") or by its date ("on 14 February"), in words
every week's entries of that habit share. Each has one answer: that day's entry of that habit. For each
question the script prints the answer's rank and whether the first memory recalled is it (`named day
first`) or at least an entry of that day (`day first`).

Asked twice: right after the diary is remembered, before any background work (`before`: no memory
embedded, none extracted), then after the embedding and extraction backlogs have drained (`after`).

    .venv/bin/python bench/diary.py [--seed 38]

In-process on its own local Neo4j unless GRAPHSVC_NEO4J_URI is set; no worker runs, so the backlog is
drained by this script, step by step, between the two rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import random
import secrets
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings

from graphsvc.app import Services
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.services.memory import MemoryService

FIRST, DAYS = date(2025, 1, 6), 70  # Monday 6 January .. Sunday 16 March 2025
NOW = datetime(2025, 3, 17, 9, 0, tzinfo=UTC)
PEOPLE = ["Sam", "Priya", "Tomás", "Lena", "Joe", "Mira"]
BOOKS = [
    "The Salt Path",
    "Piranesi",
    "Small Things Like These",
    "The Overstory",
    "Klara and the Sun",
    "Circe",
]
DISHES = [
    "mushroom risotto",
    "lentil soup",
    "Thai green curry",
    "fish pie",
    "pierogi",
    "vegetable lasagne",
]
SONGS = ["Bogoroditse Devo", "the Fauré Requiem", "Abide with Me", "Lux Aurumque", "The Parting Glass"]
ITEMS = [
    "a jar of honey",
    "sourdough and cheese",
    "a bunch of tulips",
    "apples and pears",
    "a second-hand lamp",
]
TOPICS = ["her new job", "the summer holiday", "his knee operation", "the house move", "their wedding plans"]
PROJECTS = ["budget report", "website launch", "quarterly review", "grant application"]

# habit: (its time of day, the ways it is written down: templates over the slots below)
HABITS: dict[str, tuple[str, list[str]]] = {
    "coffee": (
        "08:15",
        [
            "Coffee with {person} at Rosa's café on Bridge Street.",
            "Met {person} for coffee at Rosa's before work.",
            "{person} and I grabbed a flat white at Rosa's café; we talked for an hour.",
            "Quick coffee at Rosa's with {person}, who had news about work.",
            "Rosa's café was packed, but {person} saved us a table by the window.",
        ],
    ),
    "swim": (
        "07:00",
        [
            "Swam {lengths} lengths at the Millfield pool before work.",
            "Millfield pool at seven: {lengths} lengths, slow but steady.",
            "Managed {lengths} lengths today; the pool was nearly empty.",
            "Early swim at Millfield, {lengths} lengths of breaststroke.",
            "Counted {lengths} lengths at the Millfield pool, my best this month.",
        ],
    ),
    "lunch": (
        "12:40",
        [
            "Lunch with {person} at the noodle bar near the office.",
            "{person} and I had lunch at the noodle bar; the laksa was great.",
            "Noodle bar lunch with {person}, who is thinking of changing jobs.",
            "Had lunch with {person} near the office, the usual noodle bar.",
        ],
    ),
    "library": (
        "17:30",
        [
            "Borrowed {book} from the Eastgate library.",
            "Picked up {book} at the Eastgate library on the way home.",
            "The Eastgate library finally had {book} in; borrowed it.",
            "Library trip: I borrowed {book}, due back in three weeks.",
        ],
    ),
    "run": (
        "18:10",
        [
            "Ran {km} km along the canal path.",
            "Canal path run, {km} km, legs heavy.",
            "Went for a run by the canal: {km} km, further than I meant to.",
            "{km} km run along the canal at dusk.",
        ],
    ),
    "call": (
        "20:30",
        [
            "Phoned {person} in the evening; we talked about {topic}.",
            "Long call with {person} about {topic}.",
            "{person} rang and we talked about {topic} for ages.",
            "Called {person} after dinner; mostly about {topic}.",
        ],
    ),
    "cook": (
        "19:30",
        [
            "Cooked {dish} for dinner.",
            "Made {dish} tonight, enough for tomorrow too.",
            "Dinner was {dish}, my own recipe.",
            "Tried cooking {dish} for dinner; it turned out well.",
        ],
    ),
    "work": (
        "16:00",
        [
            "Long day at the office, the {project} deadline is close.",
            "The {project} ate the whole day at work.",
            "Stayed late at the office for the {project}.",
        ],
    ),
}
WEEKLY = {  # weekday: (habit, time of day, its ways of being written down)
    5: (
        "market",
        "10:00",
        [
            "Bought {item} at the Saturday market.",
            "Saturday market: came home with {item}.",
            "Wandered the market this morning and bought {item}.",
        ],
    ),
    3: (
        "choir",
        "19:00",
        [
            "Choir practice at St. Anne's; we rehearsed {song}.",
            "At choir tonight we worked on {song}.",
            "St. Anne's choir: {song} again, the altos were off.",
        ],
    ),
}
# Entries that name another day's habit, resolved only by their own date: (the habit, the day it names
# as a function of the entry's own day, the text over that day's entry's slots).
ASIDES: list[tuple[str, Any, str]] = [
    ("run", lambda d: d - timedelta((d.weekday() - 5) % 7), "Still sore from Saturday's {km} km run."),
    ("library", None, "Finished {book}, the one I borrowed last week."),
    (
        "call",
        lambda d: d - timedelta((d.weekday() - 1) % 7),
        "{person} phoned back about {topic}, as we discussed on Tuesday.",
    ),
    (
        "swim",
        lambda d: d - timedelta(2),
        "Two days ago I swam {lengths} lengths; today my shoulders feel it.",
    ),
    (
        "cook",
        lambda d: d - timedelta((d.weekday() - 4) % 7 or 7),
        "Last Friday's {dish} was better than tonight's leftovers.",
    ),
]


@dataclass(frozen=True)
class Entry:
    day: date
    habit: str
    text: str
    at: str  # occurredAt
    slots: tuple[tuple[str, Any], ...] = ()
    about: tuple[date, str] | None = None  # an aside: the earlier day and habit it names


@dataclass(frozen=True)
class Question:
    text: str
    day: date
    habit: str
    slots: tuple[tuple[str, str], ...] = ()  # slots the answer must have (the question names them)


QUESTIONS = [
    Question("Who did I have coffee with yesterday?", date(2025, 3, 16), "coffee"),
    Question("How many lengths did I swim last Tuesday?", date(2025, 3, 11), "swim"),
    Question("What did I buy at the market on Saturday?", date(2025, 3, 15), "market"),
    Question("What did I cook for dinner on 14 February?", date(2025, 2, 14), "cook"),
    Question("Who did I phone three days ago?", date(2025, 3, 14), "call"),
    Question("Which book did I borrow from the library on 3 February 2025?", date(2025, 2, 3), "library"),
    Question("What did we rehearse at choir on 6 March?", date(2025, 3, 6), "choir"),
    Question("Who did I have lunch with on 21 January?", date(2025, 1, 21), "lunch"),
    Question("How far did I run the day before yesterday?", date(2025, 3, 15), "run"),
    Question("Who did I meet for coffee last Wednesday?", date(2025, 3, 12), "coffee"),
    Question("What did I cook last Friday?", date(2025, 3, 14), "cook"),
    Question(
        "What did Sam and I talk about on the phone on 10 February?",
        date(2025, 2, 10),
        "call",
        (("person", "Sam"),),
    ),
]


def _slots(rng: random.Random) -> dict[str, Any]:
    return {
        "person": rng.choice(PEOPLE),
        "book": rng.choice(BOOKS),
        "dish": rng.choice(DISHES),
        "song": rng.choice(SONGS),
        "item": rng.choice(ITEMS),
        "topic": rng.choice(TOPICS),
        "project": rng.choice(PROJECTS),
        "lengths": rng.choice([20, 24, 30, 32, 40]),
        "km": rng.choice([5, 6, 8, 10, 12]),
    }


def diary(seed: int = 38) -> list[Entry]:
    """Every entry, day by day: two or three habits a day (the days questions ask about hold their habit
    once), the weekly market and choir, and now and then an aside naming an earlier day's habit."""
    rng = random.Random(seed)
    asked = {(q.day, q.habit): dict(q.slots) for q in QUESTIONS}
    entries: list[Entry] = []
    for n in range(DAYS):
        day = FIRST + timedelta(n)
        habits = rng.sample(sorted(HABITS), rng.choice([2, 2, 3]))
        habits = [h for h in habits if (day, h) not in asked] + [
            h for d, h in asked if d == day and h in HABITS
        ]
        chosen = [(h, *HABITS[h]) for h in habits]
        if day.weekday() in WEEKLY:
            chosen.append(WEEKLY[day.weekday()])
        for habit, at, texts in sorted(chosen, key=lambda c: c[1]):
            slots = _slots(rng) | asked.get((day, habit), {})
            text = rng.choice(texts).format(**slots)
            entries.append(Entry(day, habit, text, f"{day.isoformat()}T{at}:00Z", tuple(slots.items())))
        if rng.random() < 0.2 and (aside := _aside(rng, entries, day)):
            entries.append(aside)
    return entries


def _aside(rng: random.Random, entries: list[Entry], day: date) -> Entry | None:
    """An aside written on `day` about an earlier day's habit that happened (None when none did)."""
    for habit, named, text in rng.sample(ASIDES, len(ASIDES)):
        if named is None:  # "last week": the week before this one
            monday = day - timedelta(day.weekday() + 7)
            found = [e for e in entries if e.habit == habit and monday <= e.day < monday + timedelta(7)]
        else:
            found = [e for e in entries if e.habit == habit and e.day == named(day) and e.day < day]
        if found:
            source = rng.choice(found)
            at = f"{day.isoformat()}T21:45:00Z"
            return Entry(day, "aside", text.format(**dict(source.slots)), at, (), (source.day, habit))
    return None


def answers(entries: list[Entry], question: Question) -> list[int]:
    """The positions of the question's answers: its day's entry of its habit, and the asides that name
    that entry's day and habit."""
    [found] = [i for i, e in enumerate(entries) if e.day == question.day and e.habit == question.habit]
    asides = [i for i, e in enumerate(entries) if e.about == (question.day, question.habit)]
    others = [e for e in entries if e.habit == question.habit and e.day != question.day]
    assert len(others) >= 6, f"{question.habit} recurs on {len(others)} other days only"
    return [found, *asides]


def memory_at(services: Services, clock: Any) -> MemoryService:
    """The service's memory with the benchmark's clock, its embeddings and extraction (where this
    version of graphsvc has them) and its recall settings."""
    given = {
        "embeddings": services.embeddings,
        "recall": getattr(services.settings, "recall", None),
        "extraction": getattr(services, "extraction", None),
    }
    accepted = inspect.signature(MemoryService).parameters
    return MemoryService(services.store, clock, **{k: v for k, v in given.items() if k in accepted and v})


async def drain(services: Services) -> None:
    """Every memory embedded and extracted, as the background workers would (none runs here)."""
    steps = [services.embeddings.embed_pending]
    extraction = getattr(services, "extraction", None)
    if extraction is not None and extraction.on:
        steps.append(extraction.extract_pending)
    for step in steps:
        while await step():
            pass


async def ask(
    memory: MemoryService, graph: str, ids: list[str], entries: list[Entry]
) -> list[dict[str, Any]]:
    rows = []
    for question in QUESTIONS:
        wanted = {ids[i] for i in answers(entries, question)}
        result = await memory.recall(RecallInput(query=question.text, graph=graph, limit=50))
        ranked = [m.id for m in result.memories]
        by_id = dict(zip(ids, entries, strict=True))
        first = by_id.get(ranked[0]) if ranked else None
        ranks = [n + 1 for n, i in enumerate(ranked) if i in wanted]
        rows.append(
            {
                "question": question.text,
                "rank": ranks[0] if ranks else None,
                "named day first": bool(ranks) and ranks[0] == 1,
                "day first": first is not None and question.day in (first.day, (first.about or (None,))[0]),
                "first": first.text if first else "",
            }
        )
    return rows


def report(label: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{label}")
    print(f"{'question':64}{'rank':>6}{'named day first':>17}{'day first':>11}")
    for row in rows:
        rank = row["rank"] if row["rank"] is not None else "-"
        print(
            f"{row['question']:64}{rank:>6}{'yes' if row['named day first'] else 'no':>17}{'yes' if row['day first'] else 'no':>11}"
        )
    named = sum(r["named day first"] for r in rows)
    day = sum(r["day first"] for r in rows)
    top5 = sum(r["rank"] is not None and r["rank"] <= 5 for r in rows)
    print(
        f"named day first {named} of {len(rows)}, an entry of the day first {day}, answer in the top 5 {top5}"
    )


async def run(settings: Any, seed: int) -> None:
    settings.deadline_s = 300  # a cold server on a busy machine
    services = Services.build(settings)
    await services.start()
    memory = memory_at(services, lambda: NOW)
    entries = diary(seed)
    graph = f"diary-{secrets.token_hex(3)}"
    try:
        receipts = await memory.remember_many(
            [RememberInput(text=e.text, occurredAt=e.at, graph=graph) for e in entries]
        )
        ids = [r.id or "" for r in receipts]
        print(
            f"{len(entries)} entries over {DAYS} days, {len(QUESTIONS)} questions; the clock at {NOW.isoformat()}"
        )
        report("before: nothing embedded or extracted", await ask(memory, graph, ids, entries))
        await drain(services)
        report("after: every memory embedded and extracted", await ask(memory, graph, ids, entries))
    finally:
        await memory.close()
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    with neo4j_settings() as settings:
        asyncio.run(run(settings, args.seed))


if __name__ == "__main__":
    main()
