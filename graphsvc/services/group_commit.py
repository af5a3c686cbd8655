"""Group commit: concurrent writes to one key (a graph) coalesced into one transaction.

While a batch of a key is being written, the next submissions to that key wait and then go together
in the next batch, so N concurrent writers cost about one transaction each round instead of N queued
on the graph's lock. A lone writer waits for nobody. Each submitter gets its own result or error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Flush = Callable[[str, list[T]], Awaitable[list[R | BaseException]]]


class GroupCommit(Generic[T, R]):
    def __init__(self, flush: Flush[T, R], *, max_batch: int = 500):
        """`flush(key, items)` writes items of one key and answers, in order, a result or an error each."""
        self._flush = flush
        self._max_batch = max_batch
        self._queues: dict[str, list[tuple[T, asyncio.Future[R]]]] = {}
        self._drains: dict[str, asyncio.Task[None]] = {}

    async def submit(self, key: str, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(key, []).append((item, future))
        if key not in self._drains:
            self._drains[key] = asyncio.create_task(self._drain(key))
        return await future

    async def _drain(self, key: str) -> None:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        try:
            while queue := self._queues.pop(key, None):
                batch, rest = queue[: self._max_batch], queue[self._max_batch :]
                if rest:
                    self._queues[key] = rest
                try:
                    results = await self._flush(key, [item for item, _ in batch])
                except Exception as error:  # the whole batch failed: every submitter hears why
                    results = [error] * len(batch)
                for (_, future), result in zip(batch, results, strict=True):
                    if future.done():  # its caller went away; the write stands
                        continue
                    if isinstance(result, BaseException):
                        future.set_exception(result)
                    else:
                        future.set_result(result)
        finally:  # cancelled (shutting down): nobody waits forever
            for _, future in batch + self._queues.pop(key, []):
                if not future.done():
                    future.cancel()
            del self._drains[key]
