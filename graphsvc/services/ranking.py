"""Recall's score: every weight and every term, in one place. Pure: no I/O, no clock.

The score of a memory the walk reached within `hops` (README: *Recall*):

    score = TEXT_WEIGHT * text * named + 1 / (1 + hop) + min(1, sum 1 / degree(e))
            + SEMANTIC_WEIGHT * similarity + TIME_WEIGHT * overlap

with TEXT_WEIGHT 2, SEMANTIC_WEIGHT 1.5 and TIME_WEIGHT 1 (the README writes them as numbers), where:

- `text`: the memory's keyword score divided by the best keyword hit's (`text_scores`; 0 for a memory
  that is not a hit). The keyword score is BM25 over the graph's own term statistics
  (services/term_stats.py's QueryScorer: Lucene's analysis and BM25, k1 1.2 and b 0.75, which must stay
  Lucene's) summed over FIELD_WEIGHTS: the memory's window, its own text (OWN_TEXT_WEIGHT) and its
  tags. A memory's window is its text with the texts of WINDOW memories on each side in its graph's
  remember order (`windows`). Lucene finds the CANDIDATES that are rescored; the best KEYWORD_SEEDS of
  them are the keyword hits, hop 0.
- `named`: NAMED_BOOST when the memory mentions an entity whose name the query contains (every word of
  the name is a word of the query: keywords.named_in), else 1.
- `hop`: ceil(d / 2) (`hop_of`), d counting graph steps from the nearest keyword hit (d = 0; the anchor
  entity is d = -1): a keyword hit, or a memory that mentions the anchor, is hop 0; a memory sharing
  an entity with a hop-0 memory is hop 1.
- the sum runs over the entities through which the walk reached the memory (the anchor for hop 0),
  each damped by its degree (at least 1), so a hub entity adds almost nothing.
- `similarity` (embeddings on, else 0): s / the best s among the candidates, where
  s = max(0, cos(q, m), SPREAD * cos(q, n) for n in m's embedded window neighbours) (`similarities`).
  The candidates are the keyword hits and the graph's SEMANTIC_SEEDS memories nearest to the query,
  which join the walk as hop-0 seeds; a memory reached only by the walk gets none.
- `overlap` (only when recall reads a time window: services/timing.py, which computes it): the largest
  fraction of one of the memory's times (when it happened, or a time its text mentions) inside the
  window; the window's memories join the walk as hop-0 seeds (TIME_SEEDS there).

Scores are rounded to 4 decimals. Equal scores: nearer first (hop), then keyword hits in their own
order (their keyword score, then remember order: `by_score_then_order`) before memories that are not
hits, then by id.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from graphsvc.services.graph_walk import Walk

WINDOW = 2  # memories on each side (in the graph's remember order) whose text joins a memory's window
OWN_TEXT_WEIGHT = 0.5  # the weight of BM25(own text) beside BM25(window) and BM25(tags)
FIELD_WEIGHTS = {"window": 1.0, "text": OWN_TEXT_WEIGHT, "tags": 1.0}  # as in keywords.lucene_query
CANDIDATES = 100  # Lucene's top hits that recall rescores with the graph's own statistics
KEYWORD_SEEDS = 50  # the best rescored hits: the keyword hits, hop 0
TEXT_WEIGHT = 2.0  # the weight of the (normalised, named-boosted) keyword score
NAMED_BOOST = 1.3  # text score factor for a memory that mentions an entity the query names
SEMANTIC_WEIGHT = 1.5  # the weight of a memory's query similarity when embeddings are on
SEMANTIC_SEEDS = 20  # the graph's memories nearest to the query that join recall's candidates
TIME_WEIGHT = (
    1.0  # the weight of a memory's time overlap with the window a query names (bench/README.md, Time)
)
SPREAD = 0.7  # a memory's similarity is at least SPREAD * its nearest window neighbour's
ROUNDING = 4  # decimals a score keeps (equal scores then order as the module docstring says)


def hop_of(depth: int) -> int:
    """A memory's hop distance from its node depth in the recall walk."""
    return math.ceil(depth / 2)


def windows(sequence: Sequence[tuple[str, str]], targets: Sequence[str]) -> list[dict[str, str]]:
    """Each target's window: its text joined with up to WINDOW texts on each side in `sequence`
    ((id, text) pairs in remember order)."""
    at = {memory_id: i for i, (memory_id, _) in enumerate(sequence)}
    return [
        {
            "id": t,
            "window": "\n".join(text for _, text in sequence[max(0, at[t] - WINDOW) : at[t] + WINDOW + 1]),
        }
        for t in targets
    ]


def by_score_then_order(row: dict[str, Any]) -> tuple[float, bool, int, str]:
    """Rescored keyword hits best first, equal scores in remember order (the graph's own `seq`; none
    for a memory of a version before it): Lucene orders its ties by index order, which is remember
    order for a graph alone on its server, but other graphs' writes move it."""
    seq = row.get("seq")
    return -row["score"], seq is None, seq or 0, row["id"]


def text_scores(hits: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The keyword hits' scores divided by the best's, in the hits' order."""
    best = max((row["score"] for row in hits), default=1.0) or 1.0
    return {row["id"]: row["score"] / best for row in hits}


def similarities(rows: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Each memory's similarity max(own, SPREAD * best neighbour's) as a cosine clipped at 0, divided
    by the best; rows (embed/similarity) hold Neo4j's scale, (1 + cos) / 2."""
    raw: dict[str, float] = {}
    for row in rows:
        own = [2 * row["own"] - 1] if row["own"] is not None else []
        near = [SPREAD * (2 * s - 1) for s in row["near"]]
        raw[row["id"]] = max([0.0, *own, *near])
    best = max(raw.values(), default=0.0)
    return {i: s / best for i, s in raw.items()} if best > 0 else {}


def ranked(
    context: Walk,
    text: dict[str, float],
    named: set[str],
    hops: int,
    semantic: dict[str, float],
    keep: set[str] | None = None,
    timely: dict[str, float] | None = None,
) -> list[tuple[float, int, str]]:
    """The memories of the context within `hops`, best first, as (score, hop, id): `text` as
    `text_scores` gives it (in the hits' order), `named` the entities the query names, `semantic` as
    `similarities`, `timely` as timing.overlaps gives it. Only the memories in `keep` (those valid at the instant asked), unless it is None
    (history)."""
    support, boosted = _support(context, named)
    order = {memory_id: n for n, memory_id in enumerate(text)}
    scored: list[tuple[float, int, int, str]] = []
    for node in context.nodes.values():
        if not node.is_memory or node.depth < 0 or hop_of(node.depth) > hops:
            continue
        if keep is not None and node.id not in keep:
            continue
        hop = hop_of(node.depth)
        boost = NAMED_BOOST if node.id in boosted else 1.0
        score = (
            TEXT_WEIGHT * text.get(node.id, 0.0) * boost
            + 1.0 / (1 + hop)
            + min(1.0, support.get(node.id, 0.0))
            + SEMANTIC_WEIGHT * semantic.get(node.id, 0.0)
            + TIME_WEIGHT * (timely or {}).get(node.id, 0.0)
        )
        scored.append((-round(score, ROUNDING), hop, order.get(node.id, len(order)), node.id))
    scored.sort()
    return [(-score, hop, memory_id) for score, hop, _, memory_id in scored]


def _support(context: Walk, named: set[str]) -> tuple[dict[str, float], set[str]]:
    """Per memory, sum 1 / degree(e) over the entities the walk reached it through (found before it);
    and the memories that mention an entity of `named`."""
    nodes = context.nodes
    support: dict[str, float] = {}
    boosted: set[str] = set()
    for edge in context.edges.values():
        for memory_id, other in ((edge.source, edge.target), (edge.target, edge.source)):
            memory, entity = nodes.get(memory_id), nodes.get(other)
            if not (memory and entity and memory.is_memory and not entity.is_memory):
                continue
            if entity.depth < memory.depth:
                support[memory_id] = support.get(memory_id, 0.0) + 1.0 / max(entity.degree, 1)
            if other in named:
                boosted.add(memory_id)
    return support, boosted
