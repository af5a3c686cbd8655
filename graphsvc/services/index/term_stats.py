"""Each graph's own term statistics, and the BM25 that recall scores its keyword hits with.

Lucene scores BM25 with the statistics of the whole index: every graph on the server, and memories
forgotten but not yet merged away. So graphsvc keeps each graph's own (a `GraphStats` node: per field,
how many memories have it and its total length; a `GraphTerm` node per term: per field, how many
memories hold it), and recall rescores Lucene's top candidates with them. The transaction that
remembers or forgets records what it changed as a `TermDelta` node, which a fold adds to the counters
soon after (term_fold.py); recall reads the counters plus the deltas still pending, so the statistics
are always those of every committed write. Analysis and formula follow Lucene's, so a graph alone on a fresh server
ranks as Lucene ranks it: the English analyzer (standard word breaks, possessive 's dropped, lower
case, its 33 stop words, Porter stems) and BM25 (k1 1.2, b 0.75) over lengths rounded as Lucene
stores them.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import Stemmer

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


def rewindowed(rows: Iterable[dict[str, Any]]) -> list[Change]:
    """Windows replaced (rows with `old` and `new`)."""
    return [
        change
        for row in rows
        for change in (
            Change("window", analyze(row["old"] or ""), -1),
            Change("window", analyze(row["new"]), 1),
        )
    ]


def tally(changes: Iterable[Change]) -> dict[str, Any]:
    """What a write changes in a graph's term statistics: per field, the change in memories that have
    it and in its total length; per term (sorted), the change in memories whose field holds it."""
    totals = dict.fromkeys(TOTALS, 0)
    added = {(f, sign): Counter[str]() for f in FIELDS for sign in (1, -1)}
    for change in changes:
        if change.terms:
            totals[f"{change.field}Docs"] += change.sign
            totals[f"{change.field}Length"] += change.sign * len(change.terms)
            added[change.field, change.sign].update(set(change.terms))
    rows: list[dict[str, Any]] = []
    for term in sorted(set[str]().union(*added.values())):
        counts = {f: added[f, 1][term] - added[f, -1][term] for f in FIELDS}
        if any(counts.values()):
            rows.append({"term": term, **counts})
    return {"totals": totals, "terms": rows}


def summed(rows: Iterable[dict[str, Any]]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Statistics added up: rows of totals and `terms` (rows of term and its count per field);
    returns the totals and each term's counts per field (terms whose counts add up to zero left out)."""
    totals = dict.fromkeys(TOTALS, 0)
    terms: dict[str, dict[str, int]] = {}
    for row in rows:
        for key in TOTALS:
            totals[key] += row[key] or 0
        for t in row["terms"]:
            counts = terms.setdefault(t["term"], dict.fromkeys(FIELDS, 0))
            for f in FIELDS:
                counts[f] += t[f] or 0
    return totals, {term: counts for term, counts in terms.items() if any(counts.values())}


def as_delta(graph: str, counts: dict[str, Any]) -> dict[str, Any]:
    """`tally`'s counts as the properties of a TermDelta node (memory/commit): terms as parallel lists."""
    rows = counts["terms"]
    return {
        "graphName": graph,
        **counts["totals"],
        "terms": [r["term"] for r in rows],
        **{f: [r[f] for r in rows] for f in FIELDS},
    }


def folded(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """TermDelta nodes' properties added up graph by graph, as memory/count takes them."""
    by_graph: dict[str, list[dict[str, Any]]] = {}
    for d in deltas:
        by_graph.setdefault(d["graphName"], []).append(d)
    counts: dict[str, Any] = {"stats": [], "terms": []}
    for graph, mine in sorted(by_graph.items()):
        totals, terms = summed(
            {**d, "terms": [{"term": t, **{f: d[f][i] for f in FIELDS}} for i, t in enumerate(d["terms"])]}
            for d in mine
        )
        one = counted(graph, {"totals": totals, "terms": [{"term": t, **terms[t]} for t in sorted(terms)]})
        counts["stats"] += one["stats"]
        counts["terms"] += one["terms"]
    return counts


def counted(graph: str, counts: dict[str, Any]) -> dict[str, Any]:
    """`tally`'s counts of a graph as memory/count takes them."""
    return {
        "stats": [{"graph": graph, **counts["totals"]}],
        "terms": [{"graph": graph, **row} for row in counts["terms"]],
    }


@dataclass(frozen=True)
class GraphStats:
    """A graph's statistics for the terms of one query (read by graph/keyword_hits)."""

    docs: dict[str, int]
    length: dict[str, int]
    df: dict[tuple[str, str], int]

    @classmethod
    def from_row(cls, row: dict[str, Any] | None, pending: Sequence[dict[str, Any]]) -> GraphStats | None:
        """The graph's counters (`row`: None before any) plus its `pending` deltas, each as keyword_hits
        reads them (totals, and `terms`: rows of term and its count per field)."""
        if not row and not pending:
            return None
        totals, df = summed([r for r in (row, *pending) if r])
        return cls(
            docs={f: totals[f"{f}Docs"] for f in FIELDS},
            length={f: totals[f"{f}Length"] for f in FIELDS},
            df={(f, term): counts[f] for term, counts in df.items() for f in FIELDS},
        )

    # Recall reads the counters and the pending deltas property by property while a fold may move one
    # into the other (graph/keyword_hits), so a field can read as memories without length, or as fewer
    # than none: clamped to at least one memory and a positive length, such a read still scores.
    def idf(self, field: str, term: str) -> float:
        docs = max(self.docs[field], 1)
        df = min(max(self.df.get((field, term), 0), 1), docs)
        return math.log(1 + (docs - df + 0.5) / (df + 0.5))

    def average(self, field: str) -> float:
        docs, length = self.docs[field], self.length[field]
        return length / docs if docs > 0 and length > 0 else 1.0


def stored_length(length: int) -> int:
    """A field's length as Lucene keeps it in one byte (SmallFloat.intToByte4 then back): exact
    below 24, then 4 significant bits."""
    if length < 24:
        return length
    rest = length - 24
    shift = max(rest.bit_length() - 4, 0)
    return 24 + ((rest >> shift) << shift)


class QueryScorer:
    """Lucene's BM25 of memories for the query `terms` (analyzed; a repeated term counts again, as
    Lucene sums a repeated clause), summed over the fields of `weights` times each weight, with
    saturation `k1` and length normalisation `b` (RecallConfig's: Lucene's by default). What does
    not depend on the memory (each term's idf, each field's average length) is computed once per
    query, and a memory's fields are read as their analyzed lines (`analyzed_lines`, cached), of
    which only the query's terms are counted."""

    def __init__(
        self,
        stats: GraphStats,
        terms: Sequence[str],
        weights: dict[str, float],
        *,
        k1: float,
        b: float,
    ) -> None:
        self._wanted = frozenset(terms)
        self._k1, self._b = k1, b
        self._fields = [
            (field, stats.average(field), [(term, weight * stats.idf(field, term)) for term in terms])
            for field, weight in weights.items()
        ]

    def attainable(self, fields: Sequence[str] = ("window", "text")) -> float:
        """Σ over the query's terms and `fields` of weight · idf: (k1 + 1) · the BM25 of a memory that
        holds each term once in fields of average length (services/recall/fusion.py: keyword coverage)."""
        return sum(idf for name, _, idfs in self._fields if name in fields for _, idf in idfs)

    def score(self, fields: dict[str, Sequence[tuple[str, ...]]]) -> float:
        """`fields`: each field of `weights` as its analyzed lines."""
        score = 0.0
        for field, average, idfs in self._fields:
            lines = fields[field]
            found = self._wanted.intersection(itertools.chain.from_iterable(lines))
            if not found:
                continue
            norm = self._k1 * (1 - self._b + self._b * stored_length(sum(map(len, lines))) / average)
            for term, idf in idfs:
                if term in found:
                    tf = sum([line.count(term) for line in lines])
                    score += idf * tf / (tf + norm)
        return score
