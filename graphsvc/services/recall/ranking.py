"""Recall's score: the evidence for every term, gathered in one place. Pure: no I/O, no clock.

The score of a memory the walk reached within `hops` (docs/recall.md) is services/recall/fusion.py's,
every weight and count from the RecallConfig (graphsvc/domain/recall_config.py). This module gathers
each memory's `evidence` for it and orders the memories (`ranked`):

- keyword: the memory's BM25 over the graph's own term statistics (services/recall/bm25.py's
  QueryScorer: Lucene's analysis and BM25) summed over the config's field weights: the memory's
  window, its own text and its tags; with the query's attainable BM25 (`Hits`), of which it covers a
  share. A memory's window is its text with the texts of WINDOW memories on each side in its graph's
  remember order (services/index/windows.py: stored at remember, so not a knob of recall). Lucene finds the
  `candidates` that are rescored; the best `keyword_seeds` of them are the keyword hits, hop 0.
- named: the memory mentions an entity whose name the query contains (every word of the name is a word
  of the query: query.named_in).
- hop: ceil(d / 2) (`hop_of`), d counting graph steps from the nearest keyword hit (d = 0; the anchor
  entity is d = -1): a keyword hit, or a memory that mentions the anchor, is hop 0; a memory sharing
  an entity with a hop-0 memory is hop 1. The walk term is 1 / (1 + hop) plus the sum, over the
  entities through which the walk reached the memory (the anchor for hop 0), of 1 / degree (at least
  1), capped at 1, so a hub entity adds almost nothing.
- meaning (embeddings on): its cosine to the query and its embedded window neighbours' best
  (services/index/cosines.py). The candidates are the keyword hits and the graph's `semantic_seeds` memories nearest
  to the query, which join the walk as hop-0 seeds; a memory reached only by the walk gets none.
- time (only when recall reads a time window: services/recall/timing.py computes it): the largest fraction of
  one of the memory's times (when it happened, or a time its text mentions) inside the window; the
  window's memories join the walk as hop-0 seeds (`time_seeds` of them).

Scores are rounded to 4 decimals. Equal scores: nearer first (hop), then keyword hits in their own
order (their keyword score, then remember order: `by_score_then_order`) before memories that are not
hits, then by id.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from graphsvc.domain.recall_config import Calibration, RecallConfig
from graphsvc.services.graph_walk import Node, Walk
from graphsvc.services.index.cosines import Cosines
from graphsvc.services.ports import Row
from graphsvc.services.recall import fusion

ROUNDING = 4  # decimals a score keeps (equal scores then order as the module docstring says)


def hop_of(depth: int) -> int:
    """A memory's hop distance from its node depth in the recall walk."""
    return math.ceil(depth / 2)


@dataclass(slots=True)
class Hit:
    """A keyword hit (graph/keyword_hits' row): the memory as a node of the walk (hop 0), the window its
    keywords are also scored on, its remember order (`seq`: the graph's own; None for a memory of a
    version before it) and its score (Lucene's, then its BM25 on the graph's own statistics)."""

    node: Node
    window: str | None = None
    seq: int | None = None
    score: float = 0.0

    @classmethod
    def of(cls, row: Row) -> Hit:
        """From a row of graph/keyword_hits."""
        return cls(Node.from_row(row, 0), row["window"], row["seq"], row["score"])


def by_score_then_order(hit: Hit) -> tuple[float, bool, int, str]:
    """Rescored keyword hits best first, equal scores in remember order (the graph's own `seq`; none
    for a memory of a version before it): Lucene orders its ties by index order, which is remember
    order for a graph alone on its server, but other graphs' writes move it."""
    return -hit.score, hit.seq is None, hit.seq or 0, hit.node.id


@dataclass(frozen=True)
class Hits:
    """Recall's keyword hits, best first (`score` their BM25), and the query's attainable BM25
    (fusion.Evidence; 0 when the graph's statistics are unknown)."""

    rows: list[Hit] = field(default_factory=list[Hit])
    attainable: float = 0.0

    @property
    def scores(self) -> dict[str, float]:
        """BM25 by memory, in the hits' order."""
        return {hit.node.id: hit.score for hit in self.rows}

    def ceiling(self, k1: float) -> float:
        """The divisor of keyword coverage: the attainable BM25, else the best hit's score standing in
        for it (coverage is then the score over the best's)."""
        best = max((hit.score for hit in self.rows), default=0.0)
        return self.attainable or (k1 + 1) * best


@dataclass(frozen=True)
class Asked:
    """What recall knows of a request's memories, for `evidence`: the walk (`context`) and the memories
    within `hops` of it; the keyword hits (`hits`, BM25 with saturation `k1`); the entities the query
    names (`named`); the embeddings' nearest (`seeds`) and the cosines (`near`, as index/cosines.py
    gives them); the memories valid at the instant asked (`keep`; None: history, all of them); each
    memory's overlap with the time window the request names (`timely`, as timing.term gives it) and with
    a narrow one (`inside`); its bridge to the first pass's best (`bridge`, services/recall/bridges.py)."""

    context: Walk
    hits: Hits
    k1: float
    named: set[str]
    hops: int
    seeds: AbstractSet[str] = frozenset()
    near: Cosines = field(default_factory=Cosines)
    keep: set[str] | None = None
    timely: dict[str, float] = field(default_factory=dict[str, float])
    inside: dict[str, float] = field(default_factory=dict[str, float])
    bridge: dict[str, float] = field(default_factory=dict[str, float])


def evidence(asked: Asked) -> dict[str, fusion.Evidence]:
    """What recall knows of each memory of the context within `asked.hops` (`Asked` says what each
    part is); only the memories in `asked.keep`, unless it is None (history)."""
    support, boosted = _support(asked.context, asked.named)
    bm25, ceiling = asked.hits.scores, asked.hits.ceiling(asked.k1)
    found: dict[str, fusion.Evidence] = {}
    for node in asked.context.nodes.values():
        if not node.is_memory or node.depth < 0 or hop_of(node.depth) > asked.hops:
            continue
        if asked.keep is not None and node.id not in asked.keep:
            continue
        own, neighbour = asked.near.get(node.id, (None, None))
        time = asked.timely.get(node.id, 0.0)
        found[node.id] = fusion.Evidence(
            bm25=bm25.get(node.id, 0.0),
            attainable=ceiling,
            own=own,
            near=neighbour,
            hop=hop_of(node.depth),
            support=support.get(node.id, 0.0),
            named=node.id in boosted,
            time=time,
            inside=asked.inside.get(node.id, 0.0),
            bridge=asked.bridge.get(node.id, 0.0),
            found_by=fusion.signals(
                keyword=node.id in bm25,
                meaning=node.id in asked.seeds,
                time=time > 0,
                walk=node.id in support or node.id in asked.bridge,
            ),
        )
    return found


def ranked(
    found: dict[str, fusion.Evidence],
    config: RecallConfig,
    hits: Sequence[str] = (),
    calibration: Calibration | None = None,
) -> list[tuple[fusion.Parts, int, str]]:
    """The memories best first, as (score parts, hop, id): the score is fusion.fuse's under `config`,
    rounded to ROUNDING decimals; `hits` the keyword hits in their order (for ties); `calibration` the
    model's (None: embeddings off)."""
    order = {memory_id: n for n, memory_id in enumerate(hits)}
    closest = max((fusion.nearness(e.own, e.near, config.spread) for e in found.values()), default=0.0)
    scored: list[tuple[float, int, int, str, fusion.Parts]] = []
    for memory_id, known in found.items():
        parts = fusion.fuse(known, config, closest, calibration)
        rank = (-round(parts.total, ROUNDING), known.hop, order.get(memory_id, len(order)), memory_id)
        scored.append((*rank, parts))
    scored.sort(key=lambda row: row[:4])
    return [(parts, hop, memory_id) for _, hop, _, memory_id, parts in scored]


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
