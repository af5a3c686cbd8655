"""The five graph tools: remember, recall, link, explore, forget.

Depends on a small store Protocol, not on the driver. Validation of shapes and bounds happens in the
contract models; this layer checks what needs the graph (relation endpoints, unknown ids).
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from graphsvc.domain.hashing import format_timestamp, memory_hash
from graphsvc.domain.models import (
    CONTEXT_NODE_CAP,
    Edge,
    EntityIn,
    EntityOut,
    ExploreEdge,
    ExploreInput,
    ExploreNode,
    ExploreResult,
    ForgetResult,
    IdInput,
    LinkInput,
    LinkResult,
    RecalledMemory,
    RecallInput,
    RecallResult,
    RememberInput,
    RememberResult,
)
from graphsvc.domain.render import clip
from graphsvc.errors import InvalidInput, NotFound
from graphsvc.services.graph_walk import Node, Walk, fetch_nodes, walk
from graphsvc.services.ports import Reader, Store

KEYWORD_SEEDS = 50
MAX_QUERY_TERMS = 64
MAX_RELATIONS = 1000
TITLE_WIDTH = 48  # Neo4j Browser captions a node by its `title` when it has no `name`
_TERM = re.compile(r"\w+", re.UNICODE)
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def lucene_query(graph: str, text: str) -> str | None:
    """Keywords as a Lucene query scoped to `graph`; None when the text holds no word.

    Only word characters survive, lower-cased (so AND/OR/NOT are plain words) and de-duplicated; the
    user's text can never be Lucene syntax.
    """
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(text)))[:MAX_QUERY_TERMS]
    if not terms:
        return None
    words = " ".join(_escape(t) for t in terms)
    return f'+graph:"{_escape(graph)}" +(text:({words}) tags:({words}))'


def _escape(term: str) -> str:
    return _LUCENE_SPECIAL.sub(r"\\\1", term)


def hop_of(depth: int) -> int:
    """A memory's hop distance from its node depth in the recall walk (see README: scoring)."""
    return math.ceil(depth / 2)


class MemoryService:
    def __init__(self, store: Store, clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self._store = store
        self._clock = clock

    # ---- remember -------------------------------------------------------------------------------

    async def remember(
        self,
        req: RememberInput,
        *,
        links: Sequence[tuple[str, str]] = (),
        extra: dict[str, Any] | None = None,
    ) -> RememberResult:
        """Store a memory. `links` (type, entity id) and `extra` properties serve store_event."""
        entities = list({e.id: e for e in req.entities}.values())
        memory_id = new_id("mem")
        created_at = format_timestamp(self._clock())
        tags = sorted(set(req.tags))
        digest = memory_hash(
            id=memory_id,
            graph=req.graph,
            text=req.text,
            tags=tags,
            entities=[e.id for e in entities],
            created_at=created_at,
        )
        local = _local_refs(entities, [ref for r in req.relations for ref in (r.from_, r.to)])

        async def work(tx: Reader) -> list[tuple[str, str, str]]:
            pending = sorted({ref for r in req.relations for ref in (r.from_, r.to) if ref not in local})
            resolved = dict(local)
            if pending:
                rows = await tx.run("memory/resolve_entities", graph=req.graph, refs=pending)
                found = {row["ref"]: row["ids"] for row in rows}
                resolved |= {ref: _one_entity(ref, found.get(ref, [])) for ref in pending}
            triples = [(resolved[r.from_], r.type, resolved[r.to]) for r in req.relations]
            await tx.run(
                "memory/create",
                graph=req.graph,
                memory={
                    "id": memory_id,
                    "text": req.text,
                    "tags": tags,
                    "hash": digest,
                    "createdAt": created_at,
                    "title": clip(req.text, TITLE_WIDTH),
                    **(extra or {}),
                },
                entities=[
                    {"id": e.id, "label": e.label, "name": e.name, "edgeId": new_id("edge")} for e in entities
                ],
                relations=[{"from": a, "type": t, "to": b, "edgeId": new_id("edge")} for a, t, b in triples],
                links=[{"type": t, "to": to, "edgeId": new_id("edge")} for t, to in links],
            )
            return triples

        triples = await self._store.write_transaction(work)
        return RememberResult(
            id=memory_id,
            hash=digest,
            entities=[EntityOut(id=e.id, label=e.label, name=e.name) for e in entities],
            edges=[Edge(from_=memory_id, type="MENTIONS", to=e.id) for e in entities]
            + [Edge(from_=a, type=t, to=b) for a, t, b in dict.fromkeys(triples)],
        )

    # ---- recall ---------------------------------------------------------------------------------

    async def recall(self, req: RecallInput) -> RecallResult:
        if req.entity is None and not (req.query and req.query.strip()):
            raise InvalidInput("recall needs a query, an entity, or both")
        lucene = lucene_query(req.graph, req.query) if req.query else None
        start: list[Node] = []
        if req.entity is not None:
            rows = await self._store.run("memory/resolve_entities", graph=req.graph, refs=[req.entity])
            ids = rows[0]["ids"] if rows else []
            if not ids:
                raise NotFound(f"no entity named {req.entity!r} in graph {req.graph!r}")
            start += [Node.from_row(row, -1) for row in await fetch_nodes(self._store, req.graph, ids)]
        text_scores: dict[str, float] = {}
        if lucene is not None:
            [found] = await self._store.run(
                "graph/keyword_hits", graph=req.graph, lucene=lucene, limit=KEYWORD_SEEDS
            )
            hits = found["rows"]
            best = max((row["score"] for row in hits), default=1.0) or 1.0
            text_scores = {row["id"]: row["score"] / best for row in hits}
            start += [Node.from_row(row, 0) for row in hits]
        context = await walk(
            self._store,
            req.graph,
            start,
            max_depth=2 * req.hops + 1,
            cap=CONTEXT_NODE_CAP,
            entities_only_after=2 * req.hops,
        )
        return _ranked(context, text_scores, req.hops, req.limit)

    # ---- link -----------------------------------------------------------------------------------

    async def link(self, req: LinkInput) -> LinkResult:
        edge_id = new_id("edge")
        rows = await self._store.run(
            "memory/link",
            graph=req.graph,
            **{"from": _entity_param(req.from_), "to": _entity_param(req.to)},
            type=req.type,
            props=req.props,
            edgeId=edge_id,
        )
        row = rows[0]
        props = {k: v for k, v in row["props"].items() if k != "id"}
        return LinkResult(
            id=row["id"],
            from_=_entity_out(req.from_),
            type=req.type,
            to=_entity_out(req.to),
            props=props,
            created=row["created"],
        )

    # ---- explore --------------------------------------------------------------------------------

    async def explore(self, req: ExploreInput) -> ExploreResult:
        ids = req.start_ids
        rows = await fetch_nodes(self._store, req.graph, ids)
        missing = sorted(set(ids) - {row["id"] for row in rows})
        if missing:
            raise NotFound(f"unknown id(s) in graph {req.graph!r}: {', '.join(missing[:5])}")
        result = await walk(
            self._store,
            req.graph,
            [Node.from_row(row, 0) for row in rows],
            max_depth=req.maxDepth,
            cap=req.limit,
            direction=req.direction,
            types=req.types,
        )
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

    # ---- forget ---------------------------------------------------------------------------------

    async def forget(self, req: IdInput) -> ForgetResult:
        now = format_timestamp(self._clock())
        rows = await self._store.run("memory/forget", graph=req.graph, id=req.id, now=now)
        if not rows:
            raise NotFound(f"no memory {req.id!r} in graph {req.graph!r}")
        return ForgetResult(id=req.id, deleted=True)


def _local_refs(entities: list[EntityIn], refs: list[str]) -> dict[str, str]:
    """Relation endpoints that this request's own entities answer (by id, else by name)."""
    by_id = {e.id: e.id for e in entities}
    resolved: dict[str, str] = {}
    for ref in refs:
        if ref in by_id:
            resolved[ref] = ref
            continue
        named = [e.id for e in entities if e.name == ref]
        if named:
            resolved[ref] = _one_entity(ref, named)
    return resolved


def _one_entity(ref: str, ids: list[str]) -> str:
    if not ids:
        raise NotFound(f"relation endpoint {ref!r} is neither in entities nor in the graph")
    if len(ids) > 1:
        raise InvalidInput(f"{ref!r} names {len(ids)} entities ({', '.join(sorted(ids))}); use Label:name")
    return ids[0]


def _entity_param(entity: EntityIn) -> dict[str, str]:
    return {"id": entity.id, "label": entity.label, "name": entity.name}


def _entity_out(entity: EntityIn) -> EntityOut:
    return EntityOut(id=entity.id, label=entity.label, name=entity.name)


def _ranked(context: Walk, text_scores: dict[str, float], hops: int, limit: int) -> RecallResult:
    """score = 2·text + 1/(1+hop) + min(1, Σ 1/degree(e)) over the entities that led to the memory."""
    nodes = context.nodes
    support: dict[str, float] = {}
    for edge in context.edges.values():
        for memory_id, other in ((edge.source, edge.target), (edge.target, edge.source)):
            memory, entity = nodes.get(memory_id), nodes.get(other)
            if (
                memory
                and entity
                and memory.is_memory
                and not entity.is_memory
                and entity.depth < memory.depth
            ):
                support[memory_id] = support.get(memory_id, 0.0) + 1.0 / max(entity.degree, 1)
    memories = []
    for node in nodes.values():
        if not node.is_memory or node.depth < 0 or hop_of(node.depth) > hops:
            continue
        hop = hop_of(node.depth)
        score = 2.0 * text_scores.get(node.id, 0.0) + 1.0 / (1 + hop) + min(1.0, support.get(node.id, 0.0))
        memories.append(
            RecalledMemory(
                id=node.id,
                text=node.text,
                score=round(score, 4),
                distance=hop,
                anchorId=node.anchorId,
                tags=node.tags,
            )
        )
    memories.sort(key=lambda m: (-m.score, m.distance, m.id))
    edges = [
        (e.source, e.type, e.target)
        for e in context.edges.values()
        if e.source in nodes and e.target in nodes
    ]
    truncated = context.truncated or len(edges) > MAX_RELATIONS
    return RecallResult.build(memories[:limit], list(nodes), edges[:MAX_RELATIONS], truncated)
