"""Composition root: builds the driver, the store and the services once, and the ASGI app on them.

One app serves REST (/v1, OpenAPI at /docs), MCP over SSE (/sse + /messages/) and over streamable
HTTP (/mcp), and /health.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from graphsvc.config import Settings
from graphsvc.errors import Unavailable
from graphsvc.mcpserver.server import create_mcp_server, transport_security
from graphsvc.rest import routes
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver

STARTUP_WAIT_S = 60


@dataclass
class Services:
    store: GraphStore
    memory: MemoryService

    @classmethod
    def build(cls, settings: Settings) -> Services:
        neo = settings.neo4j
        driver = create_driver(
            neo.uri, neo.user, neo.password.get_secret_value(), max_pool=neo.max_connection_pool_size
        )
        store = GraphStore(driver, neo.database)
        return cls(store=store, memory=MemoryService(store))

    async def start(self) -> None:
        """Apply the schema, waiting (bounded) for Neo4j to come up."""
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(Unavailable),
            stop=stop_after_delay(STARTUP_WAIT_S),
            wait=wait_exponential(min=0.5, max=5),
            reraise=True,
        ):
            with attempt:
                await self.store.apply_schema()

    async def close(self) -> None:
        await self.store.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    services = Services.build(settings)
    mcp = create_mcp_server(services.memory)
    security = transport_security(settings.http.allowed_hosts)
    sse = mcp.sse_app(transport_security=security)
    streamable = mcp.streamable_http_app(transport_security=security)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await services.start()
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            await services.close()

    app = FastAPI(
        title="graphsvc",
        summary="Memory for AI agents on Neo4j: remember, recall, link, explore, forget.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.memory = services.memory
    routes.install(app)

    @app.get("/health", tags=["health"], operation_id="health")
    async def health() -> JSONResponse:
        ok = await services.store.ping()
        return JSONResponse({"status": "ok" if ok else "degraded", "neo4j": ok}, status_code=200 if ok else 503)

    app.router.routes.extend([*sse.routes, *streamable.routes])
    return app
