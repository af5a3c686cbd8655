"""Time in recall: the window a query is read as, and the time term of recall's score (README, *When
it happened*), over the times a memory is stored with (services/index/times.py).

 the window is `from`/`to` when given, else the hull of the time expressions of the query,
read against `asOf` (else now), a month or day without a year inside when the graph's memories
happened. The relative expressions leave the keywords ("yesterday" in a memory is another day); the
absolute ones stay (taking them all out cost 1.5 points of R@10 on LoCoMo's questions that name a
time when memories carry no dates: turns say "in June" too; bench/README.md, *Time*;
RecallConfig.time_words). Memories whose times overlap the window join the candidates (hop 0) even
without a keyword hit, and each memory scores `time_weight * term`: the largest fraction of one of its
times (when it happened, or a time it mentions) that lies inside the window, and for a question that
asks when, at least `when_score` if its text states a time (RecallConfig's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from graphsvc.domain.models import RecallInput, TimeWindow
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.domain.spans import DAY_MS, Occurred, Span
from graphsvc.domain.when import Reference, asks_when, mentions, window_of, without
from graphsvc.services.graph_walk import Node
from graphsvc.services.ports import Reader, Row


@dataclass(frozen=True, slots=True)
class Times:
    """A memory's stored times (services/index/times.py) as recall reads them (memory/validity): when it
    happened (None for a memory stored before times were kept) and the spans its text mentions."""

    id: str
    occurred: Span | None
    mentions: tuple[Span, ...]

    @classmethod
    def of(cls, row: Row) -> Times:
        """From a row of memory/validity (a key absent reads as none)."""
        start = row.get("occurredFrom")
        return cls(
            id=row["id"],
            occurred=Span(start, row["occurredTo"]) if start is not None else None,
            mentions=tuple(
                Span(s, e)
                for s, e in zip(row.get("mentionFrom") or [], row.get("mentionTo") or [], strict=True)
            ),
        )


@dataclass(frozen=True)
class Reading:
    """How recall read a request's time: the window (None: no time named), where it came from, the
    query's time expressions, and the query to search by keywords (None when the request has none)."""

    window: Span | None
    source: Literal["query", "explicit"] | None
    text: str | None
    keywords: str | None
    asks_when: bool = False

    def inside(self, rows: Iterable[Times], days: int) -> dict[str, float]:
        """Each memory's share inside the window when it is narrow, spanning at most `days` days (a
        named day, a weekend, a week): `overlaps`; none for a wider window or none."""
        if self.window is None or self.window.end - self.window.start > days * DAY_MS:
            return {}
        return overlaps(self.window, rows)

    def shown(self) -> TimeWindow | None:
        """The window as the recall answer shows it."""
        if self.window is None or self.source is None:
            return None
        return TimeWindow.of(self.window, self.source, self.text)


async def read(store: Reader, req: RecallInput, now: datetime, config: RecallConfig) -> Reading:
    """Read `req`'s window: from/to, else the query's time expressions against asOf (else `now`);
    none, and no question asking when, unless `config.time_windows`."""
    query = req.query
    if not config.time_windows:
        return Reading(None, None, None, query)
    when = asks_when(query or "")
    if req.window is not None:
        return Reading(req.window, "explicit", None, query, when)
    reference = Occurred.at(req.asOf or now)
    found = mentions(query, Reference.of(reference)) if query else []
    if found:  # read again within the graph's own time extent (a month or day without a year)
        found = mentions(query or "", Reference.of(reference, await _extent(store, req.graph)))
    window = window_of(found)
    text = ", ".join(m.text for m in found) or None
    leaving = [
        m for m in found if config.time_words == "all" or (config.time_words == "relative" and m.relative)
    ]
    query = without(query or "", leaving) if leaving else query
    return Reading(window, "query" if window else None, text, query, when)


async def _extent(store: Reader, graph: str) -> Span | None:
    [row] = await store.run("memory/time_extent", graph=graph)
    return Span(row["start"], row["end"]) if row["start"] is not None else None


async def seeds(store: Reader, graph: str, window: Span, config: RecallConfig) -> list[Node]:
    """Up to `time_seeds` memories of the graph whose times overlap `window`, none of whose times end
    more than `time_reach_days` after it (seeds of the walk, hop 0)."""
    rows = await store.run(
        "memory/in_window",
        graph=graph,
        limit=config.time_seeds,
        reach=config.time_reach_days * DAY_MS,
        **{"from": window.start, "to": window.end},
    )
    return [Node.from_row(row, 0) for row in rows]


def term(reading: Reading, rows: Iterable[Times], when_score: float) -> dict[str, float]:
    """Each memory's time term before its weight: its overlap with the window (`overlaps`), and for a
    question that asks when, `when_score` at least for a memory that mentions a time."""
    rows = list(rows)
    scores = overlaps(reading.window, rows) if reading.window else {}
    if reading.asks_when:
        for row in rows:
            if row.mentions:
                scores[row.id] = max(when_score, scores.get(row.id, 0.0))
    return scores


def overlaps(window: Span, rows: Iterable[Times]) -> dict[str, float]:
    """Each memory's time term before its weight: the largest fraction of one of its times inside
    `window` (a memory stored before times were kept has none)."""
    scores: dict[str, float] = {}
    for row in rows:
        spans = (*row.mentions, row.occurred) if row.occurred is not None else row.mentions
        best = max((span.overlap(window) for span in spans), default=0.0)
        if best > 0:
            scores[row.id] = best
    return scores
