"""REST under /v1: every operation of `services.operations` that has a route, with the same contract
models as the MCP tools (`name` is the operation id)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.security import HTTPBearer
from pydantic import BaseModel
from starlette.convertors import StringConvertor, register_url_convertor

from graphsvc.domain.models import Graph, IdInput, MemoryId
from graphsvc.http import scope
from graphsvc.http.edge import ErrorResponse
from graphsvc.services.access import AccessService, Need, Principal
from graphsvc.services.operations import ROUTES, Backends, Operation, Route

B = TypeVar("B", bound=BaseModel)


class _MemoryIdSegment(StringConvertor):
    """A path segment in a memory id's place, except the literal paths beside it (`/memories/batch`):
    there, a method the literal path does not take is answered 405, not read as a malformed id."""

    regex = "(?!(batch|list)$)[^/]+"


register_url_convertor("memory_id", _MemoryIdSegment())


@dataclass(frozen=True)
class Caller:
    """Who calls (authenticated by the edge before the body was read) and the X-Graph-Id header."""

    access: AccessService
    principal: Principal | None
    header_graph: str | None
    arrived: float | None = None  # when the edge saw the request arrive, for its one deadline

    def graph(self, need: Need, named: str | None) -> str:
        return self.access.permit(self.principal, self.header_graph, named, need)

    def scoped(self, body: B, need: Need) -> B:
        """`body` with its graph set to the one this caller may use."""
        return self.access.scoped(self.principal, self.header_graph, body, need)


GraphHeader = Annotated[Graph | None, Header(description="Must name the token's graph if given")]
Bearer = Annotated[
    object, Depends(HTTPBearer(auto_error=False, description="gsk_... token (graphsvc token create)"))
]
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


def _who(access: AccessService) -> Any:
    """The `Caller` dependency: the principal the edge found, and the X-Graph-Id header.

    A coroutine: FastAPI runs a plain function in its thread pool, a thread hop per dependency per
    request (the remember profile under load: 7% of the event loop's time)."""

    async def caller(request: Request, _: Bearer, x_graph_id: GraphHeader = None) -> Caller:
        return Caller(access, scope.principal(request.scope), x_graph_id, scope.arrived(request.scope))

    return Annotated[Caller, Depends(caller)]


def _parameter(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


Endpoint = Callable[..., Awaitable[Any]]


def _endpoint(
    operation: Operation, route: Route, backends: Backends, who: Any, deadline_s: float
) -> Endpoint:
    """An endpoint taking the operation's input where its route says, and FastAPI's signature for it."""
    need, model = operation.need, operation.input

    async def call(request: Any, who: Caller) -> Any:
        return await operation.run(backends, request, deadline_s, who.arrived)

    async def body(*, body: Any, who: Caller) -> Any:
        return await call(who.scoped(body, need), who)

    async def optional_body(*, who: Caller, body: Any = None) -> Any:
        return await call(who.scoped(body or model(), need), who)

    async def memory_path(*, memory_id: str, who: Caller, graph: str | None = None) -> Any:
        return await call(IdInput.model_construct(id=memory_id, graph=who.graph(need, graph)), who)

    shapes: dict[str, tuple[Endpoint, list[inspect.Parameter]]] = {
        "body": (body, [_parameter("body", model), _parameter("who", who)]),
        "optional_body": (optional_body, [_parameter("who", who), _parameter("body", model | None, None)]),
        "memory_path": (
            memory_path,
            [
                _parameter("memory_id", MemoryPath),
                _parameter("who", who),
                _parameter("graph", GraphQuery, None),
            ],
        ),
    }
    endpoint, parameters = shapes[route.takes]
    endpoint.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return endpoint


def router(backends: Backends, access: AccessService, deadline_s: float) -> APIRouter:
    """Every routed operation, grouped by tag (memories, graph, locusgraph) in the table's order."""
    v1, who = APIRouter(prefix="/v1"), _who(access)
    tags = ("memories", "graph", "locusgraph")
    for operation in sorted(ROUTES, key=lambda op: tags.index(op.route.tag if op.route else "")):
        route = operation.route
        assert route is not None
        v1.add_api_route(
            route.path,
            _endpoint(operation, route, backends, who, deadline_s),
            methods=[route.method],
            response_model=operation.output,
            status_code=route.status,
            tags=[route.tag],
            name=operation.name,
            description=route.doc,
            operation_id=operation.name,
            responses=errors(*route.errors),
        )
    return v1


def install(app: FastAPI, backends: Backends, access: AccessService, deadline_s: float) -> None:
    """Mount the operations under /v1, each answering within `deadline_s` of a request's arrival."""
    app.include_router(router(backends, access, deadline_s))
