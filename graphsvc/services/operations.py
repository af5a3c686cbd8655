"""Every operation graphsvc offers, declared once: its name, contract models, the scope it needs, what
it does to the graph, its text rendering, where REST serves it and the service call behind it.

`graphsvc.mcpserver` publishes each operation that has a `tool` as an MCP tool and `graphsvc.rest` each
one that has a `route` as a REST operation (under /v1, its `name` the operation id); neither lists the
operations again. The table holds no transport: an interface reads it and does the HTTP or MCP part.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from graphsvc.domain import render
from graphsvc.domain.listing import ListMemoriesInput, ListMemoriesResult, ListTagsInput, ListTagsResult
from graphsvc.domain.locus import (
    InsightsInput,
    InsightsResult,
    ListContextsInput,
    ListContextsResult,
    RetrieveInput,
    RetrieveResult,
    StoreEventInput,
    StoreEventResult,
)
from graphsvc.domain.models import (
    AnchorResult,
    ExploreInput,
    ExploreResult,
    ForgetResult,
    GraphInput,
    IdInput,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberBatchInput,
    RememberBatchResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.domain.proof import ProofBundle
from graphsvc.services import deadline
from graphsvc.services.access import Need
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.bulk import remember_items
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService


@dataclass(frozen=True)
class Backends:
    """The services the operations call."""

    memory: MemoryService
    anchoring: AnchoringService
    locus: LocusService


@dataclass(frozen=True)
class Hints:
    """What a call does to the graph (MCP tool annotations; tests/interfaces/test_tool_metadata.py holds each)."""

    read_only: bool
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool = False  # it reaches the chain


@dataclass(frozen=True)
class Tool:
    """How an operation is published as an MCP tool."""

    description: str
    hints: Hints
    text: Callable[[Any, Any], str]  # (result, validated input) -> the seed's text rendering


# How REST takes an operation's input: the JSON body; the memory id in the path and the graph in the
# query; or an optional body (anchor: nothing to say but, perhaps, the graph).
Takes = Literal["body", "memory_path", "optional_body"]
Statuses = tuple[int, ...]
LOOKUP, WRITE = 404, 409


@dataclass(frozen=True)
class Route:
    """How REST serves an operation (under /v1)."""

    method: Literal["GET", "POST", "DELETE"]
    path: str  # `{memory_id:memory_id}`: a memory id's segment (graphsvc.rest.routes registers it)
    tag: Literal["memories", "graph", "locusgraph"]
    doc: str  # the OpenAPI description
    takes: Takes = "body"
    status: int = 200
    errors: Statuses = ()  # beyond 401, 403, 422 and 503, which every operation may answer


@dataclass(frozen=True)
class Operation:
    name: str  # the MCP tool's name and the REST operation id
    input: type[BaseModel]
    output: type[BaseModel]
    need: Need
    call: Callable[[Backends, Any], Awaitable[Any]]  # (services, input scoped to its graph) -> output
    tool: Tool | None = None
    route: Route | None = None
    # Answers within GRAPHSVC_DEADLINE_S of the request's arrival (services/deadline.py); anchor_now
    # waits for finality instead, within its own documented bounds.
    deadline: bool = True

    async def run(self, backends: Backends, request: Any, deadline_s: float, arrived: float | None) -> Any:
        """`call`, within what is left of the deadline counted from `arrived` (None: from now)."""
        work = self.call(backends, request)
        if not self.deadline:
            return await work
        return await deadline.within(work, deadline_s, deadline.now() if arrived is None else arrived)


def _writes(*, destructive: bool, idempotent: bool, chain: bool = False) -> Hints:
    return Hints(read_only=False, destructive=destructive, idempotent=idempotent, open_world=chain)


READ = Hints(read_only=True)
# A new memory per call, but the same content again within RETRY_WINDOW_S is a retry (its receipt).
ADDS = _writes(destructive=False, idempotent=True)


async def _remember_batch(backends: Backends, request: RememberBatchInput) -> RememberBatchResult:
    receipts = await remember_items(backends.memory, request.items, request.graph, interactive=True)
    return RememberBatchResult.of(receipts)


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "remember",
        RememberInput,
        RememberResult,
        "write",
        lambda b, r: b.memory.remember(r),
        Tool(
            "Store a new memory with optional entities (label, name), relations between them "
            "(from, type UPPER_SNAKE_CASE, to: names in entities or already in the graph) and tags.",
            ADDS,
            lambda result, request: render.remember_text(result, request.text),
        ),
        Route(
            "POST",
            "/memories",
            "memories",
            "Store a new memory with optional entities, relations and tags.",
            status=201,
            errors=(LOOKUP, WRITE),
        ),
    ),
    Operation(
        "remember_batch",
        RememberBatchInput,
        RememberBatchResult,
        "write",
        _remember_batch,
        route=Route(
            "POST",
            "/memories/batch",
            "memories",
            "Store up to 1,000 memories in one transaction. Idempotent: an item whose content is already\n"
            "in the graph is a `duplicate` naming the existing memory. A bad item is `rejected` with its\n"
            "reason and writes nothing; the others land. One receipt per item, in order.",
            errors=(WRITE,),
        ),
    ),
    Operation(
        "list_memories",
        ListMemoriesInput,
        ListMemoriesResult,
        "read",
        lambda b, r: b.memory.list_memories(r),
        route=Route(
            "POST",
            "/memories/list",
            "memories",
            "A page of the graph's memories holding the tags given (and a tag path beneath `under`),\n"
            "newest first: by default only current ones (none supersedes them, still valid), with the\n"
            "data remembered with them and the total over every page.",
        ),
    ),
    Operation(
        "list_tags",
        ListTagsInput,
        ListTagsResult,
        "read",
        lambda b, r: b.memory.list_tags(r),
        route=Route(
            "POST",
            "/tags/list",
            "memories",
            "A page of the graph's tags in order (all, or a tag path and those beneath it), with how many\n"
            "memories hold each and the total over every page.",
        ),
    ),
    Operation(
        "recall",
        RecallInput,
        RecallResult,
        "read",
        lambda b, r: b.memory.recall(r),
        Tool(
            "Search long-term memory by keywords and/or entity name. The query may be a question in "
            "your own words: memories are also found by meaning, and a time it names ('last week', "
            "'in May 2023') favours what happened then. hops 0-3 (default 1) widens to "
            "memories linked through entities; limit 1-50 (default 10). Memories come scored with their "
            "hop distance and why (keyword, meaning, walk, time), plus the context graph (capped at 300 "
            "nodes: contextTruncated).",
            READ,
            lambda result, _: render.recall_text(result),
        ),
        Route(
            "POST",
            "/recall",
            "graph",
            "Search memories by keywords or a question in your own words (also by meaning and the time\n"
            "it names) and/or an entity, scored, with hop distances.",
            errors=(LOOKUP,),
        ),
    ),
    Operation(
        "link",
        LinkInput,
        LinkResult,
        "write",
        lambda b, r: b.memory.link(r),
        Tool(
            "Create a typed relationship (UPPER_SNAKE_CASE) between two entities, creating them if missing; "
            "linking the same pair with the same type again updates its props.",
            _writes(destructive=True, idempotent=True),  # linking again overwrites the props
            lambda result, _: render.link_text(result),
        ),
        Route(
            "POST",
            "/links",
            "graph",
            "Create (or update) a typed relationship between two entities.",
            errors=(WRITE,),
        ),
    ),
    Operation(
        "explore",
        ExploreInput,
        ExploreResult,
        "read",
        lambda b, r: b.memory.explore(r),
        Tool(
            "Breadth-first traversal from one or more node ids (memory ids or Label:name entity ids): "
            "maxDepth 0-3 (default 2), direction out|in|both, edge types filter, limit 1-300 nodes.",
            READ,
            lambda result, _: render.explore_text(result),
        ),
        Route(
            "POST",
            "/explore",
            "graph",
            "Breadth-first traversal from one or more node ids.",
            errors=(LOOKUP,),
        ),
    ),
    Operation(
        "forget",
        IdInput,
        ForgetResult,
        "write",
        lambda b, r: b.memory.forget(r),
        Tool(
            "Delete a memory and all its edges. Entities still mentioned elsewhere stay. "
            "An on-chain anchor is not revoked.",
            _writes(destructive=True, idempotent=True),  # forgetting again changes nothing
            lambda result, _: render.forget_text(result),
        ),
        Route(
            "DELETE",
            "/memories/{memory_id:memory_id}",
            "memories",
            "Delete a memory and all its edges.",
            takes="memory_path",
            errors=(LOOKUP, WRITE),
        ),
    ),
    Operation(
        "anchor_now",
        GraphInput,
        AnchorResult,
        "write",
        lambda b, r: b.anchoring.anchor_now(r),
        Tool(
            "Anchor all pending (un-anchored) memories of the graph on-chain as one Merkle batch. "
            "Requires MONAD_RPC_URL and ANCHOR_CONTRACT; without them it answers status not_configured.",
            _writes(destructive=False, idempotent=True, chain=True),  # again: nothing pending
            lambda result, _: render.anchor_text(result),
        ),
        Route(
            "POST",
            "/anchor",
            "graph",
            "Anchor all pending memories of the graph as one Merkle batch.",
            takes="optional_body",
            errors=(WRITE,),
        ),
        deadline=False,
    ),
    Operation(
        "verify_memory",
        IdInput,
        VerifyResult,
        "read",
        lambda b, r: b.anchoring.verify(r),
        Tool(
            "Verify a memory's hash and Merkle proof against the root recorded on-chain (at the finalized "
            "block): hashValid, anchored, proofValid, onChain, with the problem when one fails.",
            Hints(read_only=True, open_world=True),
            lambda result, _: render.verify_text(result),
        ),
        Route(
            "GET",
            "/memories/{memory_id:memory_id}/verify",
            "memories",
            "Check the memory's hash, batch, Merkle proof and on-chain root.",
            takes="memory_path",
            errors=(LOOKUP,),
        ),
    ),
    Operation(
        "proof_bundle",
        IdInput,
        ProofBundle,
        "read",
        lambda b, r: b.anchoring.bundle(r),
        route=Route(
            "GET",
            "/memories/{memory_id:memory_id}/proof",
            "memories",
            "A self-contained proof that verifies without graphsvc (see the README).",
            takes="memory_path",
            errors=(LOOKUP,),
        ),
    ),
    # The LocusGraph surface (advanced aliases of the operations above, for agents built for it).
    Operation(
        "store_event",
        StoreEventInput,
        StoreEventResult,
        "write",
        lambda b, r: b.locus.store_event(r),
        Tool(
            "LocusGraph: store an event (fact|action|decision|observation|feedback) as a memory in its "
            "context (type:name), linked to the contexts it reinforces, extends, contradicts or relates to. "
            "Aliases: event_type/eventType, content, event_id.",
            ADDS,
            lambda result, _: render.store_event_text(result),
        ),
        Route(
            "POST",
            "/locus/store_event",
            "locusgraph",
            "Store an event as a memory in its context, linked to the contexts it relates to.",
            status=201,
            errors=(WRITE,),
        ),
    ),
    Operation(
        "retrieve_memories",
        RetrieveInput,
        RetrieveResult,
        "read",
        lambda b, r: b.locus.retrieve(r),
        Tool(
            "LocusGraph: ranked memories for a query (the recall engine), filtered by context_ids or "
            "context_types ({type: [names]}, [] for every name); include_ids adds memory and context ids.",
            READ,
            lambda result, _: render.retrieve_text(result),
        ),
        Route(
            "POST",
            "/locus/retrieve_memories",
            "locusgraph",
            "Ranked memories for a query, filtered by contexts.",
        ),
    ),
    Operation(
        "list_contexts",
        ListContextsInput,
        ListContextsResult,
        "read",
        lambda b, r: b.locus.list_contexts(r),
        Tool(
            "LocusGraph: contexts (type:name) with their event counts, filtered by type and name, "
            "paged (limit, default 100; page, default 0) in a stable order, with the total.",
            READ,
            lambda result, _: render.list_contexts_text(result),
        ),
        Route("POST", "/locus/list_contexts", "locusgraph", "Contexts with their event counts, paged."),
    ),
    Operation(
        "generate_insights",
        InsightsInput,
        InsightsResult,
        "write",  # as in LocusGraph; it writes nothing (read-only hints)
        lambda b, r: b.locus.insights(r),
        Tool(
            "LocusGraph: for a task, the most relevant knowledge grouped by context, with how often each "
            "context is reinforced, what contradicts it, and its latest event (no LLM; deterministic). "
            "Alias: context_query for locus_query.",
            READ,
            lambda result, _: render.insights_text(result),
        ),
        Route(
            "POST",
            "/locus/generate_insights",
            "locusgraph",
            "For a task: relevant knowledge by context, reinforcements, contradictions, the latest.",
        ),
    ),
)

TOOLS = tuple(op for op in OPERATIONS if op.tool is not None)
ROUTES = tuple(op for op in OPERATIONS if op.route is not None)
