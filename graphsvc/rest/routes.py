"""REST under /v1: the same operations and the same contract models as the MCP tools."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from graphsvc.domain.models import (
    AnchorResult,
    GraphInput,
    ProofBundle,
    VerifyResult,
    DEFAULT_GRAPH,
    ExploreInput,
    ExploreResult,
    ForgetResult,
    Graph,
    IdInput,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberInput,
    RememberResult,
)
from graphsvc.errors import GraphsvcError
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService


class ErrorBody(BaseModel):
    code: str
    message: str
    fields: list[str] = []


class ErrorResponse(BaseModel):
    error: ErrorBody


def _memory(request: Request) -> MemoryService:
    return request.app.state.memory


def _anchoring(request: Request) -> AnchoringService:
    return request.app.state.anchoring


Memory = Annotated[MemoryService, Depends(_memory)]
Anchoring = Annotated[AnchoringService, Depends(_anchoring)]
GraphQuery = Annotated[Graph, Query()]
ERRORS: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorResponse} for status in (404, 409, 422, 503)
}

memories = APIRouter(prefix="/memories", tags=["memories"], responses=ERRORS)
graph = APIRouter(tags=["graph"], responses=ERRORS)


@memories.post("", operation_id="remember", status_code=201)
async def remember(body: RememberInput, memory: Memory) -> RememberResult:
    """Store a new memory with optional entities, relations and tags."""
    return await memory.remember(body)


@memories.delete("/{memory_id}", operation_id="forget")
async def forget(memory_id: str, memory: Memory, graph: GraphQuery = DEFAULT_GRAPH) -> ForgetResult:
    """Delete a memory and all its edges."""
    return await memory.forget(IdInput(id=memory_id, graph=graph))


@memories.get("/{memory_id}/verify", operation_id="verify_memory")
async def verify_memory(memory_id: str, anchoring: Anchoring, graph: GraphQuery = DEFAULT_GRAPH) -> VerifyResult:
    """Check the memory's hash, batch, Merkle proof and on-chain root."""
    return await anchoring.verify(IdInput(id=memory_id, graph=graph))


@memories.get("/{memory_id}/proof", operation_id="proof_bundle")
async def proof_bundle(memory_id: str, anchoring: Anchoring, graph: GraphQuery = DEFAULT_GRAPH) -> ProofBundle:
    """A self-contained proof that verifies without graphsvc (see the README)."""
    return await anchoring.bundle(IdInput(id=memory_id, graph=graph))


@graph.post("/anchor", operation_id="anchor_now")
async def anchor_now(anchoring: Anchoring, body: GraphInput | None = None) -> AnchorResult:
    """Anchor all pending memories of the graph as one Merkle batch."""
    return await anchoring.anchor_now(body or GraphInput())


@graph.post("/recall", operation_id="recall")
async def recall(body: RecallInput, memory: Memory) -> RecallResult:
    """Search memories by keywords and/or an entity, scored, with hop distances."""
    return await memory.recall(body)


@graph.post("/links", operation_id="link")
async def link(body: LinkInput, memory: Memory) -> LinkResult:
    """Create (or update) a typed relationship between two entities."""
    return await memory.link(body)


@graph.post("/explore", operation_id="explore")
async def explore(body: ExploreInput, memory: Memory) -> ExploreResult:
    """Breadth-first traversal from one or more node ids."""
    return await memory.explore(body)


def _error(status: int, code: str, message: str, fields: list[str] | None = None) -> JSONResponse:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, fields=fields or []))
    return JSONResponse(body.model_dump(), status_code=status)


def install(app: FastAPI) -> None:
    """Mount the routers under /v1 and map the error tree once."""
    for router in (memories, graph):
        app.include_router(router, prefix="/v1")

    @app.exception_handler(GraphsvcError)
    async def _graphsvc_error(_: Request, e: GraphsvcError) -> JSONResponse:
        return _error(e.status, e.code, e.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        # Field paths and reasons only: the rejected values are the caller's data.
        errors = e.errors()
        fields = sorted({".".join(str(p) for p in err["loc"] if p != "body") for err in errors})
        reasons = "; ".join(f"{'.'.join(str(p) for p in err['loc'][1:])}: {err['msg']}" for err in errors[:5])
        return _error(422, "invalid_input", reasons, fields)
