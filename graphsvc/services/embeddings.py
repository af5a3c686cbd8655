"""Recall's semantic signal: memories embedded off the write path, and their similarity to a query.

A remember only marks its memories `:Unembedded` (in its own statement, memory/commit); a background worker
(`embed_pending`, run by app.py like automatic anchoring) claims batches of them, encodes them and
stores the vectors, so remember never waits for the model. Claims are per memory with a lease
(embed/claim.cypher): several replicas share the backlog, none embeds a memory another holds, and a
worker that dies mid-batch leaves claims that lapse and are taken again. Until it is embedded, a memory
is found by keywords as before.

At recall, `EmbeddingService.nearest` returns the graph's memories nearest to the query (seeds for the walk,
like keyword hits; run beside the keyword hits) and `similarities` each candidate's cosine to it and its
window neighbours' best (a turn is found through the turns around it, as the keyword window does; run
beside the walk); services/recall/ranking.py and services/recall/fusion.py weigh them (README: *Recall*);
bench/README.md the figures.

The worker encodes in a thread of its own at the lowest CPU priority (nice 19), so on a machine with
few cores its batches yield to requests (remember's latency rose by half with the worker at normal
priority on two cores; bench/README.md); a recall's query is encoded at normal priority.

Status: "off" (not enabled), "ok", or "unavailable" (enabled, but the model could not be loaded:
logged at start-up; recall uses keywords alone and nothing is embedded).
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, Protocol

from graphsvc.services.index.cosines import Cosines, cosines
from graphsvc.services.index.keywords import graph_key, query_terms
from graphsvc.services.index.windows import WINDOW
from graphsvc.services.ports import Row, Store
from graphsvc.services.worker import lowest_priority

BATCH = 64  # memories a worker claims at once (each encoded alone: OnnxEncoder.encode)
LEASE_MS = 120_000  # how long a claim holds: a worker that died releases its batch after this
BACKFILL = 1_000  # memories marked per statement (each its own transaction) when the backlog is filled
PROGRESS_S = 30.0  # the worker logs its progress at most this often
Status = Literal["off", "ok", "unavailable"]
# "the user" names whom an agent's memories are about: said in a question it adds no meaning, but it
# draws the query's vector toward every memory that repeats the phrase (bench/README.md, *Embeddings*).
_OWNER = re.compile(r"\bthe user(?:['\u2019]s)?\b", re.IGNORECASE)
log = logging.getLogger("graphsvc")


class Encoder(Protocol):
    """graphsvc.encoder.onnx.OnnxEncoder: unit vectors, one per memory's text or per query."""

    dimensions: int
    name: str  # the model's (graphsvc.encoder.onnx.MODELS)
    model: str  # names the model file (its sha256 prefix): stored with each vector

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...

    def encode_query(self, text: str) -> list[float]: ...


class EmbeddingService:
    def __init__(self, store: Store, encoder: Encoder | None, status: Status):
        self._store = store
        self._encoder = encoder
        self.status: Status = status
        self._background: ThreadPoolExecutor | None = None
        self._progress = _Progress()
        self._backfilled = False

    @property
    def on(self) -> bool:
        return self._encoder is not None and self.status == "ok"

    @property
    def model_name(self) -> str | None:
        """The sentence model recall's meaning uses; None when off or unavailable."""
        return self._encoder.name if self.on and self._encoder else None

    @property
    def _model(self) -> str | None:
        return self._encoder.model if self._encoder else None

    # ---- the write side -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start-up: a vector index of other dimensions than the model's turns embeddings off (logged,
        status "unavailable", nothing marked or written). The backlog is filled by the worker's first
        step (`embed_pending`), not here: on a large store that takes a while, and one-shot commands
        (`graphsvc import`, `anchor`) run no worker."""
        if not self.on:
            return
        assert self._encoder is not None
        rows = await self._store.run("embed/index_dimensions")
        dimensions = rows[0]["dimensions"] if rows else None
        if dimensions is not None and dimensions != self._encoder.dimensions:
            log.warning(
                "embeddings are unavailable, recall uses keywords alone: the vector index memory_embedding "
                "holds %s dimensions and the model makes %d (drop the index, DROP INDEX memory_embedding, "
                "and restart: it is created again and every memory embedded again)",
                dimensions,
                self._encoder.dimensions,
            )
            self._encoder, self.status = None, "unavailable"

    async def _fill_backlog(self) -> None:
        """The worker's first step: memories without a vector of this model join the backlog (logged)."""
        assert self._encoder is not None
        if marked := await self.backfill():
            log.warning(
                "%d memories without a vector of this model (%s) joined the embedding backlog",
                marked,
                self._encoder.model,
            )
        self._backfilled = True

    async def backfill(self) -> int:
        """Memories without a vector of this model that are not in the backlog join it."""
        assert self._encoder is not None
        total = 0
        while True:
            [row] = await self._store.run("embed/backfill", limit=BACKFILL, model=self._encoder.model)
            total += row["marked"]
            if not row["marked"]:
                return total

    async def backlog(self) -> int:
        """Memories not yet embedded, across every graph."""
        [row] = await self._store.run("embed/backlog")
        return row["backlog"]

    async def embed_pending(self, limit: int = BATCH, lease_ms: int = LEASE_MS) -> int:
        """Claim up to `limit` memories of the backlog, encode them (in a thread) and store their vectors;
        returns how many this call stored."""
        if not self.on:
            return 0
        if not self._backfilled:
            await self._fill_backlog()
        token = secrets.token_hex(8)
        claimed = await self._store.run("embed/claim", limit=limit, lease_ms=lease_ms, token=token)
        if not claimed:
            return 0
        assert self._encoder is not None
        if self._background is None:
            self._background = ThreadPoolExecutor(1, "graphsvc-embed", initializer=lowest_priority)
        texts = [row["text"] for row in claimed]
        vectors = await asyncio.get_running_loop().run_in_executor(
            self._background, self._encoder.encode, texts
        )
        rows = [
            {"graph": r["graph"], "id": r["id"], "vector": v} for r, v in zip(claimed, vectors, strict=True)
        ]
        [stored] = await self._store.run("embed/store", token=token, rows=rows, model=self._encoder.model)
        await self._progress.stored(stored["stored"], self.backlog)
        return stored["stored"]

    # ---- the read side --------------------------------------------------------------------------

    def encode_query(self, query: str | None) -> Awaitable[list[float]] | None:
        """The query's vector, computed in a thread while recall reads its keyword hits; None when off, and
        for a query of stop words only: its vector sits near every memory alike, so it finds nothing by
        meaning as it finds nothing by keywords."""
        if not (self.on and query and query_terms(query)):
            return None
        assert self._encoder is not None
        encoder, text = self._encoder, meaning_of(query)
        return asyncio.ensure_future(asyncio.to_thread(encoder.encode_query, text))

    async def similarities(self, graph: str, vector: list[float], ids: Sequence[str]) -> Cosines:
        """Each memory of `ids`: its own cosine to `vector` and its window neighbours' (index/cosines.py)."""
        [found] = await self._store.run(
            "embed/similarity",
            graph=graph,
            ids=list(dict.fromkeys(ids)),
            vector=vector,
            reach=WINDOW,
            model=self._model,
        )
        return cosines(found["rows"])

    async def nearest(self, graph: str, vector: list[float], limit: int, breadth: int) -> list[Row]:
        """The graph's `limit` memories nearest to `vector`, filtered to the graph inside the index (its
        `breadth` nearest asked, the best `limit` kept: the index is approximate)."""
        [found] = await self._store.run(
            "embed/nearest",
            key=graph_key(graph),
            vector=vector,
            limit=limit,
            breadth=max(limit, breadth),
            model=self._model,
        )
        return found["rows"]


class _Progress:
    """Logs the worker's progress at most every PROGRESS_S: how many it embedded, how many wait."""

    def __init__(self) -> None:
        self.done, self.since = 0, time.monotonic()

    async def stored(self, count: int, backlog: Callable[[], Awaitable[int]]) -> None:
        self.done += count
        elapsed = time.monotonic() - self.since
        if self.done and elapsed >= PROGRESS_S:
            log.info("embedded %d memories in %.0f s; %d wait", self.done, elapsed, await backlog())
            self.done, self.since = 0, time.monotonic()


def meaning_of(query: str) -> str:
    """The text of a query that recall embeds: without "the user" (`_OWNER`), unless nothing else is left."""
    stripped = " ".join(_OWNER.sub(" ", query).split())
    return stripped if any(c.isalnum() for c in stripped) else query
