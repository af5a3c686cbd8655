"""Meaning and links at write: a memory is found by meaning, and joined to the graph, when its remember
answers.

An interactive write (remember, store_event, a batch of at most INTERACTIVE_BATCH items) starts reading
each text as its draft is made, before the group commit gathers: its vector (the embedding model) and
its mentions (the rules extractor), a job each in a small pool of threads at normal priority
(WRITE_THREADS; onnxruntime releases the interpreter's lock while it runs), so the event loop serves
other requests meanwhile (the links in a thread of their own, so that they never queue behind
encodings). Inside the write transaction the write waits for each until its budget runs out, counted
from the request's arrival (GRAPHSVC_WRITE_BUDGET_S): the mentions just before the commit statement,
the vector just after it, so that its encoding overlaps all of the write's statements but the last.
What is ready is written in the same transaction as the memory, by the statements the background
workers store theirs with (extract/store, embed/store, on a memory created claimed by the write itself:
services/remember.py). What is not is left to the workers, the memory marked `embedFirst` /
`extractFirst` so that their claims can take such leftovers before bulk work, and the receipt says so:
`meaning` and `links` are "ready", "pending" or "off".

Bulk writes (`graphsvc import`, larger batches) read nothing at write: they go to the backlog. An
extractor that is not cheap (spaCy) stays in the background. A transaction the driver runs again
awaits the same jobs (drafts.Reading): nothing is read twice, nothing read is lost.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from graphsvc.services import deadline
from graphsvc.services.drafts import Readiness, Reading
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService

INTERACTIVE_BATCH = 16  # a batch of at most this many items reads its texts at write; larger: the backlog
WRITE_THREADS = max(1, min(4, os.cpu_count() or 1))  # the pool that reads texts at write
BUDGET_S = 1.0  # GRAPHSVC_WRITE_BUDGET_S's default
T = TypeVar("T")


class Freshness(Protocol):
    """Where writes report how fresh what they answered is (graphsvc.metrics.Metrics)."""

    def searchable(self, path: str, seconds: float) -> None:
        """A memory became searchable by meaning `seconds` after its write arrived, on `path`."""
        ...

    def pending(self, part: str) -> None:
        """An interactive write's receipt said `part` ("meaning" or "links") is pending."""
        ...


@dataclass
class AtWrite:
    """Starts the reading of interactive writes' texts; says what writes store at all."""

    embeddings: EmbeddingService | None
    extraction: ExtractionService | None
    budget_s: float = BUDGET_S  # counted from the request's arrival; 0: nothing is read at write
    freshness: Freshness | None = None
    _pools: dict[str, ThreadPoolExecutor] = field(default_factory=dict[str, ThreadPoolExecutor], init=False)

    @property
    def meaning(self) -> bool:
        """Vectors are stored at all (the embeddings are on)."""
        return self.embeddings is not None and self.embeddings.on

    @property
    def links(self) -> bool:
        """Mentions are read at all (extraction is on)."""
        return self.extraction is not None and self.extraction.on

    def reading(self, text: str) -> Reading:
        """Start reading `text` for an interactive write that arrived at deadline.arrival()."""
        arrived = deadline.arrival()
        vector = found = None
        if self.budget_s > 0 and self.meaning:
            assert self.embeddings is not None
            vector = self._job("vector", self.embeddings.encode_text, text)
        if self.budget_s > 0 and self.extraction is not None and self.extraction.at_write:
            found = self._job("links", self.extraction.found, text)
        return Reading(vector, found, arrived, arrived + self.budget_s, interactive=True)

    def _job(self, kind: str, read: Callable[[str], T], text: str) -> asyncio.Future[T]:
        """`read(text)` in `kind`'s pool: vectors in WRITE_THREADS threads; links in one of their own,
        so that a text's links (needed before the commit statement) never queue behind encodings."""
        if kind not in self._pools:
            threads = WRITE_THREADS if kind == "vector" else 1
            self._pools[kind] = ThreadPoolExecutor(threads, f"graphsvc-at-write-{kind}")
        return asyncio.get_running_loop().run_in_executor(self._pools[kind], read, text)

    def report(self, created: Iterable[tuple[Reading, Readiness, Readiness]]) -> None:
        """What interactive writes' new memories answered: when each became searchable, what is pending."""
        if self.freshness is None:
            return
        now = deadline.now()
        for reading, meaning, links in created:
            if not reading.interactive:
                continue
            if meaning == "ready":
                self.freshness.searchable("write", now - reading.arrived)
            for part, state in (("meaning", meaning), ("links", links)):
                if state == "pending":
                    self.freshness.pending(part)

    def close(self) -> None:
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.shutdown(wait=False, cancel_futures=True)
