"""Recall's second pass: from the first pass's best memories, through the entities they mention that
the question did not name (their *bridges*), to the other memories that mention them.

A question whose evidence is spread over memories ("What has he cooked for his family?") finds one or
two of them by its words and meaning; the others say the same thing in other words, and what joins
them is a name or a key phrase they share with the ones found (extracted from the text, or given by
the agent). Each memory that shares a bridge with one of the first `bridge_from` memories gets

    bridge(m) = min(1, Σ over the first memories h and the bridges e that m shares with h:
                       share(e) / (1 + rank(h)))
    share(e)  = ln(N / degree(e)) / ln(N)

N the graph's number of memories, degree(e) how many memories mention e (a bridge mentioned by a
large share of the graph's memories carries little; one mentioned by more than `bridge_max_degree`
is not followed at all), rank(h) the first memory's place in the first pass (0 for the best). The
score adds `bridge_weight · bridge` to the walk term; the memories it brings that the first pass did
not have (the best `bridge_candidates` of them within the request's hops, each one hop past the
first memory that reaches it) are read by meaning like the others. The first
memories themselves get no bridge: the pass adds to them, it does not reorder them. Pure but for
`fetch`: the scoring needs no Neo4j.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from graphsvc.services.graph_walk import EdgeFilter
from graphsvc.services.ports import Reader, Row


@dataclass(frozen=True, slots=True)
class Bridge:
    """A bridge of a first memory (`source`): the entity, how many memories mention it (its degree)
    and the other memories that do."""

    source: str
    entity: str
    degree: int
    others: tuple[str, ...]

    @classmethod
    def of(cls, row: Row) -> Bridge:
        """From a row of graph/bridges."""
        return cls(row["from"], row["entity"], row["degree"], tuple(row["others"]))


@dataclass(frozen=True)
class Bridges:
    """What graph/bridges read: the graph's size and, per first memory and bridge, its degree and the
    other memories that mention it."""

    size: int = 0
    rows: list[Bridge] = field(default_factory=list[Bridge])


async def fetch(
    reader: Reader, graph: str, first: Sequence[str], named: set[str], edges: EdgeFilter, max_degree: int
) -> Bridges:
    """The bridges of the `first` memories (none when there are none)."""
    if not first:
        return Bridges()
    [found] = await reader.run(
        "graph/bridges",
        graph=graph,
        ids=list(first),
        named=sorted(named),
        links=edges.links,
        token=edges.token,
        maxDegree=max_degree,
    )
    return Bridges(found["size"] or 0, [Bridge.of(row) for row in found["rows"]])


def share(degree: int, size: int) -> float:
    """How much a bridge mentioned by `degree` of a graph's `size` memories carries, 0 to 1."""
    if size <= 1 or degree >= size:
        return 0.0
    return math.log(size / max(degree, 1)) / math.log(size)


def scored(bridges: Bridges, first: Sequence[str]) -> dict[str, float]:
    """Each memory's bridge value (the module's formula); none for the first memories themselves: the
    first pass's order among its best stands."""
    rank = {memory_id: n for n, memory_id in enumerate(first)}
    size = max(bridges.size, max((row.degree for row in bridges.rows), default=0))
    total: dict[str, float] = {}
    for row in bridges.rows:
        carried = share(row.degree, size) / (1 + rank.get(row.source, len(rank)))
        for other in row.others:
            if other not in rank:  # the first memories are where the pass starts, not what it brings
                total[other] = total.get(other, 0.0) + carried
    return {memory_id: min(1.0, value) for memory_id, value in total.items()}


def depths(bridges: Bridges, depth_of: Mapping[str, int]) -> dict[str, int]:
    """Each bridged memory's depth in the walk: two steps (to the bridge entity and on to it) past the
    shallowest first memory that reaches it, so recall's hop limit holds for what the pass brings."""
    reached: dict[str, int] = {}
    for row in bridges.rows:
        depth = depth_of[row.source] + 2
        for other in row.others:
            reached[other] = min(reached.get(other, depth), depth)
    return reached


def newcomers(value: dict[str, float], known: set[str], limit: int) -> list[str]:
    """The best `limit` bridged memories not in `known`, by value then id."""
    fresh = sorted((-v, memory_id) for memory_id, v in value.items() if memory_id not in known and v > 0)
    return [memory_id for _, memory_id in fresh[:limit]]
