"""Spans of time and when a memory happened (`occurredAt`), in epoch milliseconds.

A span is half-open, `[start, end)`, in milliseconds since 1970-01-01 UTC; days are UTC days. The
calendar's days, months and years as spans (`day_range`, `month_span`, `year_span`; days as
ordinals, as `date.toordinal` counts them), and `parse_occurred`, which reads an `occurredAt` value (a year,
month, day or instant, kept with its precision). The time grammar (domain/when.py) resolves a text's
expressions to these spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

MIN_YEAR, MAX_YEAR = 1000, 9999  # occurredAt, from, to and the years a text names
DAY_MS = 86_400_000
_EPOCH = date(1970, 1, 1).toordinal()

Precision = Literal["year", "month", "day", "instant"]


@dataclass(frozen=True, order=True)
class Span:
    """`[start, end)` in epoch milliseconds."""

    start: int
    end: int

    def overlap(self, window: Span) -> float:
        """The fraction of this span that lies inside `window` (0 to 1)."""
        inside = min(self.end, window.end) - max(self.start, window.start)
        return max(0, inside) / max(1, self.end - self.start)

    def hull(self, other: Span) -> Span:
        return Span(min(self.start, other.start), max(self.end, other.end))

    def iso(self) -> tuple[str, str]:
        """Start and end as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the end exclusive)."""
        return _iso(self.start), _iso(self.end)


def _iso(ms: int) -> str:
    days, rest = divmod(ms, DAY_MS)
    if days + _EPOCH > date.max.toordinal():  # the end of year 9999
        return "10000-01-01T00:00:00.000Z"
    day = date.fromordinal(days + _EPOCH)
    seconds, millis = divmod(rest, 1000)
    return (
        f"{day.isoformat()}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{millis:03d}Z"
    )


def _ms(day: int) -> int:
    """A day ordinal's midnight in epoch ms."""
    return (day - _EPOCH) * DAY_MS


def day_of(ms: int) -> int:
    """The ordinal of the day an instant (epoch ms) falls on."""
    return ms // DAY_MS + _EPOCH


def day_range(first: int, last: int) -> Span:
    """The days `first`..`last` (ordinals, inclusive)."""
    return Span(_ms(first), _ms(last + 1))


def month_index(year: int, month: int) -> int:
    return year * 12 + month - 1


def month_span(index: int, count: int = 1) -> Span:
    """`count` calendar months from the month `index` (year * 12 + month - 1)."""
    return Span(_ms(_first_of(index)), _ms(_first_of(index + count)))


def _first_of(index: int) -> int:
    """The ordinal of the first day of month `index`; years past 9999 by arithmetic."""
    year, month0 = divmod(index, 12)
    if year > 9999:
        return date(9999, 12, 31).toordinal() + 1 + (index - month_index(10000, 1)) * 31
    return date(year, month0 + 1, 1).toordinal()


def year_span(year: int) -> Span:
    return month_span(month_index(year, 1), 12)


@dataclass(frozen=True)
class Occurred:
    """An `occurredAt` value: its normalised text, precision and span."""

    text: str
    precision: Precision
    span: Span

    @classmethod
    def at(cls, moment: datetime) -> Occurred:
        """An instant (a naive datetime is UTC)."""
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        _check_year(moment.year)
        start = _ms(moment.toordinal()) + (
            (moment.hour * 3600 + moment.minute * 60 + moment.second) * 1000 + moment.microsecond // 1000
        )
        return cls(_iso(start), "instant", Span(start, start + 1))

    @property
    def day(self) -> int:
        """The ordinal of the day the span starts on."""
        return day_of(self.span.start)


_DATE_ONLY = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def parse_occurred(value: str) -> Occurred:
    """`YYYY`, `YYYY-MM`, `YYYY-MM-DD` or an ISO 8601 instant (without a timezone: UTC).

    Raises:
        ValueError: not one of those, not a real date, or a year outside MIN_YEAR..MAX_YEAR.
    """
    value = value.strip()
    parts = _DATE_ONLY.fullmatch(value)
    if parts is None:
        try:
            return Occurred.at(datetime.fromisoformat(value.replace("z", "Z")))
        except OverflowError:  # an offset that moves 9999-12-31 into the year 10000
            raise ValueError(f"the year must be between {MIN_YEAR} and {MAX_YEAR}") from None
        except ValueError as e:
            if str(e).startswith("the year"):
                raise
            raise ValueError(
                "must be a year (2023), a month (2023-05), a day (2023-05-07) or an ISO 8601 instant"
            ) from None
    year, month, day = (int(p) if p else None for p in parts.groups())
    assert year is not None
    _check_year(year)
    if month is None:
        return Occurred(f"{year:04d}", "year", year_span(year))
    if not 1 <= month <= 12:
        raise ValueError(f"month {month:02d} does not exist")
    if day is None:
        return Occurred(f"{year:04d}-{month:02d}", "month", month_span(month_index(year, month)))
    try:
        ordinal = date(year, month, day).toordinal()
    except ValueError:
        raise ValueError(f"{value} is not a day of the calendar") from None
    return Occurred(f"{year:04d}-{month:02d}-{day:02d}", "day", day_range(ordinal, ordinal))


def _check_year(year: int) -> None:
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"the year must be between {MIN_YEAR} and {MAX_YEAR}")
