"""REST under /v1: the same operations and the same contract models as the MCP tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
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
    RecallInput,
    RecallResult,
    RememberBatchInput,
    RememberBatchResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.domain.proof import ProofBundle
from graphsvc.errors import GraphsvcError, Unavailable, validation_reasons
from graphsvc.services.access import AccessService, Need
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.bulk import remember_items
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService

B = TypeVar("B", bound=BaseModel)
RETRY_AFTER_S = 5


class ErrorBody(BaseModel):
    code: str
    message: str
    fields: list[str] = []


class ErrorResponse(BaseModel):
    error: ErrorBody


@dataclass(frozen=True)
class Caller:
    """Who calls: the bearer token and X-Graph-Id header, checked by the access service."""

    access: AccessService
    authorization: str | None
    header_graph: str | None

    async def graph(self, need: Need, named: str | None) -> str:
        return await self.access.authorize(self.authorization, self.header_graph, named, need)

    async def scoped(self, body: B, need: Need) -> B:
        """`body` with its graph set to the one this caller may use."""
        named = body.graph if "graph" in body.model_fields_set else None
        return body.model_copy(update={"graph": await self.graph(need, named)})


def _caller(
    request: Request,
    _: Annotated[
        object, Depends(HTTPBearer(auto_error=False, description="gsk_... token (graphsvc token create)"))
    ],
    x_graph_id: Annotated[str | None, Header(description="Must name the token's graph if given")] = None,
) -> Caller:
    return Caller(request.app.state.access, request.headers.get("authorization"), x_graph_id)


def _memory(request: Request) -> MemoryService:
    return request.app.state.memory


def _anchoring(request: Request) -> AnchoringService:
    return request.app.state.anchoring


def _locus(request: Request) -> LocusService:
    return request.app.state.locus


Memory = Annotated[MemoryService, Depends(_memory)]
Locus = Annotated[LocusService, Depends(_locus)]
Anchoring = Annotated[AnchoringService, Depends(_anchoring)]
Who = Annotated[Caller, Depends(_caller)]
GraphQuery = Annotated[Graph | None, Query(description="Defaults to the token's graph")]
ERRORS: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorResponse} for status in (401, 403, 404, 409, 422, 503)
}

memories = APIRouter(prefix="/memories", tags=["memories"], responses=ERRORS)
graph = APIRouter(tags=["graph"], responses=ERRORS)
locus = APIRouter(prefix="/locus", tags=["locusgraph"], responses=ERRORS)


@memories.post("", operation_id="remember", status_code=201)
async def remember(body: RememberInput, memory: Memory, who: Who) -> RememberResult:
    """Store a new memory with optional entities, relations and tags."""
    return await memory.remember(await who.scoped(body, "write"))


@memories.post("/batch", operation_id="remember_batch")
async def remember_batch(body: RememberBatchInput, memory: Memory, who: Who) -> RememberBatchResult:
    """Store up to 1,000 memories in one transaction. Idempotent: an item whose content is already
    in the graph is a `duplicate` naming the existing memory. A bad item is `rejected` with its
    reason and writes nothing; the others land. One receipt per item, in order."""
    graph = await who.graph("write", body.graph if "graph" in body.model_fields_set else None)
    return RememberBatchResult.of(await remember_items(memory, body.items, graph))


@memories.delete("/{memory_id}", operation_id="forget")
async def forget(memory_id: str, memory: Memory, who: Who, graph: GraphQuery = None) -> ForgetResult:
    """Delete a memory and all its edges."""
    return await memory.forget(IdInput(id=memory_id, graph=await who.graph("write", graph)))


@memories.get("/{memory_id}/verify", operation_id="verify_memory")
async def verify_memory(
    memory_id: str, anchoring: Anchoring, who: Who, graph: GraphQuery = None
) -> VerifyResult:
    """Check the memory's hash, batch, Merkle proof and on-chain root."""
    return await anchoring.verify(IdInput(id=memory_id, graph=await who.graph("read", graph)))


@memories.get("/{memory_id}/proof", operation_id="proof_bundle")
async def proof_bundle(
    memory_id: str, anchoring: Anchoring, who: Who, graph: GraphQuery = None
) -> ProofBundle:
    """A self-contained proof that verifies without graphsvc (see the README)."""
    return await anchoring.bundle(IdInput(id=memory_id, graph=await who.graph("read", graph)))


@graph.post("/anchor", operation_id="anchor_now")
async def anchor_now(anchoring: Anchoring, who: Who, body: GraphInput | None = None) -> AnchorResult:
    """Anchor all pending memories of the graph as one Merkle batch."""
    return await anchoring.anchor_now(await who.scoped(body or GraphInput(), "write"))


@graph.post("/recall", operation_id="recall")
async def recall(body: RecallInput, memory: Memory, who: Who) -> RecallResult:
    """Search memories by keywords and/or an entity, scored, with hop distances."""
    return await memory.recall(await who.scoped(body, "read"))


@graph.post("/links", operation_id="link")
async def link(body: LinkInput, memory: Memory, who: Who) -> LinkResult:
    """Create (or update) a typed relationship between two entities."""
    return await memory.link(await who.scoped(body, "write"))


@graph.post("/explore", operation_id="explore")
async def explore(body: ExploreInput, memory: Memory, who: Who) -> ExploreResult:
    """Breadth-first traversal from one or more node ids."""
    return await memory.explore(await who.scoped(body, "read"))


@locus.post("/store_event", operation_id="store_event", status_code=201)
async def store_event(body: StoreEventInput, service: Locus, who: Who) -> StoreEventResult:
    """Store an event as a memory in its context, linked to the contexts it relates to."""
    return await service.store_event(await who.scoped(body, "write"))


@locus.post("/retrieve_memories", operation_id="retrieve_memories")
async def retrieve_memories(body: RetrieveInput, service: Locus, who: Who) -> RetrieveResult:
    """Ranked memories for a query, filtered by contexts."""
    return await service.retrieve(await who.scoped(body, "read"))


@locus.post("/list_contexts", operation_id="list_contexts")
async def list_contexts(body: ListContextsInput, service: Locus, who: Who) -> ListContextsResult:
    """Contexts with their event counts, paged."""
    return await service.list_contexts(await who.scoped(body, "read"))


@locus.post("/generate_insights", operation_id="generate_insights")
async def generate_insights(body: InsightsInput, service: Locus, who: Who) -> InsightsResult:
    """For a task: relevant knowledge by context, reinforcements, contradictions, the latest."""
    return await service.insights(await who.scoped(body, "write"))


def _error(status: int, code: str, message: str, fields: list[str] | None = None) -> JSONResponse:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, fields=fields or []))
    return JSONResponse(body.model_dump(), status_code=status)


def install(app: FastAPI) -> None:
    """Mount the routers under /v1 and map the error tree once."""
    for router in (memories, graph, locus):
        app.include_router(router, prefix="/v1")

    @app.exception_handler(GraphsvcError)
    async def _graphsvc_error(_: Request, e: GraphsvcError) -> JSONResponse:
        response = _error(e.status, e.code, e.message)
        if isinstance(e, Unavailable):  # a dependency is away: worth trying again shortly
            response.headers["Retry-After"] = str(RETRY_AFTER_S)
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        # Field paths and reasons only: the rejected values are the caller's data.
        errors = e.errors()
        fields = sorted({".".join(str(p) for p in err["loc"] if p != "body") for err in errors})
        return _error(422, "invalid_input", validation_reasons(errors, skip=1), fields)
