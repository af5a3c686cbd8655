"""Composition root: builds the driver, the store and the services once, and the ASGI app on them.

One app serves REST (/v1, OpenAPI at /docs), MCP over SSE (/sse + /messages/) and over streamable
HTTP (/mcp), and /health.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Literal

from fastapi import FastAPI, Response
from pydantic import BaseModel, Field
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import ChainSettings, Settings
from graphsvc.domain.models import GraphInput
from graphsvc.errors import GraphsvcError, NotConfigured, Unavailable
from graphsvc.mcpserver.server import create_mcp_server, transport_security
from graphsvc.rest import edge, routes
from graphsvc.services.access import AccessService
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver

STARTUP_WAIT_S = 60
VERSION = version("graphsvc")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
log = logging.getLogger("graphsvc")


def build_chain(chain: ChainSettings) -> AnchorContract | None:
    if not chain.configured:
        return None
    assert chain.rpc_url is not None
    key = chain.private_key.get_secret_value() if chain.private_key else None
    return AnchorContract(chain.rpc_url, chain.contract, key, chain.chain_id)


@dataclass
class Services:
    store: GraphStore
    memory: MemoryService
    anchoring: AnchoringService
    chain: AnchorContract | None
    access: AccessService
    locus: LocusService
    settings: Settings

    @classmethod
    def build(cls, settings: Settings) -> Services:
        neo = settings.neo4j
        driver = create_driver(
            neo.uri, neo.user, neo.password.get_secret_value(), max_pool=neo.max_connection_pool_size
        )
        store = GraphStore(driver, neo.database)
        chain = build_chain(settings.chain)
        anchoring = AnchoringService(
            store,
            chain,
            explorer_url=settings.chain.explorer_url,
            receipt_timeout_s=settings.chain.receipt_timeout_s,
            lease_ttl_s=settings.chain.lease_ttl_s,
        )
        access = AccessService(store, required=bool(settings.auth.required))
        memory = MemoryService(store)
        return cls(store, memory, anchoring, chain, access, LocusService(memory, store), settings)

    async def start(self) -> None:
        """Schema first (waiting, bounded, for Neo4j); then auth, the chain check and reconciliation.

        Raises:
            NotConfigured: listening beyond loopback without auth, or the configured contract has no
                code on the configured chain.
        """
        await self._apply_schema()
        upgraded = await self.memory.upgrade()
        if upgraded:
            log.warning("keyed the memories of %d graph(s) stored by an older version", len(upgraded))
        if self.settings.auth.required is None:
            self.access.required = await self.access.any_active()
        if not self.access.required and self.settings.http.host not in LOOPBACK:
            raise NotConfigured(
                f"refusing to serve on {self.settings.http.host} without auth: create a token "
                "(graphsvc token create --graph G --scopes memory.read,memory.write) or listen on 127.0.0.1"
            )
        if self.chain is not None:
            await self.chain.check()
            try:
                finished = await self.anchoring.reconcile()
                if finished:
                    log.warning("reconciled %d unfinished batch(es) at start-up", len(finished))
            except GraphsvcError as e:
                log.warning("unfinished batches stay for later: %s", e)
            except Exception:  # a batch that cannot be finished must not keep the service down
                log.exception("reconciling unfinished batches failed; they stay for later")

    async def auto_anchor(self) -> None:
        """Anchor every N seconds, or as soon as M memories are pending (whichever is configured)."""
        chain = self.settings.chain
        interval = chain.auto_interval_s or 5.0
        while True:
            await asyncio.sleep(interval)
            for row in await self.store.run("anchor/pending_graphs"):
                due = chain.auto_interval_s or row["pending"] >= chain.auto_pending
                if due:
                    try:
                        await self.anchoring.anchor_now(GraphInput(graph=row["graph"]))
                    except GraphsvcError as e:  # another replica holds the lease, or the chain is away
                        log.info("auto-anchoring of %s skipped: %s", row["graph"], e)

    async def _apply_schema(self) -> None:
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
        if self.chain is not None:
            await self.chain.close()


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    neo4j: bool = Field(description="Neo4j answers")


HEALTH_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "Every dependency answers"},
    503: {"model": Health, "description": "A dependency does not answer (degraded)"},
}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    services = Services.build(settings)
    mcp = create_mcp_server(
        services.memory, services.anchoring, services.locus, services.access, version=VERSION
    )
    security = transport_security(settings.http.allowed_hosts)
    sse = mcp.sse_app(transport_security=security)
    streamable = mcp.streamable_http_app(transport_security=security)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await services.start()
        auto = services.chain is not None and (settings.chain.auto_interval_s or settings.chain.auto_pending)
        task = asyncio.create_task(services.auto_anchor()) if auto else None
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await services.close()

    app = FastAPI(
        title="graphsvc",
        summary="Memory for AI agents on Neo4j: remember, recall, link, explore, forget.",
        version=VERSION,
        lifespan=lifespan,
    )
    app.state.memory = services.memory
    app.state.anchoring = services.anchoring
    app.state.access = services.access
    app.state.locus = services.locus
    routes.install(app)
    edge.install(app)

    @app.get("/health", tags=["health"], operation_id="health", responses=HEALTH_RESPONSES)
    async def health(response: Response) -> Health:
        """Whether graphsvc's dependencies answer: 200 when they all do, else 503."""
        ok = await services.store.ping()
        response.status_code = 200 if ok else 503
        return Health(status="ok" if ok else "degraded", neo4j=ok)

    app.router.routes.extend([*sse.routes, *streamable.routes])
    # Outermost last: CatchAll answers what escapes Authenticate and the routes.
    app.add_middleware(edge.Authenticate, access=services.access)
    app.add_middleware(edge.CatchAll)
    return app
