"""Recall's semantic signal: memories embedded off the write path, and their similarity to a query.

An interactive remember commits its memory's vector with it, encoded while it was written
(services/at_write.py: `encode_text`, stored by embed/store in the remember's own transaction). A bulk
write, and a remember past its budget, only mark their memories `:Unembedded` (in their own statement,
memory/commit); a background worker (`embed_pending`, run by app.py like automatic anchoring) claims
batches of them, encodes them and stores the vectors. Claims are per memory with a lease
(embed/claim.cypher): several replicas share the backlog, none embeds a memory another holds, and a
worker that dies mid-batch leaves claims that lapse and are taken again. Until it is embedded, a memory
is found by keywords as before.

**The backlog is fair across graphs** (services/backlog.py): a claim takes first the memories a write
could not embed in time, then goes round-robin over the graphs, each found by an index seek, so one
graph's 100,000 imported memories delay another graph's ten new ones by one claim. **The write path's
contract** (a write that embeds its memories in its own transaction, up to a budget): a memory it embedded
is stored as embed/store stores one (its vector, `embeddingModel`) and never enters the backlog; a memory
it could not embed in time is committed `:Unembedded` as before, with the property `embedFirst: true`
among its properties, and the worker claims it before any bulk backlog (the property goes with the
label once it is embedded). Memories a backfill adds (another model, an import of an export) carry
`embedQueuedAt`, the time they joined. A memory the encoder cannot read (no text, a text it raises on)
is set aside, marked `:Unembeddable` with the model, logged and counted: it never fails the batch it
came with, and another model tries it again.

At recall, `EmbeddingService.nearest` returns the graph's memories nearest to the query (seeds for the walk,
like keyword hits; run beside the keyword hits) and `similarities` each candidate's cosine to it and its
window neighbours' best (a turn is found through the turns around it, as the keyword window does; run
beside the walk); services/recall/ranking.py and services/recall/fusion.py weigh them (README: *Recall*);
bench/README.md the figures.

**A floor under load.** The worker encodes in a process of its own (services/worker.Child: an encoder
thread beside the server's busy event loop waited on the interpreter's lock and encoded at a quarter of
its speed), at normal priority, each text alone (a text encoded in a batch came out different from
itself alone: graphsvc/encoder/onnx.py); while requests run it slows itself to worker.FLOOR of its quiet
speed and no further (services/worker.Pace). At the lowest CPU priority (nice 19), in a thread, it
used to nearly stop on two busy cores (7-22 memories a second against 227 quiet); bench/README.md,
*Background workers*, has what it keeps now. A recall's query is encoded in the server's process, at
normal priority.

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
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from graphsvc.domain.render import PENDING_CAP
from graphsvc.services.backlog import Backlog, text_of, written_at
from graphsvc.services.index.cosines import Cosines, cosines
from graphsvc.services.index.keywords import graph_key, query_terms
from graphsvc.services.index.windows import WINDOW
from graphsvc.services.ports import Row, Store
from graphsvc.services.worker import Child, Pace, Progress, Traffic, alone_or_why

BATCH = 64  # memories a worker claims at once (each encoded alone: OnnxEncoder.encode)
MAX_THREADS = 2  # the worker's threads while requests keep it below its floor (one otherwise)
LEASE_MS = 120_000  # how long a claim holds: a worker that died releases its batch after this
BACKFILL = 1_000  # memories marked per statement (each its own transaction) when the backlog is filled
PROGRESS_S = 30.0  # the worker logs its progress at most this often
Status = Literal["off", "ok", "unavailable"]
# "the user" names whom an agent's memories are about: said in a question it adds no meaning, but it
# draws the query's vector toward every memory that repeats the phrase (bench/README.md, *Embeddings*).
_OWNER = re.compile(r"\bthe user(?:['\u2019]s)?\b", re.IGNORECASE)
log = logging.getLogger("graphsvc")


@dataclass(frozen=True)
class Nearest:
    """A graph's memories nearest a query (embed/nearest's rows), and how many of the graph's memories
    meaning could not weigh: still waiting for their vector, counted up to PENDING_CAP."""

    rows: list[Row]
    pending: int


class Encoder(Protocol):
    """graphsvc.encoder.onnx.OnnxEncoder: unit vectors, one per memory's text or per query."""

    dimensions: int
    name: str  # the model's (graphsvc.encoder.onnx.MODELS)
    model: str  # names the model file (its sha256 prefix): stored with each vector

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...

    def encode_query(self, text: str) -> list[float]: ...


Searchable = Callable[[str, float], None]  # (path, seconds from a memory's write to its vector's commit)


class EmbeddingService:
    def __init__(
        self, store: Store, encoder: Encoder | None, status: Status, *, requests: Traffic | None = None
    ):
        """`requests`: the requests the worker makes room for (one Traffic the whole app shares)."""
        self._store = store
        self._encoder = encoder
        self.status: Status = status
        self._background: Child | None = None
        self._progress = Progress("embedded", PROGRESS_S)
        self._backfilled = False
        self.requests = requests or Traffic()
        self.pace = Pace(self.requests)
        self.queue = Backlog(store, "embed", "embeddings")
        self.searchable: Searchable = lambda path, seconds: None  # app.py: the metrics' histogram

    @property
    def on(self) -> bool:
        return self._encoder is not None and self.status == "ok"

    @property
    def model_name(self) -> str | None:
        """The sentence model recall's meaning uses; None when off or unavailable."""
        return self._encoder.name if self.on and self._encoder else None

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
        return (await self.queue.state()).waiting

    async def embed_pending(self, limit: int = BATCH, lease_ms: int = LEASE_MS) -> int:
        """Claim up to `limit` memories of the backlog (services/backlog.py), encode them (in the
        worker's process) and store their vectors; a memory the encoder cannot read is set aside.
        Returns how many this call took from the backlog (the worker runs again at once while any).
        While requests run, a step may then pause, to keep worker.FLOOR of the worker's quiet speed (`Pace`)."""
        if not self.on:
            return 0
        assert self._encoder is not None
        if not self._backfilled:
            await self._fill_backlog()
        started = time.monotonic()
        token = secrets.token_hex(8)
        claimed = await self.queue.claim(limit, lease_ms, token)
        if not claimed:
            return 0
        read = await self._encode([text_of(r) for r in claimed])
        done = [(r, v) for r, v in zip(claimed, read, strict=True) if isinstance(v, list)]
        if done:
            rows = [{"graph": r["graph"], "id": r["id"], "vector": v} for r, v in done]
            await self._store.run("embed/store", token=token, rows=rows, model=self._encoder.model)
            self._observe([r for r, _ in done])
        await self.queue.put_aside(claimed, read, token, self._encoder.model)
        await self._progress.add(len(done), self.backlog)
        await self.pace.done(len(claimed), started, full=len(claimed) >= limit)
        return len(claimed)

    async def _encode(self, texts: list[Any]) -> list[list[float] | str]:
        """Each text's vector, or why it has none, encoded in the worker's process, each text alone (a
        process that died fails this step; the next starts another): in one thread, or MAX_THREADS while
        requests keep it below its floor (`Pace.short`)."""
        if self._background is None:
            self._background = Child(_holding, self._encoder)
        threads = MAX_THREADS if self.pace.short else 1
        return await self._background.run(_encode_each, texts, threads)

    async def close(self) -> None:
        """Stop the worker's process (a worker that runs again starts another)."""
        if self._background is not None:
            self._background.close()

    def _observe(self, stored: list[Row]) -> None:
        """Each memory written by a remember and embedded now: seconds from its write to this commit."""
        now = time.time()
        for row in stored:
            if row.get("queued") is None and (written := written_at(row)) is not None:
                self.searchable("backlog", max(0.0, now - written))

    # ---- at write (services/at_write.py) and recall's `pending` -----------------------------------

    @property
    def model(self) -> str | None:
        """What names this model on each vector it makes (`m.embeddingModel`); None when off."""
        return self._encoder.model if self.on and self._encoder else None

    def encode_text(self, text: str) -> list[float]:
        """A memory's vector, as the worker makes it (in the caller's thread: a write's pool)."""
        assert self._encoder is not None
        return self._encoder.encode([text])[0]

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
            model=self.model,
        )
        return cosines(found["rows"])

    async def nearest(self, graph: str, vector: list[float], limit: int, breadth: int) -> Nearest:
        """The graph's `limit` memories nearest to `vector`, filtered to the graph inside the index (its
        `breadth` nearest asked, the best `limit` kept: the index is approximate), and how many of its
        memories wait for their vector meanwhile."""
        [found] = await self._store.run(
            "embed/nearest",
            key=graph_key(graph),
            vector=vector,
            limit=limit,
            breadth=max(limit, breadth),
            model=self.model,
            graph=graph,
            cap=PENDING_CAP,
        )
        return Nearest(found["rows"], found["pending"])


_encoder: Encoder | None = None  # in the worker's own process (`_holding`)
_threads: ThreadPoolExecutor | None = None  # and its threads (`_encode_each`)


def _holding(encoder: Encoder) -> None:
    """The embedding worker's process: holds `encoder` (unpickled: its files loaded again)."""
    global _encoder
    _encoder = encoder


def _encode_each(texts: Sequence[Any], threads: int) -> list[list[float] | str]:
    """Each text's vector (each alone), or why it has none: no text, or the error the encoder raised;
    spread over `threads` threads (onnxruntime releases the interpreter's lock while it runs)."""
    global _threads
    if threads == 1:
        return _encode_all(texts)
    _threads = _threads or ThreadPoolExecutor(MAX_THREADS, "graphsvc-embed")
    parts = list(_threads.map(_encode_all, [texts[i::threads] for i in range(threads)]))
    return [parts[i % threads][i // threads] for i in range(len(texts))]


def _encode_all(texts: Sequence[Any]) -> list[list[float] | str]:
    assert _encoder is not None
    return [alone_or_why(_encoder.encode, text) for text in texts]


def meaning_of(query: str) -> str:
    """The text of a query that recall embeds: without "the user" (`_OWNER`), unless nothing else is left."""
    stripped = " ".join(_OWNER.sub(" ", query).split())
    return stripped if any(c.isalnum() for c in stripped) else query
