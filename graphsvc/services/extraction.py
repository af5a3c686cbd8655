"""The graph that builds itself: entities and key phrases read from each memory's text, as it is written
or in the background.

An interactive remember stores what the rules read in its text in its own transaction (services/
at_write.py: `found`, stored by extract/store). A bulk write, a remember past its budget, and any write
while the extractor is not cheap (spaCy) only mark their memories `:Unextracted` (in their own statement,
memory/commit), as they mark them `:Unembedded`; a background worker (`extract_pending`, run by app.py
beside the embedding worker) claims batches of them with a lease (extract/claim: several replicas share the backlog), runs the
extractor in a process of its own at the lowest CPU priority (in a thread, pure Python extraction held
the interpreter's lock against the requests: remember's p50 rose by a third while it read; a process
also keeps a model's memory apart), and stores what it found (extract/store); while requests run, each
step is followed by a pause that keeps the worker to a fifth of the time (services/worker.Traffic):
each mention an ordinary entity `Label:name` of the memory's graph, joined by a MENTIONS edge marked
`source: "extracted"` and `extractor: "<name>/<version>"`; the memory then carries `extractedWith`.
Until then the memory is found as before (keywords, meaning, its given entities): nothing waits for it.

Names meet by their normalised form (domain/extraction.py): a name an agent gave is the entity an
extracted one means, and stays as the agent wrote it. Extracted edges are never hashed: the envelope is
the author's content, and extraction is deterministic, so an export's reader can derive them again.

A memory read by another extractor or version (or by none: remembered while extraction was off, or
before it existed) joins the backlog when the worker starts, which then replaces its extracted edges.
Entities written before normalised names existed get theirs first (extract/unnamed, extract/name).

Status: "off" (not enabled), "ok", or "unavailable" with the reason (the extractor could not load: memories
are stored and recalled as without extraction, nothing is marked or written; /health says why).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import secrets
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Literal, Protocol

from graphsvc.domain.extraction import Mention, bounded, normalise
from graphsvc.services.drafts import new_id
from graphsvc.services.ports import Store
from graphsvc.services.worker import Traffic, lowest_priority

BATCH = 256  # memories a worker claims at once
LEASE_MS = 120_000  # how long a claim holds: a worker that died releases its batch after this
BACKFILL = 1_000  # memories marked (or entities named) per statement when the backlog is filled
PROGRESS_S = 30.0  # the worker logs its progress at most this often
Status = Literal["off", "ok", "unavailable"]
log = logging.getLogger("graphsvc")


class Extractor(Protocol):
    """graphsvc.extractor: one list of mentions per text."""

    @property
    def name(self) -> str:
        """`<name>/<version>`: stored with every edge it makes and on every memory it read."""
        ...

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]: ...


class ExtractionService:
    def __init__(self, store: Store, extractor: Extractor | None, status: Status, reason: str | None = None):
        self._store = store
        self._extractor = extractor
        self.status: Status = status
        self.reason = reason  # why it is unavailable
        self._background: ProcessPoolExecutor | None = None
        self._prepared = False
        self._done, self._since = 0, time.monotonic()
        self.requests = Traffic()  # what MemoryService serves: a step makes room for it (extract_pending)

    @property
    def on(self) -> bool:
        return self._extractor is not None and self.status == "ok"

    @property
    def extractor(self) -> str | None:
        """The extractor's `<name>/<version>`; None when off or unavailable."""
        return self._extractor.name if self.on and self._extractor else None

    async def backlog(self) -> int:
        """Memories not yet extracted (by this extractor), across every graph."""
        [row] = await self._store.run("extract/backlog")
        return row["backlog"]

    async def extract_pending(self, limit: int = BATCH, lease_ms: int = LEASE_MS) -> int:
        """Claim up to `limit` memories of the backlog, read them (in the extractor's process) and store
        what was found; returns how many this call stored (the worker runs again at once while it
        stores any). The claims of a step that fails lapse after `lease_ms` and are taken again. While
        requests run, a step that stored anything then pauses to take at most a fifth of the time
        (`Traffic`): what it costs Neo4j and the server on a small machine is taken from them."""
        if not self.on:
            return 0
        assert self._extractor is not None
        if not self._prepared:
            await self._prepare()
        started = time.monotonic()
        token = secrets.token_hex(8)
        claimed = await self._store.run("extract/claim", limit=limit, lease_ms=lease_ms, token=token)
        if not claimed:
            return 0
        if self._background is None:
            self._background = ProcessPoolExecutor(
                1, multiprocessing.get_context("spawn"), initializer=_reader, initargs=(self._extractor,)
            )
        texts = [row["text"] for row in claimed]
        try:
            found = await asyncio.get_running_loop().run_in_executor(self._background, _read, texts)
        except BrokenProcessPool:  # the process died (killed, out of memory): the retry starts another
            self._background = None
            raise
        rows = [
            {"graph": r["graph"], "id": r["id"], "found": [_param(m) for m in bounded(f)]}
            for r, f in zip(claimed, found, strict=True)
        ]
        [stored] = await self._store.run(
            "extract/store", token=token, rows=rows, extractor=self._extractor.name
        )
        await self._progress(stored["stored"])
        await self.requests.make_room(time.monotonic() - started)
        return stored["stored"]

    # ---- at write (services/at_write.py) ----------------------------------------------------------

    @property
    def at_write(self) -> bool:
        """A write reads its texts itself, in its own transaction: the extractor is cheap (the rules:
        about 0.06 ms a text); one that is not (spaCy) stays in the background."""
        return self.on and getattr(self._extractor, "cheap", False) is True

    def found(self, text: str) -> list[dict[str, str]]:
        """What extract/store takes for one text (its row's `found`), read now in the caller's thread."""
        assert self._extractor is not None
        return [_param(m) for m in bounded(self._extractor.extract([text])[0])]

    async def close(self) -> None:
        """Stop the extractor's process (a worker that runs again starts another)."""
        background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=False, cancel_futures=True)

    async def _prepare(self) -> None:
        """The worker's first step: entities without a normalised name get one, then memories this
        extractor has not read join the backlog (both logged)."""
        assert self._extractor is not None
        named = 0
        while rows := await self._store.run("extract/unnamed", limit=BACKFILL):
            names = [
                {"graph": r["graph"], "id": r["id"], "normName": normalise(r["name"] or "")} for r in rows
            ]
            [done] = await self._store.run("extract/name", rows=names)
            named += done["named"]
        marked = 0
        while True:
            [row] = await self._store.run("extract/backfill", limit=BACKFILL, extractor=self._extractor.name)
            marked += row["marked"]
            if not row["marked"]:
                break
        if named or marked:
            log.warning(
                "extraction (%s): %d entities named, %d memories joined the backlog",
                self._extractor.name,
                named,
                marked,
            )
        self._prepared = True

    async def _progress(self, count: int) -> None:
        """Logs the worker's progress at most every PROGRESS_S: how many it read, how many wait."""
        self._done += count
        elapsed = time.monotonic() - self._since
        if self._done and elapsed >= PROGRESS_S:
            log.info("extracted %d memories in %.0f s; %d wait", self._done, elapsed, await self.backlog())
            self._done, self._since = 0, time.monotonic()


_extractor: Extractor | None = None  # in the extractor's own process (`_reader`)


def _reader(extractor: Extractor) -> None:
    """The extractor's process: at the lowest CPU priority, holding `extractor` for every `_read`."""
    global _extractor
    lowest_priority()
    _extractor = extractor


def _read(texts: list[str]) -> list[list[Mention]]:
    assert _extractor is not None
    return _extractor.extract(texts)


def _param(m: Mention) -> dict[str, str]:
    return {"label": m.label, "name": m.name, "norm": m.norm, "id": m.id, "edgeId": new_id("edge")}
