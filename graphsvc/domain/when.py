"""Time: the times a text names, as spans of epoch ms (domain/spans.py: spans and `occurredAt`).

Days are UTC days and weeks run Monday to Sunday. `mentions` finds the time expressions of a text
("yesterday", "last Friday", "two weeks ago", "in March", "7 May 2023", "2023-05-07", "the week before
9 June 2023") and resolves each against a reference: the memory's `occurredAt` (else when it was remembered) for a
memory, `asOf` (else now) for a query. The grammar's words are a table per language (`Language`,
domain/when_words.py: every word and affix its patterns are made of); the rules that turn a match
into a span are the same for every language. Pure and fast: one pass of a dozen compiled regexes
(tens of microseconds for a LoCoMo turn; bench/README.md, *Time*).

Readings where English is ambiguous (README, *When it happened*):
- a month or day without a year ("in March", "on 7 May") is the latest one that starts no later than
  the reference (past reading: said in January, "in March" is last year's March); given the extent
  of the graph's times, the latest such one inside it;
- "last Friday" is the latest Friday before the reference's day (said on a Friday: a week before);
  "next Friday" the first after it; "this Friday" the one in the reference's week; a bare "Friday"
  or "on Friday" the latest on or before the reference's day;
- "N weeks ago" is the 7 days around the day N weeks before; "N months ago" / "N years ago" the
  calendar month / year N before the reference's;
- "03/04/2023" is month/day (US; `Language.day_first` says): 4 March 2023; day/month only when the
  first number is over 12;
  `from`/`to` (ISO 8601) are the unambiguous way to ask for a window.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from graphsvc.domain.spans import (
    MAX_YEAR,
    MIN_YEAR,
    Occurred,
    Span,
    day_of,
    day_range,
    month_index,
    month_span,
    year_span,
)
from graphsvc.domain.when_words import ENGLISH, Language

# ---- the grammar ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """What relative expressions are resolved against: a day (None when only the year or month is
    known: then only absolute expressions resolve) and the span year-less dates are picked within."""

    day: int | None
    span: Span
    extent: Span | None = None  # the graph's times: a year-less date is picked inside them if it can

    @classmethod
    def of(cls, occurred: Occurred, extent: Span | None = None) -> Reference:
        fine = occurred.precision in ("day", "instant")
        return cls(occurred.day if fine else None, occurred.span, extent)


@dataclass(frozen=True)
class Mention:
    """A time expression of a text: where it is (`start`, `end`: character offsets), its span, and
    whether it is relative (to when it was said: "yesterday", "last week", "two days ago", "on Friday")
    rather than absolute ("June", "2023", "7 May")."""

    start: int
    end: int
    text: str
    span: Span
    relative: bool = False


def _alt(words: Sequence[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


@dataclass(frozen=True)
class _Grammar:
    language: Language
    rules: list[tuple[re.Pattern[str], Callable[[_Grammar, re.Match[str], Reference], Span | None]]]
    offset: re.Pattern[str]  # "the week before" in front of another expression
    trigger: re.Pattern[str]  # a word or digit without which no rule can match: most texts stop here
    asks_when: re.Pattern[str]


def _grammar(lang: Language) -> _Grammar:
    month, weekday = _alt(list(lang.months)), _alt(list(lang.weekdays))
    number, unit = _alt(list(lang.numbers)), _alt(list(lang.units))
    rel = rf"(?:(?P<last>{lang.last})|(?P<this>{lang.this})|(?P<next>{lang.next}))"
    day = rf"(?P<d>[0-3]?\d)(?:{lang.ordinal_suffixes})?"
    year = r"(?P<y>\d{4})"
    patterns: list[tuple[str, Callable[[_Grammar, re.Match[str], Reference], Span | None]]] = [
        (rf"(?<![\d-]){year}-(?P<m>\d{{2}})(?:-(?P<d>\d{{2}}))?\b", _iso_date),
        (r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})\b", _numeric),
        (rf"\b{day}\s+(?:(?:{lang.day_of})\s+)?(?P<month>{month})\.?(?:,?\s+{year})?\b", _day_month),
        (rf"\b(?P<month>{month})\.?\s+{day}\b(?!:)(?:,?\s+{year})?", _day_month),
        (rf"\b(?P<month>{month})\.?,?\s+{year}\b", _month_year),
        (rf"\b(?:{rel}\s+|(?:{lang.month_prepositions})[\s-]+)(?P<month>{month})\b", _month),
        (rf"(?<![\d$#.,:/-])\b(?P<y>(?:19|20)\d\d)\b(?!\s*%|'?(?:{lang.plural})\b|[.,:/-]\d)", _year),
        (rf"\b(?P<word>{_alt(list(lang.relative_days))})\b", _relative_day),
        (rf"\b{rel}\s+(?P<unit>{unit})\b", _relative_unit),
        (rf"\b(?:{rel}\s+|(?:{lang.on})\s+)?(?P<wd>{weekday})\b(?!{lang.plural})", _weekday),
        (rf"\b(?P<n>{number}|\d{{1,3}})\s+(?P<unit>{unit})\s+(?:{lang.ago})\b", _ago),
    ]
    offset = re.compile(
        rf"\b(?:(?:{lang.the}|{lang.last})\s+)?(?:(?P<n>{number}|\d{{1,3}})\s+)?(?P<unit>{unit}|{weekday})"
        rf"\s+(?:(?P<before>{lang.before})|(?P<after>{lang.after}))\s+(?:(?:{lang.on}|{lang.the})\s+)?$",
        re.IGNORECASE,
    )
    words = [*lang.months, *lang.weekdays, *lang.units, *(w.split()[-1] for w in lang.relative_days)]
    trigger = re.compile(rf"\d|\b(?:{_alt(words)})\b", re.IGNORECASE)
    asks = re.compile(rf"\W*(?:{lang.asks_when})\b", re.IGNORECASE)
    return _Grammar(
        lang, [(re.compile(p, re.IGNORECASE), rule) for p, rule in patterns], offset, trigger, asks
    )


# ---- the rules: a match and a reference to a span ------------------------------------------------


def _number(g: _Grammar, word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else g.language.numbers[word]


def _month_of(g: _Grammar, m: re.Match[str]) -> int | None:
    word = m.group("month")
    if word in g.language.lowercase_not_month:  # "you may 2 ..." is not a date
        return None
    return g.language.months[word.lower()]


def _year_of(m: re.Match[str]) -> int | None:
    y = m.group("y")
    return int(y) if y and MIN_YEAR <= int(y) <= MAX_YEAR else None


def _a_day(year: int, month: int, day: int) -> Span | None:
    try:
        ordinal = date(year, month, day).toordinal()
    except ValueError:
        return None
    return day_range(ordinal, ordinal)


def _iso_date(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    year, month = _year_of(m), int(m.group("m"))
    if year is None or not 1 <= month <= 12:
        return None
    if m.group("d") is None:
        return month_span(month_index(year, month))
    return _a_day(year, month, int(m.group("d")))


def _numeric(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    a, b, year = int(m.group("a")), int(m.group("b")), _year_of(m)
    day_first = g.language.day_first if max(a, b) <= 12 else a > 12  # else the one that can be a month
    month, day = (b, a) if day_first else (a, b)
    return _a_day(year, month, day) if year and 1 <= month <= 12 else None


def _day_month(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    month, day = _month_of(g, m), int(m.group("d"))
    if month is None or not 1 <= day <= 31:
        return None
    if m.group("y"):
        year = _year_of(m)
        return _a_day(year, month, day) if year else None
    return _latest(ref, lambda y: _a_day(y, month, day))


def _month_year(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    month, year = _month_of(g, m), _year_of(m)
    return month_span(month_index(year, month)) if month and year else None


def _month(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    month = _month_of(g, m)
    if month is None:
        return None
    at = _ref_month(ref)
    if m.group("last"):
        back = (at % 12 - (month - 1)) % 12 or 12
        return month_span(at - back)
    if m.group("next"):
        ahead = ((month - 1) - at % 12) % 12 or 12
        return month_span(at + ahead)
    if m.group("this"):
        return month_span(at - at % 12 + month - 1)
    return _latest(ref, lambda y: month_span(month_index(y, month)))


def _year(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    year = _year_of(m)
    return year_span(year) if year else None


def _relative_day(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    if ref.day is None:
        return None
    shift = g.language.relative_days[" ".join(m.group("word").lower().split())]
    return day_range(ref.day + shift, ref.day + shift)


def _relative_unit(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    unit = g.language.units[m.group("unit").lower()]
    step = -1 if m.group("last") else 1 if m.group("next") else 0
    if unit == "year":
        return year_span(_ref_year(ref) + step)
    if unit == "month":
        return month_span(_ref_month(ref) + step)
    if ref.day is None:
        return None
    if m.group("last") and m.group("last").lower() in g.language.rolling and unit == "week":
        return day_range(ref.day - 6, ref.day)  # "the past week": the seven days up to the reference
    monday = ref.day - date.fromordinal(ref.day).weekday() + 7 * step
    if unit == "weekend":  # last weekend: the one before the reference's week, said on a weekday or not
        return day_range(monday + 5, monday + 6)
    if unit == "day":
        return day_range(ref.day + step, ref.day + step)
    return day_range(monday, monday + 6)


def _weekday(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    if ref.day is None:
        return None
    wd, today = g.language.weekdays[m.group("wd").lower()], date.fromordinal(ref.day).weekday()
    if m.group("next"):
        day = ref.day + ((wd - today) % 7 or 7)
    elif m.group("this"):
        day = ref.day - today + wd
    elif m.group("last"):
        day = ref.day - ((today - wd) % 7 or 7)
    else:
        day = ref.day - (today - wd) % 7
    return day_range(day, day)


def _ago(g: _Grammar, m: re.Match[str], ref: Reference) -> Span | None:
    word = " ".join(m.group("n").lower().split())
    n, unit = _number(g, word), g.language.units[m.group("unit").lower()]
    rough = word in g.language.approximate
    if unit == "year":
        return year_span(_ref_year(ref) - n)
    if unit == "month":
        return month_span(_ref_month(ref) - n)
    if ref.day is None:
        return None
    if unit == "day":
        spread = n // 2 + 1 if rough else 0
        return day_range(ref.day - n - spread, ref.day - max(1, n - spread))
    days = 7 * n
    spread = 3 + (days // 2 if rough else 0)
    return day_range(ref.day - days - spread, ref.day - days + spread)


def _ref_month(ref: Reference) -> int:
    day = ref.day if ref.day is not None else day_of(ref.span.start)
    moment = date.fromordinal(day)
    return month_index(moment.year, moment.month)


def _ref_year(ref: Reference) -> int:
    return _ref_month(ref) // 12


def _latest(ref: Reference, in_year: Callable[[int], Span | None]) -> Span | None:
    """A year-less date: the latest that starts before the reference ends, inside the graph's extent
    when one of the last ten such dates is."""
    year, candidates = _ref_year(ref) + 1, list[Span]()
    while len(candidates) < 10 and year > MIN_YEAR:
        span = in_year(year)
        year -= 1
        if span is not None and span.start < ref.span.end:
            candidates.append(span)
    if not candidates:
        return None
    extent = ref.extent
    inside = [s for s in candidates if extent and s.start < extent.end and s.end > extent.start]
    return (inside or candidates)[0]


def _shifted(g: _Grammar, prefix: re.Match[str], base: Span) -> Span | None:
    """`the week before X`, `the day after X`, `the Friday before X`, `two weeks before X`."""
    word = prefix.group("unit").lower()
    n = _number(g, prefix.group("n")) if prefix.group("n") else 1
    first, last = day_of(base.start), day_of(base.end - 1)
    if word in g.language.weekdays:
        wd = g.language.weekdays[word]
        if prefix.group("before"):
            day = first - ((date.fromordinal(first).weekday() - wd) % 7 or 7)
        else:
            day = last + ((wd - date.fromordinal(last).weekday()) % 7 or 7)
        return day_range(day, day)
    unit = g.language.units[word]
    if unit == "weekend":
        if prefix.group("before"):
            saturday = first - ((date.fromordinal(first).weekday() - 5) % 7 or 7)
        else:
            saturday = last + ((5 - date.fromordinal(last).weekday()) % 7 or 7)
        return day_range(saturday, saturday + 1)
    if unit in ("month", "year"):
        months = n * (12 if unit == "year" else 1)
        start = date.fromordinal(first if prefix.group("before") else last + 1)
        index = month_index(start.year, start.month)
        return month_span(index - months, months) if prefix.group("before") else month_span(index, months)
    days = n * (7 if unit == "week" else 1)
    return day_range(first - days, first - 1) if prefix.group("before") else day_range(last + 1, last + days)


# ---- finding them ---------------------------------------------------------------------------------

_GRAMMARS: dict[int, _Grammar] = {}


def _grammar_of(language: Language) -> _Grammar:
    key = id(language)
    if key not in _GRAMMARS:
        _GRAMMARS[key] = _grammar(language)
    return _GRAMMARS[key]


def mentions(text: str, reference: Reference, language: Language = ENGLISH) -> list[Mention]:
    """The time expressions of `text`, in order, none overlapping (the longest wins), each resolved
    against `reference`. An expression that names no real date (30 February) or needs a day the
    reference does not have ("yesterday" of a memory known only by its month) is left out."""
    g = _grammar_of(language)
    if g.trigger.search(text) is None:
        return []
    found: list[Mention] = []
    for pattern, rule in g.rules:
        for m in pattern.finditer(text):
            span = rule(g, m, reference)
            if span is not None:
                relative = rule in _RELATIVE or any(m.groupdict().get(k) for k in ("last", "this", "next"))
                found.append(Mention(m.start(), m.end(), m.group(0), span, relative))
    return _longest([_with_offset(g, text, m) for m in _longest(found)])


_RELATIVE = frozenset({_relative_day, _relative_unit, _weekday, _ago})


def asks_when(question: str, language: Language = ENGLISH) -> bool:
    """Whether a question asks for a time ("When did …", "What year …", "How long ago …")."""
    return _grammar_of(language).asks_when.match(question) is not None


def _longest(found: list[Mention]) -> list[Mention]:
    kept: list[Mention] = []
    for m in sorted(found, key=lambda m: (m.start - m.end, m.start)):
        if all(m.end <= k.start or m.start >= k.end for k in kept):
            kept.append(m)
    return sorted(kept, key=lambda m: m.start)


def _with_offset(g: _Grammar, text: str, mention: Mention) -> Mention:
    prefix = g.offset.search(text, 0, mention.start)
    if prefix is None:
        return mention
    span = _shifted(g, prefix, mention.span)
    if span is None:
        return mention
    return Mention(prefix.start(), mention.end, text[prefix.start() : mention.end], span, mention.relative)


def window_of(found: Sequence[Mention]) -> Span | None:
    """The window a question's time expressions name together: the hull of their spans."""
    if not found:
        return None
    hull = found[0].span
    for m in found[1:]:
        hull = hull.hull(m.span)
    return hull


def without(text: str, found: Sequence[Mention]) -> str:
    """`text` with the expressions cut out (what is left are the question's keywords)."""
    parts, at = list[str](), 0
    for m in found:
        parts.append(text[at : m.start])
        at = m.end
    parts.append(text[at:])
    return " ".join(" ".join(parts).split())
