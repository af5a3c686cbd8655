"""Each graph's own term statistics, and the analyzer that makes their terms; recall's BM25 scores its
keyword hits with them (services/recall/bm25.py).

Lucene scores BM25 with the statistics of the whole index: every graph on the server, and memories
forgotten but not yet merged away. So graphsvc keeps each graph's own (a `GraphStats` node: per field,
how many memories have it and its total length; a `GraphTerm` node per term: per field, how many
memories hold it), and recall rescores Lucene's top candidates with them. The transaction that
remembers or forgets records what it changed as a `TermDelta` node, which a fold adds to the counters
soon after (term_fold.py); recall reads the counters plus the deltas still pending, so the statistics
are always those of every committed write. Analysis and formula (bm25.py) follow Lucene's, so a graph alone on a fresh server
ranks as Lucene ranks it: the English analyzer (standard word breaks, possessive 's dropped, lower
case, its 33 stop words, Porter stems) and BM25 (k1 1.2, b 0.75) over lengths rounded as Lucene
stores them.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import Stemmer

from graphsvc.services.ports import Row

FIELDS = ("text", "window", "tags")
TOTALS = tuple(f"{f}{kind}" for f in FIELDS for kind in ("Docs", "Length"))  # per field: memories, length
_STOP_WORDS = """
    a an and are as at be but by for if in into is it no not of on or such that the their then there
    these they this to was will with
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
# Unicode word breaks, as Lucene's StandardTokenizer finds them for the common cases: letters joined
# across . ' : · and a right single quote, digits across . , ; ' and a right single quote ("don't",
# "cs:go", "3.5", "1,000" are one word each).
_LETTER = r"[^\W\d_]"
_WORD = re.compile(rf"\w+(?:(?:(?<={_LETTER})[.'\u2019:·](?={_LETTER})|(?<=\d)[.,;'\u2019](?=\d))\w+)*")
_POSSESSIVE = re.compile(r"['\u2019](?<=\w.)s\b")  # a quote first: the engine scans for it
_PORTER: Any = cast(Any, Stemmer).Stemmer("porter")  # PyStemmer has no type information


@functools.lru_cache(maxsize=1 << 17)
def stem(word: str) -> str:
    """Porter's stem close to Lucene's PorterStemmer: words of one or two letters stay, and
    `-bly`/`-logy` take the two departures of Porter's own implementation (bli→ble, logi→log). Still
    apart: Snowball's Porter undoubles fewer consonants ("trekked" is "trekk" here, "trek" there)."""
    if len(word) <= 2:
        return word
    if word.endswith("bly") and not word.endswith("ably"):
        word = word[:-1] + "e"
    elif word.endswith("logy"):
        word = word[:-1]
    return str(_PORTER.stemWord(word))


def analyze(text: str) -> list[str]:
    """The terms Lucene's English analyzer indexes for `text`, in order. Line by line: no word spans a
    line break, and a window repeats the lines of its neighbours' windows, analyzed once (cached)."""
    return [term for line in text.split("\n") for term in _analyze_line(line)]


@functools.lru_cache(maxsize=1 << 16)  # a line is a memory's text: about 64k of them, some 30 MB
def _analyze_line(line: str) -> tuple[str, ...]:
    line = line.lower()
    if "'" in line or "\u2019" in line:
        line = _POSSESSIVE.sub("", line)
    words = _WORD.findall(line)
    return tuple([stem(word) for word in words if word not in STOP_WORDS])  # a list: faster than a generator


def analyzed_lines(*texts: str) -> list[tuple[str, ...]]:
    """The terms of `texts` line by line (`analyze` joins them): each line's are cached, so a line
    recall has read before (a memory's text, in its own window and its neighbours') costs a lookup."""
    return [_analyze_line(line) for text in texts for line in text.split("\n")]


def analyze_tags(tags: Iterable[str]) -> list[str]:
    return [term for tag in tags for term in analyze(tag)]


@dataclass(frozen=True)
class Change:
    """One field of one memory entering (`sign` 1) or leaving (-1) the index, as analyzed terms."""

    field: str
    terms: Sequence[str]
    sign: int


def fields_of(text: str, window: str | None, tags: Iterable[str], sign: int) -> list[Change]:
    """A whole memory entering or leaving the index."""
    return [
        Change("text", analyze(text), sign),
        Change("window", analyze(window or ""), sign),
        Change("tags", analyze_tags(tags), sign),
    ]


def rewindowed(rows: Iterable[Mapping[str, str | None]]) -> list[Change]:
    """Windows replaced (rows with `old` and `new`)."""
    return [
        change
        for row in rows
        for change in (
            Change("window", analyze(row["old"] or ""), -1),
            Change("window", analyze(row["new"] or ""), 1),
        )
    ]


@dataclass(frozen=True)
class Counts:
    """A graph's term statistics, or a change in them: per field, memories that have it and its total
    length (`totals`, keyed as TOTALS); per term, per field, memories whose field holds it (`terms`)."""

    totals: dict[str, int]
    terms: dict[str, dict[str, int]]

    @classmethod
    def of_row(cls, row: Row) -> Counts:
        """From a row of totals and `terms` (rows of term and its count per field), as graph/keyword_hits
        reads a graph's counters and its pending deltas (a count not there is 0)."""
        return cls(
            {key: row[key] or 0 for key in TOTALS},
            {t["term"]: {f: t[f] or 0 for f in FIELDS} for t in row["terms"]},
        )


@dataclass(frozen=True)
class Delta:
    """A TermDelta node, as memory/take_deltas takes it: a graph's change not folded yet."""

    graph: str
    counts: Counts

    @classmethod
    def of(cls, node: Row) -> Delta:
        """From the node's properties (`as_delta`'s: the terms' counts as parallel lists)."""
        terms = {t: {f: node[f][i] or 0 for f in FIELDS} for i, t in enumerate(node["terms"])}
        return cls(node["graphName"], Counts({key: node[key] or 0 for key in TOTALS}, terms))


def tally(changes: Iterable[Change]) -> Counts:
    """What a write changes in a graph's term statistics: per field, the change in memories that have
    it and in its total length; per term (sorted), the change in memories whose field holds it."""
    totals = dict.fromkeys(TOTALS, 0)
    added = {(f, sign): Counter[str]() for f in FIELDS for sign in (1, -1)}
    for change in changes:
        if change.terms:
            totals[f"{change.field}Docs"] += change.sign
            totals[f"{change.field}Length"] += change.sign * len(change.terms)
            added[change.field, change.sign].update(set(change.terms))
    terms: dict[str, dict[str, int]] = {}
    for term in sorted(set[str]().union(*added.values())):
        counts = {f: added[f, 1][term] - added[f, -1][term] for f in FIELDS}
        if any(counts.values()):
            terms[term] = counts
    return Counts(totals, terms)


def summed(counts: Iterable[Counts]) -> Counts:
    """Statistics added up (terms whose counts add up to zero left out)."""
    totals = dict.fromkeys(TOTALS, 0)
    terms: dict[str, dict[str, int]] = {}
    for one in counts:
        for key in TOTALS:
            totals[key] += one.totals[key]
        for term, mine in one.terms.items():
            sums = terms.setdefault(term, dict.fromkeys(FIELDS, 0))
            for f in FIELDS:
                sums[f] += mine[f]
    return Counts(totals, {term: sums for term, sums in terms.items() if any(sums.values())})


def as_delta(graph: str, counts: Counts) -> dict[str, object]:
    """`tally`'s counts as the properties of a TermDelta node (memory/commit): terms as parallel lists."""
    terms = list(counts.terms)
    return {
        "graphName": graph,
        **counts.totals,
        "terms": terms,
        **{f: [counts.terms[t][f] for t in terms] for f in FIELDS},
    }


def folded(deltas: Sequence[Delta]) -> dict[str, list[dict[str, object]]]:
    """TermDelta nodes added up graph by graph, as memory/count takes them."""
    by_graph: dict[str, list[Counts]] = {}
    for d in deltas:
        by_graph.setdefault(d.graph, []).append(d.counts)
    stats: list[dict[str, object]] = []
    terms: list[dict[str, object]] = []
    for graph, mine in sorted(by_graph.items()):
        one = counted(graph, summed(mine))
        stats += one["stats"]
        terms += one["terms"]
    return {"stats": stats, "terms": terms}


def counted(graph: str, counts: Counts) -> dict[str, list[dict[str, object]]]:
    """A graph's counts as memory/count takes them (its terms sorted: writers lock counters in one order)."""
    return {
        "stats": [{"graph": graph, **counts.totals}],
        "terms": [{"graph": graph, "term": t, **counts.terms[t]} for t in sorted(counts.terms)],
    }
