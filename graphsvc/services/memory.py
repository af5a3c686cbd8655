"""The five graph tools: remember, recall, link, explore, forget.

Depends on a small store Protocol, not on the driver. Validation of shapes and bounds happens in the
contract models; this layer checks what needs the graph (relation endpoints, unknown ids).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from graphsvc.domain.hashing import content_key, format_timestamp, memory_hash
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
    RememberReceipt,
    RememberResult,
    ScoreParts,
)
from graphsvc.domain.render import clip
from graphsvc.errors import Conflict, GraphsvcError, InvalidInput, NotFound, Refused
from graphsvc.services import fusion
from graphsvc.services.embeddings import EmbeddingService, Semantic
from graphsvc.services.graph_walk import Node, Walk, fetch_nodes, walk
from graphsvc.services.group_commit import GroupCommit
from graphsvc.services.keywords import OWN_TEXT_WEIGHT, graph_key, keywords, lucene_query, words
from graphsvc.services.ports import Reader, Store
from graphsvc.services.term_fold import TermFolder
from graphsvc.services.term_stats import (
    Change,
    GraphStats,
    QueryScorer,
    analyze,
    analyzed_lines,
    as_delta,
    counted,
    fields_of,
    rewindowed,
    tally,
)

KEYWORD_SEEDS = 50
CANDIDATES = 100  # Lucene's top hits that recall rescores with the graph's own statistics
FIELD_WEIGHTS = {"window": 1.0, "text": OWN_TEXT_WEIGHT, "tags": 1.0}  # as in keywords.lucene_query
MAX_RELATIONS = 1000
TITLE_WIDTH = 48  # Neo4j Browser captions a node by its `title` when it has no `name`
WINDOW = 2  # memories on each side (in the graph's remember order) whose text joins a memory's window
RETRY_WINDOW_S = 300  # a remember of the same content within it is a retry: the stored receipt answers


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def hop_of(depth: int) -> int:
    """A memory's hop distance from its node depth in the recall walk (see README: scoring)."""
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


@dataclass
class _Draft:
    """One memory on its way in: everything known before the write transaction."""

    index: int
    req: RememberInput
    links: Sequence[tuple[str, str]]
    extra: dict[str, Any]
    id: str
    created_at: str
    tags: list[str]
    entities: list[EntityIn]
    digest: str
    key: str
    temporal: dict[str, Any]  # _temporal(req): stored as hashed
    triples: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])

    @classmethod
    def of(
        cls,
        index: int,
        req: RememberInput,
        created_at: str,
        links: Sequence[tuple[str, str]] = (),
        extra: dict[str, Any] | None = None,
    ) -> _Draft:
        entities = list({e.id: e for e in req.entities}.values())
        memory_id = new_id("mem")
        tags = sorted(set(req.tags))
        ids = [e.id for e in entities]
        temporal = _temporal(req)
        return cls(
            index=index,
            req=req,
            links=links,
            extra=extra or {},
            id=memory_id,
            created_at=created_at,
            tags=tags,
            entities=entities,
            digest=memory_hash(
                id=memory_id,
                graph=req.graph,
                text=req.text,
                tags=tags,
                entities=ids,
                created_at=created_at,
                supersedes=req.supersedes,
                valid_from=temporal.get("validFrom"),
                valid_to=temporal.get("validTo"),
            ),
            key=content_key(
                graph=req.graph,
                text=req.text,
                tags=tags,
                entities=ids,
                relations=[(r.from_, r.type, r.to) for r in req.relations],
                temporal=temporal,
            ),
            temporal=temporal,
        )

    @property
    def supersedes(self) -> list[str]:
        return self.temporal.get("supersedes", [])

    @property
    def refs(self) -> list[str]:
        return [ref for r in self.req.relations for ref in (r.from_, r.to)]

    def row(self, seq: int, window: str) -> dict[str, Any]:
        return {
            "graph": self.req.graph,
            "memory": {
                "id": self.id,
                "text": self.req.text,
                "tags": self.tags,
                "hash": self.digest,
                "createdAt": self.created_at,
                "title": clip(self.req.text, TITLE_WIDTH),
                "seq": seq,
                "window": window,
                "contentKey": self.key,
                "graphKey": graph_key(self.req.graph),
                **self.temporal,
                **self.extra,
            },
            "entities": [
                {"id": e.id, "label": e.label, "name": e.name, "edgeId": new_id("edge")}
                for e in self.entities
            ],
            "relations": [
                {"from": a, "type": t, "to": b, "edgeId": new_id("edge")} for a, t, b in self.triples
            ],
            "links": [{"type": t, "to": to, "edgeId": new_id("edge")} for t, to in self.links],
            "supersedes": [{"to": p, "edgeId": new_id("edge")} for p in self.supersedes],
        }

    def result(self) -> RememberResult:
        return RememberResult(
            id=self.id,
            hash=self.digest,
            entities=[EntityOut(id=e.id, label=e.label, name=e.name) for e in self.entities],
            edges=[Edge(from_=self.id, type="MENTIONS", to=e.id) for e in self.entities]
            + [Edge(from_=a, type=t, to=b) for a, t, b in dict.fromkeys(self.triples)]
            + [Edge(from_=self.id, type="SUPERSEDES", to=p) for p in self.supersedes],
        )


def _temporal(req: RememberInput) -> dict[str, Any]:
    """The validity a memory was remembered with (only what was given): stored as it is hashed."""
    given = {
        "supersedes": sorted(set(req.supersedes)) or None,
        "validFrom": format_timestamp(req.validFrom) if req.validFrom else None,
        "validTo": format_timestamp(req.validTo) if req.validTo else None,
    }
    return {k: v for k, v in given.items() if v is not None}


class MemoryService:
    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        embeddings: EmbeddingService | None = None,
    ):
        self._store = store
        self._clock = clock
        self._embeddings = embeddings
        self._commits: GroupCommit[_Draft, RememberReceipt] = GroupCommit(self._flush)
        self.folder = TermFolder(store)

    async def close(self) -> None:
        await self.folder.close()

    # ---- remember -------------------------------------------------------------------------------

    async def remember(
        self,
        req: RememberInput,
        *,
        links: Sequence[tuple[str, str]] = (),
        extra: dict[str, Any] | None = None,
    ) -> RememberResult:
        """Store a memory. `links` (type, entity id) and `extra` properties serve store_event.

        Retry-safe: the same content remembered in the same graph within RETRY_WINDOW_S (a retry whose
        answer was lost, by the driver or the client) answers the stored memory's receipt. Concurrent
        remembers share a transaction (group commit, whatever their graphs), each with its own answer.

        Raises:
            NotFound, InvalidInput: a relation endpoint is unknown or ambiguous (nothing is written).
        """
        draft = _Draft.of(0, req, format_timestamp(self._clock()), links, extra)
        receipt = await self._commits.submit(draft)
        if receipt.failure is not None:
            raise receipt.failure
        return replace(draft, id=receipt.id or draft.id, digest=receipt.hash or draft.digest).result()

    async def _flush(self, drafts: list[_Draft]) -> list[RememberReceipt | BaseException]:
        """One group commit: the drafts of concurrent remembers in one transaction, in arrival order.
        Should the transaction itself refuse the group (not an outage), each is tried alone, so that
        only the one at fault fails: a group holds the writers of every graph."""
        for index, draft in enumerate(drafts):
            draft.index = index
        since = format_timestamp(self._clock() - timedelta(seconds=RETRY_WINDOW_S))
        try:
            return list(await self._write(drafts, since=since))
        except (InvalidInput, Conflict, Refused):
            if len(drafts) == 1:
                raise
        alone: list[RememberReceipt | BaseException] = []
        for draft in drafts:
            draft.index = 0
            try:
                alone += await self._write([draft], since=since)
            except GraphsvcError as error:
                alone.append(error)
        return alone

    async def remember_many(self, reqs: Sequence[RememberInput]) -> list[RememberReceipt]:
        """Bulk remember, in one transaction (and one UNWIND) whatever the graphs. Idempotent: an item
        whose content (text, tags, entities, relations) is already in its graph is not stored again
        and its receipt names the existing memory. An item whose relation cannot be resolved is
        rejected alone. Receipts follow the order of `reqs`."""
        created_at = format_timestamp(self._clock())
        return await self._write([_Draft.of(i, req, created_at) for i, req in enumerate(reqs)], since="")

    async def _write(self, drafts: list[_Draft], *, since: str) -> list[RememberReceipt]:
        """Write `drafts` in one transaction, a receipt each: created; duplicate of a memory of its graph
        with the same content created at or after `since` (or of one of these very drafts, when the
        driver re-runs a transaction whose commit went unacknowledged); or rejected (an unresolvable
        relation, the error kept in `failure`). Two statements whatever the graphs (memory/begin and
        memory/commit), and one more per graph whose relations or supersedes must be looked up."""
        graphs = sorted({d.req.graph for d in drafts})

        async def work(tx: Reader) -> list[RememberReceipt]:
            rows = await tx.run(
                "memory/begin",
                graphs=graphs,
                keys=[d.key for d in drafts],
                since=since,
                ids=[d.id for d in drafts],
            )
            begun = {row["graph"]: row for row in rows}
            known = {k["key"]: (k["id"], k["hash"]) for row in rows for k in row["known"]}
            outcomes: dict[int, list[tuple[str, str, str]] | GraphsvcError] = {}
            for graph in graphs:
                outcomes |= await self._resolve(tx, graph, [d for d in drafts if d.req.graph == graph])
            receipts: dict[int, RememberReceipt] = {}
            written: list[_Draft] = []
            for d in drafts:
                outcome = outcomes[d.index]
                d.triples = outcome if isinstance(outcome, list) else []
                if d.key in known:  # a content key names its graph: no two graphs share one
                    memory_id, digest = known[d.key]
                    receipts[d.index] = RememberReceipt(
                        index=d.index, status="duplicate", id=memory_id, hash=digest
                    )
                elif isinstance(outcome, GraphsvcError):
                    receipts[d.index] = RememberReceipt.rejected(d.index, outcome)
                else:
                    known[d.key] = (d.id, d.digest)
                    receipts[d.index] = RememberReceipt(
                        index=d.index, status="created", id=d.id, hash=d.digest
                    )
                    written.append(d)
            if written:
                await self._create(tx, written, begun)
            return [receipts[d.index] for d in drafts]

        receipts = await self._store.write_transaction(work)
        self.folder.written(
            d.req.graph for d, r in zip(drafts, receipts, strict=True) if r.status == "created"
        )
        return receipts

    async def _create(self, tx: Reader, written: list[_Draft], begun: dict[str, dict[str, Any]]) -> None:
        """The memories, each graph's in remember order after its last position (as memory/begin read
        it, under the graph's lock), and the windows they touch."""
        commit = _Commit()
        for graph in sorted({d.req.graph for d in written}):
            mine = [d for d in written if d.req.graph == graph]
            base, recent = begun[graph]["seq"], begun[graph]["recent"]
            sequence = [(row["id"], row["text"]) for row in recent] + [(d.id, d.req.text) for d in mine]
            window = {
                w["id"]: w["window"]
                for w in windows(sequence, [i for i, _ in sequence[max(0, len(recent) - WINDOW) :]])
            }
            commit.states.append({"graph": graph, "seq": base + len(mine)})
            commit.memories += [d.row(base + 1 + n, window[d.id]) for n, d in enumerate(mine)]
            replaced = commit.rewindow(graph, {row["id"]: row["window"] for row in recent[-WINDOW:]}, window)
            commit.count(
                graph, [c for d in mine for c in fields_of(d.req.text, window[d.id], d.tags, 1)] + replaced
            )
        await commit.run(tx)
        if self._embeddings is not None:
            for graph in sorted({d.req.graph for d in written}):
                await self._embeddings.mark_pending(
                    tx, graph, [d.id for d in written if d.req.graph == graph]
                )

    @staticmethod
    async def _resolve(
        tx: Reader, graph: str, drafts: list[_Draft]
    ) -> dict[int, list[tuple[str, str, str]] | GraphsvcError]:
        """Resolve relation endpoints: the item's own entities (by id, else name), then entities of
        the batch and of the graph; and check that the memories a draft supersedes are in the graph.
        Each draft's relation triples, or why it cannot be written."""
        introduced: dict[str, set[str]] = {}
        for d in drafts:
            for e in d.entities:
                introduced.setdefault(e.id, set()).add(e.id)
                introduced.setdefault(e.name, set()).add(e.id)
        local = {d.index: _local_refs(d.entities, d.refs) for d in drafts}
        pending = sorted({ref for d in drafts for ref in d.refs if ref not in local[d.index]})
        found: dict[str, list[str]] = {}
        if pending:
            rows = await tx.run("memory/resolve_entities", graph=graph, refs=pending)
            found = {row["ref"]: row["ids"] for row in rows}
        superseded = sorted({p for d in drafts for p in d.req.supersedes})
        known: set[str] = set()
        if superseded:
            [row] = await tx.run("memory/known_ids", graph=graph, ids=superseded)
            known = set(row["ids"])
        outcomes: dict[int, list[tuple[str, str, str]] | GraphsvcError] = {}
        for d in drafts:
            try:
                missing = sorted(set(d.req.supersedes) - known)
                if missing:
                    raise NotFound(f"no memory {missing[0]!r} in graph {graph!r} to supersede")
                resolved = {
                    ref: local[d.index].get(ref)
                    or _one_entity(ref, sorted(set(found.get(ref, [])) | introduced.get(ref, set())))
                    for ref in d.refs
                }
            except GraphsvcError as error:
                outcomes[d.index] = error
                continue
            outcomes[d.index] = [(resolved[r.from_], r.type, resolved[r.to]) for r in d.req.relations]
        return outcomes

    async def upgrade(self) -> list[str]:
        """Key the memories of older versions by graph so keyword recall finds them, and count the term
        statistics of graphs that older versions stored; returns the graphs upgraded. A start-up step
        that reads every memory once to find them (34 ms warm, 0.7 s cold for 29k memories here), then
        writes only the unkeyed ones and reads only the uncounted graphs."""
        await self.folder.adopt_pending()
        graphs = [row["graph"] for row in await self._store.run("memory/unkeyed_graphs")]
        for graph in graphs:
            await self._store.run("memory/key_graph", graph=graph, key=graph_key(graph))
        uncounted = [row["graph"] for row in await self._store.run("memory/uncounted_graphs")]
        for graph in uncounted:
            await self.count_terms_again(graph)
        return sorted(set(graphs + uncounted))

    async def count_terms_again(self, graph: str) -> None:
        """Count a graph's term statistics from its memories, in one transaction that holds them."""

        async def work(tx: Reader) -> None:
            await tx.run("memory/reset_stats", graph=graph)
            rows = await tx.run("memory/indexed_fields", graph=graph)
            changes = [c for r in rows for c in fields_of(r["text"], r["window"], r["tags"] or [], 1)]
            await tx.run("memory/count", **counted(graph, tally(changes)))

        await self._store.write_transaction(work)

    # ---- recall ---------------------------------------------------------------------------------

    async def recall(self, req: RecallInput) -> RecallResult:
        if req.entity is None and not (req.query and req.query.strip()):
            raise InvalidInput("recall needs a query, an entity, or both")
        lucene = lucene_query(req.graph, req.query) if req.query else None
        start: list[Node] = []
        if req.entity is not None:
            rows = await self._store.run("memory/resolve_entities", graph=req.graph, refs=[req.entity])
            ids: list[str] = rows[0]["ids"] if rows else []
            if not ids:
                raise NotFound(f"no entity named {req.entity!r} in graph {req.graph!r}")
            start += [Node.from_row(row, -1) for row in await fetch_nodes(self._store, req.graph, ids)]
        vector = self._embeddings.encode_query(req.query) if self._embeddings else None
        hits = _Hits()
        if lucene is not None:
            hits = await self._keyword_hits(req.graph, lucene, req.query or "")
            start += [Node.from_row(row, 0) for row in hits.rows]
        text_scores = hits.scores
        semantic = await self._semantic(req.graph, vector, list(text_scores))
        start += [Node.from_row(row, 0) for row in semantic.seeds if row["id"] not in text_scores]
        context = await walk(
            self._store,
            req.graph,
            start,
            max_depth=2 * req.hops + 1,
            cap=CONTEXT_NODE_CAP,
            entities_only_after=2 * req.hops,
        )
        asked = set(words(req.query or ""))
        named = {
            n.id
            for n in context.nodes.values()
            if not n.is_memory and (name := set(words(n.text))) and name <= asked
        }
        memory_ids = [n.id for n in context.nodes.values() if n.is_memory and n.depth >= 0]
        [found] = await self._store.run("memory/validity", graph=req.graph, ids=memory_ids)
        validity = {row["id"]: row for row in found["rows"]}
        at, now = (format_timestamp(req.asOf) if req.asOf else None), format_timestamp(self._clock())
        keep = None if req.history else {i for i, row in validity.items() if _valid_at(row, at, now)}
        evidence = _evidence(context, hits, named, req.hops, semantic, keep)
        ranked = _ranked(evidence, list(hits.scores))[: req.limit]
        await self._detail(req.graph, [context.nodes[memory_id] for _, _, memory_id in ranked])
        memories = [
            _recalled(context.nodes[memory_id], parts, hop, validity[memory_id])
            for parts, hop, memory_id in ranked
        ]
        return _recall_result(context, memories)

    async def _keyword_hits(self, graph: str, lucene: str, query: str) -> _Hits:
        """The top KEYWORD_SEEDS of Lucene's top CANDIDATES, rescored by BM25 over the graph's own
        statistics (Lucene's as they are for a graph whose statistics are not counted yet), with the
        query's attainable BM25 (services/fusion.py; the best hit's stands in without statistics)."""
        terms = [term for word in keywords(query) for term in analyze(word)]
        if not terms:  # stop words only: Lucene would match every memory of the graph by its graphKey
            return _Hits()
        [found] = await self._store.run(
            "graph/keyword_hits", graph=graph, lucene=lucene, limit=CANDIDATES, terms=sorted(set(terms))
        )
        rows: list[dict[str, Any]] = found["rows"]
        stats = GraphStats.from_row(found["stats"], found["pending"])
        attainable = 0.0
        if stats is not None:
            scorer = QueryScorer(stats, terms, FIELD_WEIGHTS)
            attainable = scorer.attainable()
            for row in rows:
                tags: list[str] = row["tags"] or []
                row["score"] = scorer.score(
                    {
                        "text": analyzed_lines(row["text"]),
                        "window": analyzed_lines(row["window"] or ""),
                        "tags": analyzed_lines(*tags),
                    }
                )
            rows.sort(key=_by_score_then_order)
        rows = rows[:KEYWORD_SEEDS]
        best = max((row["score"] for row in rows), default=0.0)
        return _Hits(rows, attainable or (fusion.K1 + 1) * best)

    async def _semantic(
        self, graph: str, vector: Awaitable[list[float]] | None, hit_ids: list[str]
    ) -> Semantic:
        """The embeddings' seeds and similarities (services/embeddings.py); none when they are off."""
        if vector is None or self._embeddings is None:
            return Semantic()
        return await self._embeddings.semantic(graph, await vector, hit_ids)

    async def _detail(self, graph: str, nodes: list[Node]) -> None:
        """Fill in text, tags and anchor of the memories a walk reached (it reads only ids)."""
        bare = [n for n in nodes if n.is_memory and not n.text]
        if bare:
            rows = {row["id"]: row for row in await fetch_nodes(self._store, graph, [n.id for n in bare])}
            for node in bare:
                row = rows.get(node.id)
                if row:
                    node.text, node.tags, node.anchorId = row["text"], row["tags"] or [], row["anchorId"]

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
        await self._detail(req.graph, list(result.nodes.values()))
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

        async def work(tx: Reader) -> None:
            rows = await tx.run("memory/forget", graph=req.graph, id=req.id, now=now)
            if not rows:
                raise NotFound(f"no memory {req.id!r} in graph {req.graph!r}")
            [gone] = rows
            commit = _Commit()
            replaced = await _close_gap(tx, req.graph, gone["seq"], commit) if gone["seq"] is not None else []
            commit.count(
                req.graph, fields_of(gone["text"], gone["window"], gone["tags"] or [], -1) + replaced
            )
            await commit.run(tx)

        await self._store.write_transaction(work)
        self.folder.written([req.graph])
        return ForgetResult(id=req.id, deleted=True)


async def _close_gap(tx: Reader, graph: str, seq: int, commit: _Commit) -> list[Change]:
    """A forgotten memory's text leaves the windows of its neighbours, which close the gap; returns
    what that changes in the graph's term statistics."""
    [around] = await tx.run("memory/around", graph=graph, seq=seq)
    rows = around["before"] + around["after"]
    targets = [row["id"] for row in around["before"][-WINDOW:] + around["after"][:WINDOW]]
    new = {w["id"]: w["window"] for w in windows([(row["id"], row["text"]) for row in rows], targets)}
    return commit.rewindow(graph, {row["id"]: row["window"] for row in rows if row["id"] in new}, new)


@dataclass
class _Commit:
    """The parameters of memory/commit: what a transaction writes, graph by graph."""

    states: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    memories: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    windows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    deltas: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def rewindow(self, graph: str, old: dict[str, str | None], new: dict[str, str]) -> list[Change]:
        """Replace the windows of the memories in `old` (id: window now) with theirs in `new`; returns
        what that changes in the term statistics."""
        self.windows += [{"graph": graph, "id": i, "window": new[i]} for i in old]
        return rewindowed({"old": window, "new": new[i]} for i, window in old.items())

    def count(self, graph: str, changes: list[Change]) -> None:
        """Record what a write changed in the index, as the graph's term statistics' delta (term_fold.py)."""
        self.deltas.append(as_delta(graph, tally(changes)))

    async def run(self, tx: Reader) -> None:
        await tx.run("memory/commit", **vars(self))


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
    if len(ids) > 1:  # well-formed, but the name is ambiguous among the entities it could mean
        raise Conflict(f"{ref!r} names {len(ids)} entities ({', '.join(sorted(ids))}); use Label:name")
    return ids[0]


def _entity_param(entity: EntityIn) -> dict[str, str]:
    return {"id": entity.id, "label": entity.label, "name": entity.name}


def _entity_out(entity: EntityIn) -> EntityOut:
    return EntityOut(id=entity.id, label=entity.label, name=entity.name)


def _by_score_then_order(row: dict[str, Any]) -> tuple[float, bool, int, str]:
    """Rescored keyword hits best first, equal scores in remember order (the graph's own `seq`; none
    for a memory of a version before it): Lucene orders its ties by index order, which is remember
    order for a graph alone on its server, but other graphs' writes move it."""
    seq = row.get("seq")
    return -row["score"], seq is None, seq or 0, row["id"]


def _valid_at(row: dict[str, Any], at: str | None, now: str) -> bool:
    """A memory holds from its start (validFrom, else when it was remembered) until its validTo or
    the start of the first memory superseding it, whichever comes first; `at` None is now, where
    whatever was remembered has started (so no replica's clock can hide a fresh write). Instants
    are `YYYY-MM-DDTHH:MM:SS.mmmZ` text, which orders as time does."""

    def start(m: dict[str, Any]) -> str:
        return m["validFrom"] or (m["createdAt"] if at else "")

    ends = [start(s) for s in row["successors"]] + ([row["validTo"]] if row["validTo"] else [])
    moment = at or now
    return start(row) <= moment and all(moment < end for end in ends)


@dataclass(frozen=True)
class _Hits:
    """Recall's keyword hits, best first (graph/keyword_hits' rows, `score` their BM25), and the
    query's attainable BM25 (services/fusion.py)."""

    rows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    attainable: float = 0.0

    @property
    def scores(self) -> dict[str, float]:
        return {row["id"]: row["score"] for row in self.rows}


def _evidence(
    context: Walk,
    hits: _Hits,
    named: set[str],
    hops: int,
    semantic: Semantic,
    keep: set[str] | None = None,
) -> dict[str, fusion.Evidence]:
    """What recall knows of each memory of the context within `hops` (services/fusion.py). Only the
    memories in `keep` (those valid at the instant asked), unless it is None (history)."""
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
    bm25 = hits.scores
    seeds = {row["id"] for row in semantic.seeds}
    found: dict[str, fusion.Evidence] = {}
    for node in nodes.values():
        if not node.is_memory or node.depth < 0 or hop_of(node.depth) > hops:
            continue
        if keep is not None and node.id not in keep:
            continue
        hop = hop_of(node.depth)
        own, near = semantic.cosines.get(node.id, (None, None))
        found_by = fusion.signals(keyword=node.id in bm25, meaning=node.id in seeds, walk=node.id in support)
        found[node.id] = fusion.Evidence(
            bm25=bm25.get(node.id, 0.0),
            attainable=hits.attainable,
            own=own,
            near=near,
            hop=hop,
            support=support.get(node.id, 0.0),
            named=node.id in boosted,
            found_by=found_by,
        )
    return found


def _ranked(evidence: dict[str, fusion.Evidence], hits: Sequence[str]) -> list[tuple[fusion.Parts, int, str]]:
    """The memories best first, as (score parts, hop, id); the score is services/fusion.py's. Equal
    scores: nearer first, then keyword hits in their own order (`hits`: by score, then remember
    order), then by id."""
    order = {memory_id: n for n, memory_id in enumerate(hits)}
    scored: list[tuple[float, int, int, str, fusion.Parts]] = []
    for memory_id, found in evidence.items():
        parts = fusion.fuse(found)
        scored.append((-round(parts.total, 4), found.hop, order.get(memory_id, len(order)), memory_id, parts))
    scored.sort(key=lambda row: row[:4])
    return [(parts, hop, memory_id) for _, hop, _, memory_id, parts in scored]


def _recalled(node: Node, parts: fusion.Parts, hop: int, validity: dict[str, Any]) -> RecalledMemory:
    """A ranked memory as recall answers it, with its score's parts and its validity (memory/validity's
    row)."""
    return RecalledMemory(
        id=node.id,
        text=node.text,
        score=round(parts.total, 4),
        distance=hop,
        anchorId=node.anchorId,
        tags=node.tags,
        validFrom=validity["validFrom"],
        validTo=validity["validTo"],
        supersededBy=sorted(s["id"] for s in validity["successors"]),
        why=ScoreParts(
            keyword=round(parts.keyword, 4),
            meaning=round(parts.meaning, 4),
            walk=round(parts.walk, 4),
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
