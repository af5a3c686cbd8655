"""Breadth-first walks over memories and entities, capped, one query per level.

Used by recall (undirected, every edge type) and explore (direction and type filters). Walking level
by level keeps every query bounded (a hub entity cannot make a path explosion) and makes the node
cap exact: a level stops taking nodes when the cap is reached and the walk says it was truncated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from graphsvc.domain.models import Links
from graphsvc.services.ports import Reader, Row


@dataclass
class Node:
    id: str
    label: str
    text: str
    depth: int
    degree: int
    tags: list[str] = field(default_factory=list[str])
    anchorId: str | None = None

    @property
    def is_memory(self) -> bool:
        return self.label == "Memory"

    @classmethod
    def from_row(cls, row: Row, depth: int) -> Node:
        return cls(
            id=row["id"],
            label=row["label"],
            text=row["text"] or "",
            depth=depth,
            degree=row["degree"],
            tags=row.get("tags") or [],
            anchorId=row.get("anchorId"),
        )


@dataclass(frozen=True)
class WalkEdge:
    id: str
    source: str
    type: str
    target: str


@dataclass(frozen=True)
class EdgeFilter:
    """Which edges a walk follows (RecallInput.links): all of them, the agent-given ones, or the
    agent-given ones written with `token` (the caller's; None: those written without one)."""

    links: Links = "all"
    token: str | None = None


EVERY_EDGE = EdgeFilter()


@dataclass
class Walk:
    nodes: dict[str, Node]
    edges: dict[str, WalkEdge]
    truncated: bool = False


def split_ids(ids: list[str]) -> dict[str, list[str]]:
    """Entity ids are `Label:name`; memory ids never hold a colon."""
    return {
        "memoryIds": [i for i in ids if ":" not in i],
        "entityIds": [i for i in ids if ":" in i],
    }


async def fetch_nodes(reader: Reader, graph: str, ids: list[str]) -> list[Row]:
    return await reader.run("graph/nodes", graph=graph, **split_ids(ids))


async def walk(
    reader: Reader,
    graph: str,
    start: list[Node],
    *,
    max_depth: int,
    cap: int,
    direction: Literal["out", "in", "both"] = "both",
    types: list[str] | None = None,
    entities_only_after: int | None = None,
    edges: EdgeFilter = EVERY_EDGE,
) -> Walk:
    """Expand from `start` (nodes carry their own depth) until `max_depth` or `cap` nodes, over the
    edges `edges` keeps (their degrees counted over the same edges).

    Past depth `entities_only_after`, only entities are taken (recall's context ring).
    """
    state = Walk(nodes={n.id: n for n in start[:cap]}, edges={}, truncated=len(start) > cap)
    depth = min((n.depth for n in start), default=max_depth)
    while depth < max_depth and not state.truncated:
        level = sorted((n for n in state.nodes.values() if n.depth == depth), key=lambda n: (n.degree, n.id))
        frontier = [n.id for n in level]
        if frontier:
            await _expand(
                reader, graph, state, frontier, depth, cap, direction, types, entities_only_after, edges
            )
        depth += 1
    return state


async def _expand(
    reader: Reader,
    graph: str,
    state: Walk,
    frontier: list[str],
    depth: int,
    cap: int,
    direction: str,
    types: list[str] | None,
    entities_only_after: int | None,
    edges: EdgeFilter,
) -> None:
    rows_limit = 4 * (cap - len(state.nodes)) + 200
    [result] = await reader.run(
        "graph/neighbours",
        graph=graph,
        exclude=[n.id for n in state.nodes.values() if n.depth < depth],
        types=types,
        direction=direction,
        links=edges.links,
        token=edges.token,
        rows=rows_limit,
        **split_ids(frontier),
    )
    rows = result["rows"]
    entities_only = entities_only_after is not None and depth + 1 > entities_only_after
    for row in rows:
        if row["id"] not in state.nodes:
            if entities_only and row["label"] == "Memory":
                continue
            if len(state.nodes) >= cap:
                state.truncated = True
                continue
            state.nodes[row["id"]] = Node.from_row(row, depth + 1)
        source, target = (row["frontier"], row["id"]) if row["outgoing"] else (row["id"], row["frontier"])
        edge_id = row["edgeId"] or f"{source}-{row['type']}-{target}"
        state.edges.setdefault(edge_id, WalkEdge(edge_id, source, row["type"], target))
    if len(rows) >= rows_limit:
        state.truncated = True


async def detail(reader: Reader, graph: str, nodes: list[Node]) -> None:
    """Fill in text, tags and anchor of the memories a walk reached (it reads only ids)."""
    bare = [n for n in nodes if n.is_memory and not n.text]
    if bare:
        rows = {row["id"]: row for row in await fetch_nodes(reader, graph, [n.id for n in bare])}
        for node in bare:
            row = rows.get(node.id)
            if row:
                node.text, node.tags, node.anchorId = row["text"], row["tags"] or [], row["anchorId"]
