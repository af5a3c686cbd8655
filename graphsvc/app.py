"""Composition root: builds the driver, the store and the services once, and the ASGI app on them.

One app serves REST (/v1, OpenAPI at /docs), MCP over SSE (/sse + /messages/) and over streamable
HTTP (/mcp), /health, the standalone verifier page at /verify, and Neo4j Browser's style and guide
(/browser/); the last two outside the OpenAPI.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from importlib.metadata import version
from pathlib import Path
from typing import Literal

from fastapi import FastAPI, Response
from fastapi.responses import HTMLResponse, PlainTextResponse
from pydantic import BaseModel, Field
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from graphsvc.browser import PREFIX, browser_app
from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import ChainSettings, EmbeddingsSettings, ExtractionSettings, Settings
from graphsvc.encoder.onnx import DEFAULT_MODEL, PACKAGED_MODEL, OnnxEncoder
from graphsvc.errors import GraphsvcError, NotConfigured, Unavailable
from graphsvc.exports.export import Exporter
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.extractor.spacy_ner import MODEL_SHA256, ExtractorUnavailable, SpacyExtractor
from graphsvc.http import edge, observe
from graphsvc.mcpserver.server import create_mcp_server, sse_routes, transport_security
from graphsvc.metrics import CONTENT_TYPE, Metrics
from graphsvc.rest import export as rest_export
from graphsvc.rest import routes
from graphsvc.services import background
from graphsvc.services.access import AccessService
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.at_write import Freshness
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.services.operations import Backends
from graphsvc.services.worker import Traffic, Worker
from graphsvc.store.graph import GraphStore, Observer, create_driver

STARTUP_WAIT_S = 60
VERSION = version("graphsvc")
HEALTH_TIMEOUT_S = 3.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")
log = logging.getLogger("graphsvc")


def build_chain(chain: ChainSettings, deadline_s: float = 10) -> AnchorContract | None:
    if not chain.configured:
        return None
    assert chain.rpc_url is not None
    key = chain.private_key.get_secret_value() if chain.private_key else None
    return AnchorContract(chain.rpc_url, chain.contract, key, chain.chain_id, deadline_s=deadline_s)


def build_embeddings(
    settings: EmbeddingsSettings, store: GraphStore, cache: Path, requests: Traffic | None = None
) -> EmbeddingService:
    """Off unless enabled; "unavailable" (logged; recall keeps to keywords) when no model can load. With
    the model unset, bge-small-en-v1.5, or the packaged all-MiniLM-L6-v2 while bge cannot be fetched
    (logged; once it can, a restart takes it and every memory is embedded again). `requests`: what the
    worker makes room for."""
    if not settings.enabled:
        return EmbeddingService(store, None, "off", requests=requests)
    chosen = settings.model or DEFAULT_MODEL
    names = [chosen] if settings.model or settings.model_path else [chosen, PACKAGED_MODEL]
    for name in names:
        try:
            encoder = OnnxEncoder.load(
                name,
                cache,
                model=settings.model_path,
                tokenizer=settings.tokenizer_path,
                maven_url=settings.maven_url,
            )
            return EmbeddingService(store, encoder, "ok", requests=requests)
        except GraphsvcError as e:
            if name != names[-1]:
                log.warning("%s cannot be loaded, using the packaged %s: %s", name, names[-1], e)
            else:
                log.warning("embeddings are unavailable, recall uses keywords alone: %s", e)
    return EmbeddingService(store, None, "unavailable", requests=requests)


def build_extraction(
    settings: ExtractionSettings, store: GraphStore, requests: Traffic | None = None
) -> ExtractionService:
    """Off unless enabled; "unavailable" with the reason (logged; memories are stored and recalled as
    without extraction) when the chosen extractor cannot load. `requests`: what the worker makes room
    for."""
    if not settings.enabled:
        return ExtractionService(store, None, "off", requests=requests)
    if settings.extractor == "rules":
        return ExtractionService(store, RulesExtractor(), "ok", requests=requests)
    try:
        folder = settings.model_path
        extractor = SpacyExtractor.load(folder, sha256=None if folder else MODEL_SHA256)
    except ExtractorUnavailable as e:
        log.warning("extraction is unavailable, memories are stored without it: %s", e)
        return ExtractionService(store, None, "unavailable", str(e), requests=requests)
    return ExtractionService(store, extractor, "ok", requests=requests)


@dataclass
class Services:
    store: GraphStore
    memory: MemoryService
    anchoring: AnchoringService
    chain: AnchorContract | None
    access: AccessService
    locus: LocusService
    settings: Settings
    embeddings: EmbeddingService
    extraction: ExtractionService
    workers: dict[str, Worker] = field(default_factory=dict[str, Worker])

    @classmethod
    def build(
        cls, settings: Settings, observe: Observer | None = None, freshness: Freshness | None = None
    ) -> Services:
        neo = settings.neo4j
        deadline = settings.deadline_s
        driver = create_driver(
            neo.uri,
            neo.user,
            neo.password.get_secret_value(),
            max_pool=neo.max_connection_pool_size,
            deadline_s=deadline,
        )
        store = GraphStore(driver, neo.database, deadline_s=deadline, observe=observe)
        chain = build_chain(settings.chain, deadline)
        anchoring = AnchoringService(
            store,
            chain,
            explorer_url=settings.chain.explorer_url,
            receipt_timeout_s=settings.chain.receipt_timeout_s,
            finality_timeout_s=settings.chain.finality_timeout_s,
            lease_ttl_s=settings.chain.lease_ttl_s,
        )
        access = AccessService(store, required=bool(settings.auth.required))
        requests = Traffic()  # the requests in flight, that both workers make room for
        embeddings = build_embeddings(settings.embeddings, store, settings.cache_dir, requests)
        extraction = build_extraction(settings.extraction, store, requests)
        memory = MemoryService(
            store,
            embeddings=embeddings,
            deadline_s=deadline,
            recall=settings.recall,
            extraction=extraction,
            write_budget_s=settings.write_budget_s,
            freshness=freshness,
        )
        locus = LocusService(memory, store)
        services = cls(store, memory, anchoring, chain, access, locus, settings, embeddings, extraction)
        services.workers = services._background()
        return services

    def _background(self) -> dict[str, Worker]:
        """The background loops, each run by a Worker (services/worker.py), by their metrics name."""
        workers = {"term_stats": self.memory.folder.worker}
        if self.chain is not None:
            workers["reconcile"] = Worker(
                "reconcile", partial(background.reconcile, self.anchoring), interval_s=None
            )
            if (every := background.anchor_interval(self.settings.chain)) is not None:
                step = partial(background.anchor_due, self.store, self.anchoring, self.settings.chain)
                workers["anchoring"] = Worker("anchoring", step, interval_s=every)
        if self.embeddings.on:
            interval = self.settings.embeddings.interval_s
            workers["embeddings"] = Worker("embeddings", self.embeddings.embed_pending, interval_s=interval)
        if self.extraction.on:
            interval = self.settings.extraction.interval_s
            workers["extraction"] = Worker("extraction", self.extraction.extract_pending, interval_s=interval)
        return workers

    async def start(self, *, wait_s: float = STARTUP_WAIT_S, listening: bool = True) -> None:
        """Schema first (waiting up to `wait_s` for Neo4j); then auth, the chain check and reconciliation.
        `listening`: an HTTP server will listen on the configured host (stdio listens nowhere).

        Raises:
            Unavailable: Neo4j did not answer within `wait_s`.
            NotConfigured: a newer graphsvc's schema wrote the database, listening beyond loopback
                without auth, or the configured contract has no code on the configured chain.
        """
        await self._apply_schema(wait_s)
        await self.memory.start()
        await self.embeddings.start()
        if self.settings.auth.required is None:
            self.access.required = await self.access.any_active()
        if listening and not self.access.required and self.settings.http.host not in LOOPBACK:
            raise NotConfigured(
                f"refusing to serve on {self.settings.http.host} without auth: create a token "
                "(graphsvc token create --graph G --scopes memory.read,memory.write) or listen on 127.0.0.1"
            )
        if self.chain is not None:
            await self.chain.check()

    async def health(self) -> dict[str, object]:
        neo4j, chain = await asyncio.gather(self.store.ping(), self._chain_answers())
        embeddings = self.embeddings.status
        down = [name for name, ok in (("neo4j", neo4j), ("chain", chain)) if ok is False]
        down += ["embeddings"] if embeddings == "unavailable" else []
        down += ["extraction"] if self.extraction.status == "unavailable" else []
        workers = {name: worker.state() for name, worker in self.workers.items()}
        states: dict[str, dict[str, object]] = {
            n: {"ok": w.ok, "lastSuccessAgeS": w.last_success_age_s} for n, w in workers.items()
        }
        for name, (wait_s, limit_s) in self.waits().items():
            if name in states:
                wait = wait_s()
                states[name] |= {"waitS": wait, "behind": wait is not None and wait > limit_s}
        behind = [name for name, state in states.items() if state.get("behind")]
        return {
            "status": "degraded" if down else "ok",
            "neo4j": neo4j,
            "chain": chain,
            "embeddings": embeddings,
            "embeddingsModel": self.embeddings.model_name,
            "extraction": self.extraction.status,
            "extractor": self.extraction.extractor,
            "extractionProblem": self.extraction.reason,
            "down": down,
            "behind": behind,
            "workers": states,
        }

    def waits(self) -> dict[str, tuple[Callable[[], float | None], float]]:
        """The workers of a backlog every graph shares: how long what each claims waited (in memory), and
        past how many seconds /health calls it behind."""
        return {
            "embeddings": (self.embeddings.queue.wait_s, self.settings.embeddings.behind_s),
            "extraction": (self.extraction.queue.wait_s, self.settings.extraction.behind_s),
        }

    async def _chain_answers(self) -> bool | None:
        if self.chain is None:
            return None
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT_S):
                await self.chain.chain_id()
        except (GraphsvcError, TimeoutError):
            return False
        return True

    def start_workers(self) -> None:
        for worker in self.workers.values():
            worker.start()

    async def _apply_schema(self, wait_s: float) -> None:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(Unavailable),
            stop=stop_after_delay(wait_s),
            wait=wait_exponential(min=0.5, max=5),
            reraise=True,
        ):
            with attempt:
                await self.store.apply_schema()

    async def close(self) -> None:
        """Stop the workers, fold what this process wrote, close the driver and the chain client: each
        part whatever the one before did (a failure is logged, never raised)."""
        workers = [w.stop for w in self.workers.values()]
        parts = [*workers, self.embeddings.close, self.extraction.close, self.memory.close, self.store.close]
        for part in [*parts, *([self.chain.close] if self.chain is not None else [])]:
            try:
                await part()
            except Exception:
                log.exception(
                    "closing: %s failed; the rest still closes", getattr(part, "__qualname__", part)
                )


class WorkerHealth(BaseModel):
    ok: bool = Field(description="Its last step succeeded (false: failing, retried with back-off)")
    lastSuccessAgeS: float | None = Field(
        description="Seconds since its last step succeeded (null before the first)"
    )
    waitS: float | None = Field(
        default=None,
        description="embeddings and extraction: the longest that a memory it claimed in its current or last "
        "round over the graphs had waited, since written or queued (null before its first round)",
    )
    behind: bool | None = Field(
        default=None,
        description="embeddings and extraction: waitS is over GRAPHSVC_EMBEDDINGS_BEHIND_S / "
        "GRAPHSVC_EXTRACTION_BEHIND_S (docs/operations.md)",
    )


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    neo4j: bool = Field(description="Neo4j answers")
    chain: bool | None = Field(description="The chain RPC answers (null: no chain is configured)")
    embeddings: Literal["off", "ok", "unavailable"] = Field(
        description="off; ok; unavailable: enabled but the model could not load (recall uses keywords alone)"
    )
    embeddingsModel: str | None = Field(
        description="The sentence model recall's meaning uses (docs/recall.md); null when off or unavailable"
    )
    extraction: Literal["off", "ok", "unavailable"] = Field(
        description="off; ok; unavailable: enabled but the extractor could not load (memories are stored "
        "and recalled as without extraction; extractionProblem says why)"
    )
    extractor: str | None = Field(
        description="The extractor's name/version that reads entities from memories' texts; null when off "
        "or unavailable"
    )
    extractionProblem: str | None = Field(description="Why extraction is unavailable; null otherwise")
    down: list[str] = Field(description="The dependencies that do not answer")
    behind: list[str] = Field(
        description="The background workers that fall behind: a memory they claim waited longer than their "
        "setting (docs/operations.md); they still work, and the status stays ok"
    )
    workers: dict[str, WorkerHealth] = Field(
        description="Each background worker (anchoring, reconcile, term_stats, embeddings, extraction; those "
        "running in this process): whether its last step succeeded, and when one last did"
    )


HEALTH_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "Neo4j answers (a chain outage only delays anchoring: degraded, still 200)"},
    503: {"model": Health, "description": "Neo4j does not answer: nothing can be served"},
}


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    metrics = Metrics()
    services = Services.build(settings, observe=metrics.statement, freshness=metrics)
    metrics.anchoring = services.anchoring.state
    # Each background worker's backlog, read at every scrape.
    metrics.backlogs["term_stats"] = services.memory.folder.backlog
    metrics.workers.update({name: worker.state for name, worker in services.workers.items()})
    if services.chain is not None:
        metrics.backlogs["reconcile"] = services.anchoring.unfinished
    services.embeddings.searchable = metrics.searchable
    for name, service in (("embeddings", services.embeddings), ("extraction", services.extraction)):
        if service.on:
            metrics.queues[name] = service.queue.state
            metrics.waits[name] = service.queue.wait_s
    backends = Backends(services.memory, services.anchoring, services.locus)
    mcp = create_mcp_server(
        backends, services.access, metrics=metrics, version=VERSION, deadline_s=settings.deadline_s
    )
    security = transport_security(settings.http.allowed_hosts)
    # Stateless: no Mcp-Session-Id kept in this process's memory, so behind a load balancer any replica
    # serves any request of a client (the tools never call back into the client, which is all that
    # sessions would add). SSE stays stateful by its nature: the proxy keeps a client on one replica.
    streamable = mcp.streamable_http_app(transport_security=security, stateless_http=True)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncGenerator[None]:
        try:
            await services.start()
            services.start_workers()
            async with mcp.session_manager.run():
                yield
        finally:
            await services.close()  # stops the workers first; never raises

    app = FastAPI(
        title="graphsvc",
        summary="Memory for AI agents on Neo4j: remember, recall, link, explore, forget.",
        version=VERSION,
        lifespan=lifespan,
    )
    routes.install(app, backends, services.access, settings.deadline_s)
    chain = settings.chain
    exporters = partial(
        Exporter,
        services.store,
        chain_id=chain.chain_id if chain.configured else None,
        contract=chain.contract if chain.configured else None,
    )
    rest_export.install(app, exporters, services.access)
    edge.install(app)

    @app.get("/health", tags=["health"], operation_id="health", responses=HEALTH_RESPONSES)
    async def health(response: Response) -> Health:
        """Each dependency: `neo4j` and `chain` (null when no chain is configured), `embeddings` ("off",
        "ok", or "unavailable": enabled but the model could not load, so recall uses keywords alone), and
        the list of those `down`. 503 when Neo4j is down (nothing can be served); a chain outage only
        delays anchoring. `workers`: each background worker's last step ok or failing (retried with
        back-off), and the seconds since its last success."""
        state = Health.model_validate(await services.health())
        response.status_code = 200 if state.neo4j else 503
        return state

    @app.get("/metrics", include_in_schema=False)
    async def prometheus() -> PlainTextResponse:
        """Prometheus' scrape, open like /health: totals over every graph, no tenant's name (README)."""
        return PlainTextResponse(await metrics.scrape(), media_type=CONTENT_TYPE)

    # Built from contracts/verifier/ (node contracts/verifier/build.mjs); it needs nothing from graphsvc.
    verify_page = resources.files("graphsvc").joinpath("web/verify.html").read_text(encoding="utf-8")

    @app.get("/verify", include_in_schema=False)
    async def verify() -> HTMLResponse:
        return HTMLResponse(verify_page)

    app.mount(PREFIX, browser_app())
    app.router.routes.extend([*sse_routes(mcp, security), *streamable.routes])
    # Outermost last: CatchAll answers what escapes Authenticate and the routes; Observe counts all.
    app.add_middleware(edge.Authenticate, access=services.access)
    app.add_middleware(edge.CatchAll)
    app.add_middleware(observe.Observe, metrics=metrics, routes=app.routes)  # sees CatchAll's answers too
    return app
