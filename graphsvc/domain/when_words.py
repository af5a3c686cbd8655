"""The words of the time grammar (domain/when.py), one table per language.

A `Language` holds every word and affix the grammar's patterns are made of; domain/when.py builds its
patterns from a table and turns what they match into spans by the same rules for every language. A
second language is a second table here (and, where its word order differs from English's, patterns of
its own there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Language:
    """The words the grammar is made of. Fields named as regex alternations take `a|b`; the others
    are words or phrases (several words match any whitespace between them)."""

    months: Mapping[str, int]  # January 1
    weekdays: Mapping[str, int]  # Monday 0
    numbers: Mapping[str, int]
    approximate: frozenset[str]  # counts that are not exact ("a few"): their span widens
    units: Mapping[str, str]  # word: day, week, weekend, month or year
    relative_days: Mapping[str, int]  # word: days after the reference ("yesterday": -1)
    last: str  # regex alternations: "last Friday", "last week", "last May"
    this: str
    next: str
    rolling: frozenset[str]  # the words of `last` that mean the days up to the reference ("the past week")
    ago: str  # after a count: "two weeks ago"
    before: str  # between an offset and an expression: "the week before 9 June"
    after: str
    month_prepositions: str  # what must precede a month named alone ("in", "during")
    on: str  # before a day: "on Friday", "the Friday before on 9 June"
    the: str  # before an offset or a day: "the week before", "the 7th of May"
    day_of: str  # between a day and its month: "7th of May"
    ordinal_suffixes: str  # after a day's number: "7th"
    plural: str  # after a weekday or a year, a plural that names no one day or year: "Fridays", "1990s"
    asks_when: str  # how a question that asks for a time begins
    day_first: bool = False  # "03/04/2023": day/month (True) or month/day (False, US)
    lowercase_not_month: frozenset[str] = field(default_factory=frozenset[str])  # "may" the verb


def _numbered(words: str, first: int = 1) -> dict[str, int]:
    return {word: n for n, word in enumerate(words.split(), first)}


ENGLISH = Language(
    months={
        **_numbered("january february march april may june july august september october november december"),
        **_numbered("jan feb mar apr may jun jul aug sep oct nov dec"),
        "sept": 9,
    },
    weekdays=_numbered("monday tuesday wednesday thursday friday saturday sunday", 0),
    numbers={
        **_numbered("one two three four five six seven eight nine ten eleven twelve"),
        "a": 1,
        "an": 1,
        "a couple of": 2,
        "a few": 3,
        "several": 4,
    },
    approximate=frozenset({"a couple of", "a few", "several"}),
    units={
        **dict.fromkeys(("day", "days"), "day"),
        **dict.fromkeys(("week", "weeks"), "week"),
        "weekend": "weekend",
        **dict.fromkeys(("month", "months"), "month"),
        **dict.fromkeys(("year", "years"), "year"),
    },
    relative_days={
        "the day before yesterday": -2,
        "the day after tomorrow": 2,
        "yesterday": -1,
        "last night": -1,
        **dict.fromkeys(("today", "tonight", "this morning", "this afternoon", "this evening"), 0),
        "tomorrow": 1,
    },
    last=r"last|past|previous",
    this=r"this|current",
    next=r"next|coming",
    rolling=frozenset({"past"}),
    ago=r"ago|back",
    before=r"before|prior\s+to",
    after=r"after",
    month_prepositions=r"in|during|since|until|till|by|through|early|late|mid|of",
    on=r"on",
    the=r"the",
    day_of=r"of",
    ordinal_suffixes=r"st|nd|rd|th",
    plural=r"s",
    asks_when=r"when|since\s+when|how\s+long\s+ago|(?:what|which)\s+(?:year|month|day|date|week|time)",
    lowercase_not_month=frozenset({"may"}),
)
