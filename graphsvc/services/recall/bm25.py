"""The BM25 that recall scores its keyword hits with, on each graph's own term statistics
(services/index/term_stats.py keeps them): Lucene's formula (k1 1.2, b 0.75 by default) over lengths
rounded as Lucene stores them, so a graph alone on a fresh server ranks as Lucene ranks it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from graphsvc.services.index.term_stats import FIELDS, Counts, summed
from graphsvc.services.ports import Row


@dataclass(frozen=True)
class GraphStats:
    """A graph's statistics for the terms of one query (read by graph/keyword_hits)."""

    docs: dict[str, int]
    length: dict[str, int]
    df: dict[tuple[str, str], int]

    @classmethod
    def from_row(cls, row: Row | None, pending: Sequence[Row]) -> GraphStats | None:
        """The graph's counters (`row`: None before any) plus its `pending` deltas, each as keyword_hits
        reads them (totals, and `terms`: rows of term and its count per field)."""
        if not row and not pending:
            return None
        counts = summed(Counts.of_row(r) for r in (row, *pending) if r)
        return cls(
            docs={f: counts.totals[f"{f}Docs"] for f in FIELDS},
            length={f: counts.totals[f"{f}Length"] for f in FIELDS},
            df={(f, term): per[f] for term, per in counts.terms.items() for f in FIELDS},
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
