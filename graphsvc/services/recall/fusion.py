"""How recall weighs what it knows about one memory into its score (docs/recall.md, scoring).

Pure: recall gathers each candidate's `Evidence` (its BM25 and the query's attainable BM25, its cosine
and its window neighbours' to the query, its hop, the entities that led to it, whether it mentions a
named entity), and `fuse` turns it into the score's `Parts`, every weight from the `RecallConfig`
(graphsvc/domain/recall_config.py; `formula` writes the formula with its values, as docs/recall.md
shows it):

    score    = keyword_weight · keyword · (named_boost if named else 1) + walk + meaning_weight · meaning
               + time_weight · time + narrow_weight · inside
    keyword  = coverage ^ keyword_power,   coverage = min(1, (k1 + 1) · BM25(memory) / Σ_t Σ_f w_f · idf_f(t))
    meaning  = 0 if s ≤ floor, else ½ · clip((s - floor) / (ceiling - floor), 0, 1) + ½ · clip(1 - (s* - s) / gap, 0, 1)
               s = max(cos(q, m), spread · cos(q, n) for n),   s* = the largest s among the recall's candidates
    walk     = 1 / (1 + hop) + min(1, Σ 1 / degree(e)) + bridge_weight · bridge
    bridge   = how far the memory shares rare entities with the first pass's best (services/recall/bridges.py)
    time     = the largest share of one of the memory's times inside the window the request names
               (services/recall/timing.py; 0 when no time window was read)
    inside   = the same share when the window is narrow (at most narrow_days days), else 0: its weight
               is more than any memory scores otherwise, so a memory inside a named day or week
               outranks every memory outside it, whatever its words or meaning (or whether it is
               embedded yet)

`coverage` is the share of the query's idf mass the memory holds: a term found once in a field of
average length adds its whole idf there, (k1 + 1)·tf/(tf + k1·norm) = 1, so one shared common word
(low idf, beside a rarer word the memory lacks) is a small part of a full match, whatever the other
candidates. `keyword` raises it to keyword_power: a memory holding all of the query counts in full,
one holding a part less than its share (a third of the query, a fifth of a full match), so a word
the question shares with a memory about something else weighs less beside the meaning.

`meaning` has two halves, both read on the model's own scale (`Calibration`: floor, ceiling and gap
per model, RecallConfig.calibrations). The absolute half says how close: at or below `floor` a
cosine says nothing (unrelated sentences sit there), from `ceiling` on it is a paraphrase. The
relative half says whether it is the closest the graph has: the candidate nearest the question in
meaning gets it in full, one `gap` less close none. A small model's cosines crowd together (most
everyday sentences sit between 0.4 and 0.7 for bge-small), so the absolute half alone barely tells the
memory that means the answer from one that shares its topic; the relative half does, and keeps doing
so when the best the graph has is only moderately close. Below `floor` there is no relative half
either, so a graph with nothing close promotes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.domain.models import Signal
from graphsvc.domain.recall_config import Calibration, RecallConfig


@dataclass(frozen=True)
class Evidence:
    """What recall knows about one candidate memory.

    `bm25`: its keyword score (0 when it is not a keyword hit); `attainable`: the query's
    Σ_t Σ_f w_f·idf_f(t) over the weighted fields (0 when the graph's statistics are unknown: then the
    best hit's score stands in, as `relative` says); `own`/`near`: its cosine to the query and the best
    of its window neighbours' (None when not embedded or embeddings are off); `support`: Σ 1/degree
    over the entities that led the walk to it; `found_by`: the signals that made it a candidate."""

    bm25: float = 0.0
    attainable: float = 0.0
    own: float | None = None
    near: float | None = None
    hop: int = 0
    support: float = 0.0
    named: bool = False
    time: float = 0.0
    inside: float = 0.0
    bridge: float = 0.0
    found_by: tuple[Signal, ...] = ()


@dataclass(frozen=True)
class Parts:
    """A memory's score, term by term (docs/recall.md): `total` is what recall orders by."""

    keyword: float
    meaning: float
    walk: float
    named: bool
    time: float = 0.0
    found_by: tuple[Signal, ...] = ()
    total: float = 0.0


def coverage(bm25: float, attainable: float, k1: float) -> float:
    """The share of the query's idf mass a memory's BM25 holds, at most 1 (0 without a ceiling)."""
    if bm25 <= 0 or attainable <= 0:
        return 0.0
    return min(1.0, (k1 + 1) * bm25 / attainable)


def nearness(own: float | None, near: float | None, spread: float) -> float:
    """A memory's cosine to the query, or `spread` of its nearest window neighbour's if that is more."""
    return max([own if own is not None else 0.0, spread * near if near is not None else 0.0])


def closeness(s: float, closest: float, calibration: Calibration | None) -> float:
    """The meaning of a memory's nearness `s` to the query, 0 to 1, beside the `closest` candidate's;
    0 without a calibration (embeddings off)."""
    if calibration is None or s <= calibration.floor:
        return 0.0
    absolute = (s - calibration.floor) / (calibration.ceiling - calibration.floor)
    relative = 1 - (closest - s) / calibration.gap
    return (min(1.0, absolute) + min(1.0, max(0.0, relative))) / 2


def signals(*, keyword: bool, meaning: bool, walk: bool, time: bool = False) -> tuple[Signal, ...]:
    """Which signals found a memory; one that no seed found was reached by the walk."""
    found: list[Signal] = [
        *(["keyword"] if keyword else []),
        *(["meaning"] if meaning else []),
        *(["time"] if time else []),
    ]
    return (*found, "walk") if walk or not found else tuple(found)


def fuse(
    evidence: Evidence, config: RecallConfig, closest: float = 0.0, calibration: Calibration | None = None
) -> Parts:
    """A memory's score parts; `closest` is the largest `nearness` among the recall's candidates."""
    keyword = coverage(evidence.bm25, evidence.attainable, config.bm25_k1) ** config.keyword_power
    meaning = closeness(nearness(evidence.own, evidence.near, config.spread), closest, calibration)
    walk = 1.0 / (1 + evidence.hop) + min(1.0, evidence.support) + config.bridge_weight * evidence.bridge
    boost = config.named_boost if evidence.named else 1.0
    total = (
        config.keyword_weight * keyword * boost
        + walk
        + config.meaning_weight * meaning
        + config.time_weight * evidence.time
        + config.narrow_weight * evidence.inside
    )
    return Parts(keyword, meaning, walk, evidence.named, evidence.time, evidence.found_by, total)


def keyword_formula(config: RecallConfig) -> str:
    """A memory's keyword score with `config`'s values, as docs/recall.md shows it."""
    k1, b = config.bm25_k1, config.bm25_b
    return "\n".join(
        [
            f"text = BM25(window) + {config.own_text_weight:g} · BM25(own text) + "
            f"{_times(config.tags_weight)}BM25(tags)",
            "BM25(field) = Σ over the query's terms t:  idf(t) · tf / "
            f"(tf + {k1:g} · ({1 - b:g} + {b:g} · length / average length))",
            "idf(t) = ln(1 + (N - n + 0.5) / (n + 0.5))",
        ]
    )


def formula(config: RecallConfig) -> str:
    """The score with `config`'s values, as docs/recall.md shows it."""
    return "\n".join(
        [
            f"score    = {_times(config.keyword_weight)}keyword · named + walk + "
            f"{_times(config.meaning_weight)}meaning + {_times(config.time_weight)}time + "
            f"{_times(round(config.narrow_weight, 4))}inside",
            f"named    = {config.named_boost:g} if the memory mentions an entity the query names, else 1",
            f"keyword  = coverage ^ {config.keyword_power:g}",
            f"coverage = min(1, {config.bm25_k1 + 1:g} · text / Σ over the query's terms t and fields "
            "f ∈ {window, own text}: w_f · idf_f(t))",
            f"walk     = 1 / (1 + hop) + min(1, Σ 1 / degree(e)) + {_times(config.bridge_weight)}bridge",
            f"bridge   = min(1, Σ over the first pass's best {config.bridge_from} memories h and the entities e "
            "the query does not name that the memory shares with h: share(e) / (1 + rank(h)))",
            f"share(e) = ln(N / degree(e)) / ln(N), 0 for an entity of more than {config.bridge_max_degree} "
            "memories (N: the graph's memories)",
            "meaning  = 0 if s ≤ floor, else ½ · clip((s - floor) / (ceiling - floor), 0, 1) "
            "+ ½ · clip(1 - (s* - s) / gap, 0, 1)",
            f"s        = max(cos(q, m), {config.spread:g} · cos(q, n) for n in m's neighbours),   "
            "s* = the largest s among the candidates",
            "time     = the largest share of one of the memory's times inside the window read"
            f" (at least {config.when_score:g} for a memory that states a time, asked when)",
            f"inside   = that share when the window spans at most {config.narrow_days} days, else 0",
        ]
    )


def _times(weight: float) -> str:
    return "" if weight == 1 else f"{weight:g} · "
