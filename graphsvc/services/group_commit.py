"""Group commit: concurrent writes coalesced into one transaction.

While a batch is being written, the next submissions wait and then go together in the next batch, so
N concurrent writers cost about one transaction each round instead of N, each paying the commit and
the fulltext index's refresh. A lone writer waits for nobody. Each submitter gets its own result or error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Flush = Callable[[list[T]], Awaitable[list[R | BaseException]]]


class GroupCommit(Generic[T, R]):
    def __init__(self, flush: Flush[T, R], *, max_batch: int = 500):
        """`flush(items)` writes items and answers, in order, a result or an error each."""
        self._flush = flush
        self._max_batch = max_batch
        self._queue: list[tuple[T, asyncio.Future[R]]] = []
        self._drain: asyncio.Task[None] | None = None

    async def submit(self, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._drain is None:
            self._drain = asyncio.create_task(self._drained())
        return await future

    async def _drained(self) -> None:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        try:
            while self._queue:
                batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
                try:
                    results = await self._flush([item for item, _ in batch])
                except Exception as error:  # the whole batch failed: every submitter hears why
                    results = [error] * len(batch)
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():  # its caller went away; the write stands
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
                batch = []
        finally:  # cancelled (shutting down): nobody waits forever
            for _, future in batch + self._queue:
                if not future.done():
                    future.cancel()
            self._queue = []
            self._drain = None
