"""GET /v1/export: the caller's graph as graphsvc.export/v1 JSON lines, streamed (exports/export.py)."""

# No `from __future__ import annotations`: FastAPI reads the endpoint's annotations, which name a local.

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import StreamingResponse

from graphsvc.exports.export import Exporter
from graphsvc.http import scope
from graphsvc.rest.routes import Bearer, Caller, GraphHeader, GraphQuery, errors
from graphsvc.services.access import AccessService

ExporterOf = Callable[[str], Exporter]
NDJSON = "application/x-ndjson"
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "One JSON record a line: header, batches, entities, memories, tombstones, trailer "
        "(contracts/export.schema.json)",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    },
    **errors(404, 409),
}


def router(exporters: ExporterOf, access: AccessService) -> APIRouter:
    v1 = APIRouter(prefix="/v1")

    async def caller(request: Request, _: Bearer, x_graph_id: GraphHeader = None) -> Caller:
        return Caller(access, scope.principal(request.scope), x_graph_id)

    @v1.get(
        "/export",
        operation_id="export_graph",
        tags=["graph"],
        response_class=StreamingResponse,
        responses=RESPONSES,
    )
    async def export_graph(
        who: Annotated[Caller, Depends(caller)], graph: GraphQuery = None
    ) -> StreamingResponse:
        """The whole graph as JSON lines, streamed, for `graphsvc audit` and `graphsvc import-export`."""
        lines = exporters(who.graph("read", graph)).lines()
        first = await anext(lines)  # a graph that cannot be exported answers its error before any byte

        async def body() -> AsyncIterator[bytes]:
            yield first
            async for line in lines:
                yield line

        return StreamingResponse(body(), media_type=NDJSON)

    return v1


def install(app: FastAPI, exporters: ExporterOf, access: AccessService) -> None:
    app.include_router(router(exporters, access))
