"""GET /v1/export: the caller's graph as graphsvc.export/v1 JSON lines, streamed (services/export.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import StreamingResponse

from graphsvc.rest.routes import GraphQuery, Who, errors
from graphsvc.services.export import Exporter

router = APIRouter(tags=["graph"])
ExporterOf = Callable[[str], Exporter]


async def _exporter(request: Request) -> ExporterOf:
    return request.app.state.exporter


Exporters = Annotated[ExporterOf, Depends(_exporter)]
NDJSON = "application/x-ndjson"
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "One JSON record a line: header, batches, entities, memories, tombstones, trailer "
        "(contracts/export.schema.json)",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    },
    **errors(404, 409),
}


@router.get("/export", operation_id="export_graph", response_class=StreamingResponse, responses=RESPONSES)
async def export_graph(exporters: Exporters, who: Who, graph: GraphQuery = None) -> StreamingResponse:
    """The whole graph as JSON lines, streamed, for `graphsvc audit` and `graphsvc import-export`."""
    lines = exporters(who.graph("read", graph)).lines()
    first = await anext(lines)  # a graph that cannot be exported answers its error before any byte

    async def body() -> AsyncIterator[bytes]:
        yield first
        async for line in lines:
            yield line

    return StreamingResponse(body(), media_type=NDJSON)


def install(app: FastAPI) -> None:
    app.include_router(router, prefix="/v1")
