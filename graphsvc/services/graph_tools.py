"""link and explore: an edge between two entities, and a walk from given nodes."""

from __future__ import annotations

from graphsvc.domain.extraction import normalise
from graphsvc.domain.models import (
    RESERVED_PROPS,
    EntityIn,
    EntityOut,
    ExploreEdge,
    ExploreInput,
    ExploreNode,
    ExploreResult,
    LinkInput,
    LinkResult,
)
from graphsvc.errors import NotFound
from graphsvc.services import provenance
from graphsvc.services.drafts import new_id
from graphsvc.services.graph_walk import Node, detail, fetch_nodes, walk
from graphsvc.services.ports import Reader


async def link(store: Reader, req: LinkInput) -> LinkResult:
    """Relate two entities (created if new); the same type between them again updates its props."""
    rows = await store.run(
        "memory/link",
        graph=req.graph,
        **{"from": _entity_param(req.from_), "to": _entity_param(req.to)},
        type=req.type,
        props=req.props,
        edgeId=new_id("edge"),
        writerToken=provenance.properties().get(provenance.TOKEN),
    )
    row = rows[0]
    props = {k: v for k, v in row["props"].items() if k not in RESERVED_PROPS}
    return LinkResult(
        id=row["id"],
        from_=_entity_out(req.from_),
        type=req.type,
        to=_entity_out(req.to),
        props=props,
        created=row["created"],
    )


async def explore(store: Reader, req: ExploreInput) -> ExploreResult:
    """Walk from `req.start_ids`, with its direction and type filters.

    Raises:
        NotFound: a start id is not in the graph.
    """
    ids = req.start_ids
    rows = await fetch_nodes(store, req.graph, ids)
    missing = sorted(set(ids) - {row["id"] for row in rows})
    if missing:
        raise NotFound(f"unknown id(s) in graph {req.graph!r}: {', '.join(missing[:5])}")
    result = await walk(
        store,
        req.graph,
        [Node.from_row(row, 0) for row in rows],
        max_depth=req.maxDepth,
        cap=req.limit,
        direction=req.direction,
        types=req.types,
    )
    await detail(store, req.graph, list(result.nodes.values()))
    return ExploreResult(
        nodes=[
            ExploreNode(id=n.id, label=n.label, text=n.text, depth=n.depth) for n in result.nodes.values()
        ],
        edges=[
            ExploreEdge(id=e.id, from_=e.source, type=e.type, to=e.target)
            for e in result.edges.values()
            if e.source in result.nodes and e.target in result.nodes
        ],
        truncated=result.truncated,
    )


def _entity_param(entity: EntityIn) -> dict[str, str]:
    return {"id": entity.id, "label": entity.label, "name": entity.name, "normName": normalise(entity.name)}


def _entity_out(entity: EntityIn) -> EntityOut:
    return EntityOut(id=entity.id, label=entity.label, name=entity.name)
