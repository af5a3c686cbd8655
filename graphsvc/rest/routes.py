"""REST under /v1: the same operations and the same contract models as the MCP tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.security import HTTPBearer
from pydantic import BaseModel

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
    Graph,
    GraphInput,
    IdInput,
    LinkInput,
    LinkResult,
    MemoryId,
    RecallInput,
    RecallResult,
    RememberBatchInput,
    RememberBatchResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.domain.proof import ProofBundle
from graphsvc.rest.edge import ErrorResponse, principal
from graphsvc.services.access import AccessService, Need, Principal
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.bulk import remember_items
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService

B = TypeVar("B", bound=BaseModel)


@dataclass(frozen=True)
class Caller:
    """Who calls (authenticated before the body was read) and the X-Graph-Id header."""

    access: AccessService
    principal: Principal | None
    header_graph: str | None

    def graph(self, need: Need, named: str | None) -> str:
        return self.access.permit(self.principal, self.header_graph, named, need)

    def scoped(self, body: B, need: Need) -> B:
        """`body` with its graph set to the one this caller may use."""
        return self.access.scoped(self.principal, self.header_graph, body, need)


# The dependencies are coroutines: FastAPI runs a plain function in its thread pool, a thread hop per
# dependency per request (the remember profile under load: 7% of the event loop's time).
async def _caller(
    request: Request,
    _: Annotated[
        object, Depends(HTTPBearer(auto_error=False, description="gsk_... token (graphsvc token create)"))
    ],
    x_graph_id: Annotated[Graph | None, Header(description="Must name the token's graph if given")] = None,
) -> Caller:
    return Caller(request.app.state.access, principal(request), x_graph_id)


async def _memory(request: Request) -> MemoryService:
    return request.app.state.memory


async def _anchoring(request: Request) -> AnchoringService:
    return request.app.state.anchoring


async def _locus(request: Request) -> LocusService:
    return request.app.state.locus


Memory = Annotated[MemoryService, Depends(_memory)]
Locus = Annotated[LocusService, Depends(_locus)]
Anchoring = Annotated[AnchoringService, Depends(_anchoring)]
Who = Annotated[Caller, Depends(_caller)]
GraphQuery = Annotated[Graph | None, Query(description="Defaults to the token's graph")]
MemoryPath = Annotated[MemoryId, Path(description="Id of the Memory node (mem_...)")]

STATUSES = {
    401: "No valid bearer token (unauthorized)",
    403: "The token is bound to another graph or lacks a scope (forbidden)",
    404: "Not found (not_found)",
    409: "Conflicts with the graph's state (conflict)",
    422: "The input breaks the schema (invalid_input)",
    503: "Neo4j or the chain cannot be reached, or a feature is not configured",
}


def errors(*extra: int) -> dict[int | str, dict[str, Any]]:
    """The error statuses of an operation: 401, 403, 422 and 503 for every one, plus `extra`."""
    responses: dict[int | str, dict[str, Any]] = {}
    for status in sorted({401, 403, 422, 503, *extra}):
        responses[status] = {"model": ErrorResponse, "description": STATUSES[status]}
    responses[401]["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}, "description": "Bearer"}}
    return responses


memories = APIRouter(prefix="/memories", tags=["memories"])
graph = APIRouter(tags=["graph"])
locus = APIRouter(prefix="/locus", tags=["locusgraph"])
LOOKUP, WRITE = 404, 409


@memories.post("", operation_id="remember", status_code=201, responses=errors(LOOKUP, WRITE))
async def remember(body: RememberInput, memory: Memory, who: Who) -> RememberResult:
    """Store a new memory with optional entities, relations and tags."""
    return await memory.remember(who.scoped(body, "write"))


@memories.post("/batch", operation_id="remember_batch", responses=errors(WRITE))
async def remember_batch(body: RememberBatchInput, memory: Memory, who: Who) -> RememberBatchResult:
    """Store up to 1,000 memories in one transaction. Idempotent: an item whose content is already
    in the graph is a `duplicate` naming the existing memory. A bad item is `rejected` with its
    reason and writes nothing; the others land. One receipt per item, in order."""
    graph = who.graph("write", body.graph if "graph" in body.model_fields_set else None)
    return RememberBatchResult.of(await remember_items(memory, body.items, graph))


@memories.delete("/{memory_id}", operation_id="forget", responses=errors(LOOKUP, WRITE))
async def forget(memory_id: MemoryPath, memory: Memory, who: Who, graph: GraphQuery = None) -> ForgetResult:
    """Delete a memory and all its edges."""
    return await memory.forget(IdInput.model_construct(id=memory_id, graph=who.graph("write", graph)))


@memories.get("/{memory_id}/verify", operation_id="verify_memory", responses=errors(LOOKUP))
async def verify_memory(
    memory_id: MemoryPath, anchoring: Anchoring, who: Who, graph: GraphQuery = None
) -> VerifyResult:
    """Check the memory's hash, batch, Merkle proof and on-chain root."""
    return await anchoring.verify(IdInput.model_construct(id=memory_id, graph=who.graph("read", graph)))


@memories.get("/{memory_id}/proof", operation_id="proof_bundle", responses=errors(LOOKUP))
async def proof_bundle(
    memory_id: MemoryPath, anchoring: Anchoring, who: Who, graph: GraphQuery = None
) -> ProofBundle:
    """A self-contained proof that verifies without graphsvc (see the README)."""
    return await anchoring.bundle(IdInput.model_construct(id=memory_id, graph=who.graph("read", graph)))


@graph.post("/anchor", operation_id="anchor_now", responses=errors(WRITE))
async def anchor_now(anchoring: Anchoring, who: Who, body: GraphInput | None = None) -> AnchorResult:
    """Anchor all pending memories of the graph as one Merkle batch."""
    return await anchoring.anchor_now(who.scoped(body or GraphInput(), "write"))


@graph.post("/recall", operation_id="recall", responses=errors(LOOKUP))
async def recall(body: RecallInput, memory: Memory, who: Who) -> RecallResult:
    """Search memories by keywords and/or an entity, scored, with hop distances."""
    return await memory.recall(who.scoped(body, "read"))


@graph.post("/links", operation_id="link", responses=errors(WRITE))
async def link(body: LinkInput, memory: Memory, who: Who) -> LinkResult:
    """Create (or update) a typed relationship between two entities."""
    return await memory.link(who.scoped(body, "write"))


@graph.post("/explore", operation_id="explore", responses=errors(LOOKUP))
async def explore(body: ExploreInput, memory: Memory, who: Who) -> ExploreResult:
    """Breadth-first traversal from one or more node ids."""
    return await memory.explore(who.scoped(body, "read"))


@locus.post("/store_event", operation_id="store_event", status_code=201, responses=errors(WRITE))
async def store_event(body: StoreEventInput, service: Locus, who: Who) -> StoreEventResult:
    """Store an event as a memory in its context, linked to the contexts it relates to."""
    return await service.store_event(who.scoped(body, "write"))


@locus.post("/retrieve_memories", operation_id="retrieve_memories", responses=errors())
async def retrieve_memories(body: RetrieveInput, service: Locus, who: Who) -> RetrieveResult:
    """Ranked memories for a query, filtered by contexts."""
    return await service.retrieve(who.scoped(body, "read"))


@locus.post("/list_contexts", operation_id="list_contexts", responses=errors())
async def list_contexts(body: ListContextsInput, service: Locus, who: Who) -> ListContextsResult:
    """Contexts with their event counts, paged."""
    return await service.list_contexts(who.scoped(body, "read"))


@locus.post("/generate_insights", operation_id="generate_insights", responses=errors())
async def generate_insights(body: InsightsInput, service: Locus, who: Who) -> InsightsResult:
    """For a task: relevant knowledge by context, reinforcements, contradictions, the latest."""
    return await service.insights(who.scoped(body, "write"))


def install(app: FastAPI) -> None:
    """Mount the routers under /v1."""
    for router in (memories, graph, locus):
        app.include_router(router, prefix="/v1")
