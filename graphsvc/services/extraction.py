"""The graph that builds itself: entities and key phrases read from each memory's text, as it is written
or in the background.

An interactive remember stores what the rules read in its text in its own transaction (services/
at_write.py: `found`, stored by extract/store). A bulk write, a remember past its budget, and any write
while the extractor is not cheap (spaCy) only mark their memories `:Unextracted` (in their own statement,
memory/commit), as they mark them `:Unembedded`; a background worker (`extract_pending`, run by app.py
beside the embedding worker) claims batches of them with a lease (extract/claim: several replicas share
the backlog; fair across graphs, as services/backlog.py says), runs the extractor in a process of its
own (in a thread, pure Python extraction held the interpreter's lock against the requests: remember's
p50 rose by a third while it read; a process also keeps a model's memory apart; it dies with graphsvc,
even by `kill -9`: services/worker.Child), and stores what it found (extract/store); while requests
run, it slows itself to worker.FLOOR of its quiet speed and no further (services/worker.Pace), at normal
priority: a floor under load, where the lowest priority (nice 19) nearly stopped it.
Each mention an ordinary entity `Label:name` of the memory's graph, joined by a MENTIONS edge marked
`source: "extracted"` and `extractor: "<name>/<version>"`; the memory then carries `extractedWith`.
Until then the memory is found as before (keywords, meaning, its given entities): nothing waits for it.

A write that reads its memories itself (within a budget) and could not in time commits them
`:Unextracted` with the property `extractFirst: true`: the worker claims those first. A memory the
extractor cannot read (no text, a text it raises on) is set aside, marked `:Unextractable` with the
extractor, logged and counted: it never fails the batch it came with.

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

import contextlib
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from graphsvc.domain.extraction import Mention, bounded, normalise
from graphsvc.services.backlog import Backlog, text_of
from graphsvc.services.drafts import new_id
from graphsvc.services.ports import Store
from graphsvc.services.worker import Child, Pace, Progress, Traffic, alone_or_why

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
    def __init__(
        self,
        store: Store,
        extractor: Extractor | None,
        status: Status,
        reason: str | None = None,
        *,
        requests: Traffic | None = None,
    ):
        self._store = store
        self._extractor = extractor
        self.status: Status = status
        self.reason = reason  # why it is unavailable
        self._background: Child | None = None
        self._prepared = False
        self._progress = Progress("extracted", PROGRESS_S)
        # what MemoryService serves: a step makes room for it (extract_pending); one the whole app shares
        self.requests = requests or Traffic()
        self.pace = Pace(self.requests)
        self.queue = Backlog(store, "extract", "extraction")

    @property
    def on(self) -> bool:
        return self._extractor is not None and self.status == "ok"

    @property
    def extractor(self) -> str | None:
        """The extractor's `<name>/<version>`; None when off or unavailable."""
        return self._extractor.name if self.on and self._extractor else None

    async def backlog(self) -> int:
        """Memories not yet extracted (by this extractor), across every graph."""
        return (await self.queue.state()).waiting

    async def extract_pending(self, limit: int = BATCH, lease_ms: int = LEASE_MS) -> int:
        """Claim up to `limit` memories of the backlog (services/backlog.py), read them (in the
        extractor's process) and store what was found; a memory the extractor cannot read is set aside.
        Returns how many this call took from the backlog (the worker runs again at once while any). The
        claims of a step that fails lapse after `lease_ms` and are taken again. While requests run, a
        step may then pause, to keep worker.FLOOR of the worker's quiet speed (`Pace`): what it costs Neo4j
        and the server on a small machine is taken from them."""
        if not self.on:
            return 0
        assert self._extractor is not None
        if not self._prepared:
            await self._prepare()
        started = time.monotonic()
        token = secrets.token_hex(8)
        claimed = await self.queue.claim(limit, lease_ms, token)
        if not claimed:
            return 0
        found = await self._read([text_of(r) for r in claimed])
        rows = [
            {"graph": r["graph"], "id": r["id"], "found": [_param(m) for m in bounded(f)]}
            for r, f in zip(claimed, found, strict=True)
            if not isinstance(f, str)
        ]
        stored = 0
        if rows:
            [done] = await self._store.run(
                "extract/store", token=token, rows=rows, extractor=self._extractor.name
            )
            stored = done["stored"]
        await self.queue.put_aside(claimed, found, token, self._extractor.name)
        await self._progress.add(stored, self.backlog)
        await self.pace.done(len(claimed), started, full=len(claimed) >= limit)
        return len(claimed)

    async def _read(self, texts: list[Any]) -> list[list[Mention] | str]:
        """Each text's mentions, or why it has none, read in the extractor's process (a process that
        died fails this step; the next starts another)."""
        if self._background is None:
            self._background = Child(_reader, self._extractor)
        return await self._background.run(_read, texts)

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
        if self._background is not None:
            self._background.close()

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


_extractor: Extractor | None = None  # in the extractor's own process (`_reader`)


def _reader(extractor: Extractor) -> None:
    """The extractor's process: holds `extractor` for every `_read`."""
    global _extractor
    _extractor = extractor


def _read(texts: list[Any]) -> list[list[Mention] | str]:
    """Each text's mentions, or why it has none (no text, or the error the extractor raised on it alone:
    the others are read all the same)."""
    assert _extractor is not None
    if None not in texts:
        with contextlib.suppress(Exception):  # one of them: read each alone below
            return list(_extractor.extract(texts))
    return [alone_or_why(_extractor.extract, text) for text in texts]


def _param(m: Mention) -> dict[str, str]:
    return {"label": m.label, "name": m.name, "norm": m.norm, "id": m.id, "edgeId": new_id("edge")}
