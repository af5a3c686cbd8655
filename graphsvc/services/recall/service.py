"""Recall: from a query and/or an anchor entity to the memories that answer it, ranked.

The candidates (keyword hits rescored with the graph's own statistics, the embeddings' nearest
memories, the anchor entity's memories) seed a breadth-first walk; the memories it reaches within
`hops`, valid at the instant asked, are ranked by services/recall/ranking.py; a second pass follows
the best ones' bridges (services/recall/bridges.py) to more memories and ranks them all again; they are
returned with the relations among the context's nodes. Every weight and count comes from the RecallConfig it is given.
Depends on a small store Protocol, not on the driver.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from graphsvc.domain.hashing import format_timestamp
from graphsvc.domain.models import CONTEXT_NODE_CAP, RecalledMemory, RecallInput, RecallResult, ScoreParts
from graphsvc.domain.recall_config import Calibration, RecallConfig
from graphsvc.errors import InvalidInput, NotFound
from graphsvc.services import provenance
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.graph_walk import EdgeFilter, Node, Walk, detail, fetch_nodes, walk
from graphsvc.services.index.cosines import Cosines
from graphsvc.services.index.keywords import query_terms
from graphsvc.services.index.term_stats import analyzed_lines
from graphsvc.services.ports import Reader
from graphsvc.services.recall import bridges, fusion, timing
from graphsvc.services.recall.bm25 import GraphStats, QueryScorer
from graphsvc.services.recall.query import lucene_query, named_in
from graphsvc.services.recall.ranking import Asked, Hit, Hits, by_score_then_order, evidence, hop_of, ranked
from graphsvc.services.recall.validity import Validity

MAX_RELATIONS = 1000


@dataclass(frozen=True)
class Gathered:
    """A recall's candidates before ranking: how it read the request's time, the walk and the
    validity of the memories it reached, each candidate's evidence, the keyword hits in their order,
    and the model's calibration (None: embeddings off)."""

    reading: timing.Reading
    context: Walk
    validity: dict[str, Validity]
    found: dict[str, fusion.Evidence]
    hits: list[str]
    calibration: Calibration | None
    pending: int = 0  # the graph's memories not weighed by meaning: still waiting for their vector


class RecallService:
    def __init__(
        self,
        store: Reader,
        clock: Callable[[], datetime],
        embeddings: EmbeddingService | None = None,
        config: RecallConfig | None = None,
    ):
        self._store = store
        self._clock = clock
        self._embeddings = embeddings
        self.config = config or RecallConfig()

    async def recall(self, req: RecallInput) -> RecallResult:
        """Raises:
        InvalidInput: neither a query nor an entity.
        NotFound: the anchor entity is not in the graph.
        """
        gathered = await self.gather(req)
        context, validity = gathered.context, gathered.validity
        best = ranked(gathered.found, self.config, gathered.hits, gathered.calibration)[: req.limit]
        await detail(self._store, req.graph, [context.nodes[memory_id] for _, _, memory_id in best])
        memories = [
            _recalled(context.nodes[memory_id], parts, hop, validity[memory_id])
            for parts, hop, memory_id in best
        ]
        result = _recall_result(context, memories)
        result.window = gathered.reading.shown()
        result.pending = gathered.pending or None
        return result

    async def gather(self, req: RecallInput) -> Gathered:
        """The candidates of a recall and the evidence for each (what `recall` ranks; a benchmark
        reads it to replay the ranking under other weights).

        Raises:
            InvalidInput: neither a query nor an entity.
            NotFound: the anchor entity is not in the graph.
        """
        if req.entity is None and not (req.query and req.query.strip()):
            raise InvalidInput("recall needs a query, an entity, or both")
        start = await self._anchor(req.graph, req.entity) if req.entity is not None else []
        config = self.config
        vector = self._embeddings.encode_query(req.query) if self._embeddings else None
        reading = await timing.read(self._store, req, self._clock(), config)
        hits, (nearest, pending) = await asyncio.gather(
            self._keyword_hits(req.graph, reading.keywords), self._nearest(req.graph, vector)
        )
        text = hits.scores
        start += [hit.node for hit in hits.rows]
        start += [node for node in nearest if node.id not in text]
        start += await self._window_seeds(req.graph, reading, {n.id for n in start})
        token = provenance.caller_token()
        edges = EdgeFilter(req.links or config.links, token)
        similar_ids = [hit.node.id for hit in hits.rows[: config.similar_hits]] + [n.id for n in nearest]
        (context, validity), similar = await asyncio.gather(
            self._walk(req.graph, start, req.hops, edges), self._similarities(req.graph, vector, similar_ids)
        )
        named = named_in(req.query or "", {n.id: n.text for n in context.nodes.values() if not n.is_memory})
        at, now = (format_timestamp(req.asOf) if req.asOf else None), format_timestamp(self._clock())
        seeds = {node.id for node in nearest}
        calibration = config.calibration(self._embeddings.model_name) if self._embeddings else None

        def weighed(bridge: dict[str, float] | None = None) -> dict[str, fusion.Evidence]:
            keep = None if req.history else {i for i, v in validity.items() if v.holds(at, now)}
            times = [v.times for v in validity.values()]
            return evidence(
                Asked(
                    context=context,
                    hits=hits,
                    k1=config.bm25_k1,
                    named=named,
                    hops=req.hops,
                    seeds=seeds,
                    near=similar,
                    keep=keep,
                    timely=timing.term(reading, times, config.when_score),
                    inside=reading.inside(times, config.narrow_days),
                    bridge=bridge or {},
                )
            )

        found = weighed()
        # A question that names a time is answered by the time: bridges would bring memories of others.
        if config.bridge_from and req.hops >= 1 and reading.window is None and found:
            first = [i for _, _, i in ranked(found, config, list(text), calibration)[: config.bridge_from]]
            through = EdgeFilter(req.links or config.bridge_links, token)
            read = await bridges.fetch(
                self._store, req.graph, first, named, through, config.bridge_max_degree
            )
            bridged = bridges.scored(read, first)
            if bridged:
                reached = bridges.depths(read, {i: context.nodes[i].depth for i in first})
                within = {i: v for i, v in bridged.items() if hop_of(reached[i]) <= req.hops}
                fresh = bridges.newcomers(within, set(context.nodes), config.bridge_candidates)
                for memory_id in fresh:
                    context.nodes[memory_id] = Node(
                        memory_id, "Memory", "", depth=reached[memory_id], degree=0
                    )
                more, cosines = await asyncio.gather(
                    self._validity_of(req.graph, fresh), self._similarities(req.graph, vector, fresh)
                )
                validity.update(more)
                similar.update(cosines)
                found = weighed(bridged)
        return Gathered(reading, context, validity, found, list(text), calibration, pending)

    async def _window_seeds(self, graph: str, reading: timing.Reading, seeded: set[str]) -> list[Node]:
        """The memories of the window the request names that are not seeds already (hop 0)."""
        if reading.window is None:
            return []
        nodes = await timing.seeds(self._store, graph, reading.window, self.config)
        return [node for node in nodes if node.id not in seeded]

    async def _anchor(self, graph: str, entity: str) -> list[Node]:
        """The anchor entity's nodes, one step before its memories (depth -1)."""
        rows = await self._store.run("memory/resolve_entities", graph=graph, refs=[entity])
        ids: list[str] = rows[0]["ids"] if rows else []
        if not ids:
            raise NotFound(f"no entity named {entity!r} in graph {graph!r}")
        return [Node.from_row(row, -1) for row in await fetch_nodes(self._store, graph, ids)]

    async def _keyword_hits(self, graph: str, query: str | None) -> Hits:
        """The top `keyword_seeds` of Lucene's top `candidates`, rescored by BM25 over the graph's own
        statistics (Lucene's as they are for a graph whose statistics are not counted yet), with the
        query's attainable BM25 (0 without statistics). None without keywords."""
        config = self.config
        lucene = lucene_query(graph, query, config.field_weights) if query else None
        terms = query_terms(query or "")
        if lucene is None or not terms:  # stop words only: Lucene would match every memory by graphKey
            return Hits()
        [found] = await self._store.run(
            "graph/keyword_hits",
            graph=graph,
            lucene=lucene,
            limit=config.candidates,
            terms=sorted(set(terms)),
        )
        rows = [Hit.of(row) for row in found["rows"]]
        stats = GraphStats.from_row(found["stats"], found["pending"])
        attainable = 0.0
        if stats is not None:
            scorer = QueryScorer(stats, terms, config.field_weights, k1=config.bm25_k1, b=config.bm25_b)
            attainable = scorer.attainable()
            for hit in rows:
                hit.score = scorer.score(
                    {
                        "text": analyzed_lines(hit.node.text),
                        "window": analyzed_lines(hit.window or ""),
                        "tags": analyzed_lines(*hit.node.tags),
                    }
                )
            rows.sort(key=by_score_then_order)
        return Hits(rows[: config.keyword_seeds], attainable)

    async def _nearest(self, graph: str, vector: Awaitable[list[float]] | None) -> tuple[list[Node], int]:
        """The graph's memories nearest to the query (services/embeddings.py), as seeds of the walk
        (hop 0), and how many of its memories meaning cannot weigh yet; none when off."""
        if vector is None or self._embeddings is None:
            return [], 0
        config = self.config
        found = await self._embeddings.nearest(
            graph, await vector, config.semantic_seeds, config.vector_breadth
        )
        return [Node.from_row(row, 0) for row in found.rows], found.pending

    async def _similarities(
        self, graph: str, vector: Awaitable[list[float]] | None, ids: list[str]
    ) -> Cosines:
        """The candidates' cosines to the query (services/embeddings.py); none when off."""
        if vector is None or self._embeddings is None:
            return {}
        return await self._embeddings.similarities(graph, await vector, ids)

    async def _walk(
        self, graph: str, start: list[Node], hops: int, edges: EdgeFilter
    ) -> tuple[Walk, dict[str, Validity]]:
        """The walk from the seeds within `hops` over the edges the request's `links` keeps, and the
        validity of the memories it reached."""
        context = await walk(
            self._store,
            graph,
            start,
            max_depth=2 * hops + 1,
            cap=CONTEXT_NODE_CAP,
            entities_only_after=2 * hops,
            edges=edges,
        )
        return context, await self._validity(graph, context)

    async def _validity(self, graph: str, context: Walk) -> dict[str, Validity]:
        """memory/validity's row of each memory the walk reached."""
        return await self._validity_of(
            graph, [n.id for n in context.nodes.values() if n.is_memory and n.depth >= 0]
        )

    async def _validity_of(self, graph: str, memory_ids: list[str]) -> dict[str, Validity]:
        """memory/validity's row of each of these memories."""
        if not memory_ids:
            return {}
        [found] = await self._store.run("memory/validity", graph=graph, ids=memory_ids)
        return {v.id: v for v in map(Validity.of, found["rows"])}


def _recalled(node: Node, parts: fusion.Parts, hop: int, validity: Validity) -> RecalledMemory:
    """A ranked memory as recall answers it, with its score's parts, the signals that found it and its
    validity (memory/validity's row)."""
    return RecalledMemory(
        id=node.id,
        text=node.text,
        score=round(parts.total, 4),
        distance=hop,
        anchorId=node.anchorId,
        tags=node.tags,
        validFrom=validity.validFrom,
        validTo=validity.validTo,
        supersededBy=sorted(s.id for s in validity.successors),
        occurredAt=validity.occurredAt,
        why=ScoreParts(
            keyword=round(parts.keyword, 4),
            meaning=round(parts.meaning, 4),
            walk=round(parts.walk, 4),
            time=round(parts.time, 4),
            named=parts.named,
        ),
        foundBy=list(parts.found_by),
    )


def _recall_result(context: Walk, memories: list[RecalledMemory]) -> RecallResult:
    """The memories, with the relations among the context's nodes (MAX_RELATIONS at most)."""
    nodes = context.nodes
    edges = [
        (e.source, e.type, e.target)
        for e in context.edges.values()
        if e.source in nodes and e.target in nodes
    ]
    truncated = context.truncated or len(edges) > MAX_RELATIONS
    return RecallResult.build(memories, list(nodes), edges[:MAX_RELATIONS], truncated)
