"""Group commit: concurrent writes coalesced into one transaction.

While a batch is being written, the next submissions wait and then go together in the next batch, so
N concurrent writers cost about one transaction each round instead of N, each paying the statements'
and the commit's fixed costs. Writers answered together tend to come back together, a few
milliseconds apart (their next requests on their way): the next batch waits for as many writers as
the last round saw, no longer than the last batch took to write (MAX_LINGER_S at most), so that a
crowd is not split over several transactions. A lone writer waits for nobody. Each submitter gets its
own result or error: one channel, the flush's answer for its item (a result or an exception), or the
exception that failed the whole flush.

A submitter's deadline is its own, counted from its arrival: one queued behind a flush in flight
waits no longer than it would have waited alone (TimeoutError). A submitter that gives up (deadline,
cancellation) before its batch is taken is never flushed; once its batch is in flight, the write stands
(as any write whose answer is lost; remember's retry window answers its retry).
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

    async def submit(self, item: T, *, within_s: float | None = None) -> R:
        """`item`'s result from the flush that takes it.

        Raises:
            The flush's error for `item`, or the error that failed its whole flush.
            TimeoutError: no answer within `within_s` of this call (None: no deadline).
        """
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._arrived is not None:
            self._arrived.set()
        if self._drain is None:
            self._drain = asyncio.create_task(self._drained())
        async with asyncio.timeout(within_s):  # on expiry the future is cancelled with this wait
            return await future

    def _waiting(self) -> int:
        """Submissions still waiting, those whose submitter gave up dropped."""
        self._queue = [(item, future) for item, future in self._queue if not future.done()]
        return len(self._queue)

    async def _gathered(self, size: int, linger_s: float) -> None:
        """Wait up to `linger_s` for `size` submissions in the queue (not at all if they are)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + linger_s
        arrived = self._arrived = self._arrived or asyncio.Event()
        while self._waiting() < size and (left := deadline - loop.time()) > 0:
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
                if not self._waiting():
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
                size, batch = len(batch) + self._waiting(), []
        finally:  # cancelled (shutting down): nobody waits forever
            for _, future in batch + self._queue:
                if not future.done():
                    future.cancel()
            self._queue = []
            self._arrived = self._drain = None
