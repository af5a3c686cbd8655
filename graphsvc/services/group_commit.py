"""Group commit: concurrent writes coalesced into one transaction.

While a batch is being written, the next submissions wait and then go together in the next batch, so
N concurrent writers cost about one transaction each round instead of N, each paying the statements'
and the commit's fixed costs. Writers answered together tend to come back together, a few
milliseconds apart (their next requests on their way): the next batch waits for as many writers as
the last round saw, no longer than the last batch took to write (MAX_LINGER_S at most), so that a
crowd is not split over several transactions. A lone writer waits for nobody. Each submitter gets its
own result or error.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Flush = Callable[[list[T]], Awaitable[list[R | BaseException]]]
MAX_LINGER_S = 0.02


class GroupCommit(Generic[T, R]):
    def __init__(self, flush: Flush[T, R], *, max_batch: int = 500):
        """`flush(items)` writes items and answers, in order, a result or an error each."""
        self._flush = flush
        self._max_batch = max_batch
        self._queue: list[tuple[T, asyncio.Future[R]]] = []
        self._arrived: asyncio.Event | None = None  # made by the drain, in its event loop
        self._drain: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._arrived is not None:
            self._arrived.set()
        if self._drain is None:
            self._drain = asyncio.create_task(self._drained())
        return await future

    async def _gathered(self, size: int, linger_s: float) -> None:
        """Wait up to `linger_s` for `size` submissions in the queue (not at all if they are)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + linger_s
        arrived = self._arrived = self._arrived or asyncio.Event()
        while len(self._queue) < size and (left := deadline - loop.time()) > 0:
            arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(arrived.wait(), left)

    async def _drained(self) -> None:
        loop = asyncio.get_running_loop()
        batch: list[tuple[T, asyncio.Future[R]]] = []
        size, took = 1, 0.0  # the writers the last round saw, and how long its write took
        try:
            while True:
                await self._gathered(min(size, self._max_batch), min(took, MAX_LINGER_S))
                if not self._queue:
                    break
                batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
                started = loop.time()
                try:
                    results = await self._flush([item for item, _ in batch])
                except Exception as error:  # the whole batch failed: every submitter hears why
                    results = [error] * len(batch)
                took = loop.time() - started
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():  # its caller went away; the write stands
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
                # The writers seen this round: answered, or already queued behind them. Waiting for as
                # many keeps two halves of one crowd from alternating in half batches.
                size, batch = len(batch) + len(self._queue), []
        finally:  # cancelled (shutting down): nobody waits forever
            for _, future in batch + self._queue:
                if not future.done():
                    future.cancel()
            self._queue = []
            self._arrived = self._drain = None
