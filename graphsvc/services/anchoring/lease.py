"""The anchoring lease: one writer at a time across replicas.

The AnchorState node (cypher/anchor/lease.cypher) holds the lease's owner, its expiry and a fencing
token that grows with every lease taken; each write of the batch state machine names the fence it
holds and is refused once another replica has taken the lease (a holder that stalled past its TTL
cannot write over its successor). The holder renews every third of the TTL; a dead holder's lease
lapses within the TTL.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from graphsvc.errors import Conflict, GraphsvcError
from graphsvc.services.anchoring.ports import Clock
from graphsvc.services.ports import Store

log = logging.getLogger(__name__)
WAIT_S = 5.0  # anchor_now waits this long for another replica's batch before answering 409
POLL_S = 0.25


class Lease:
    def __init__(self, store: Store, owner: str, *, ttl_s: float, clock: Clock):
        self._store = store
        self.owner = owner
        self._ttl_ms = int(ttl_s * 1000)
        self._clock = clock
        self._lock = asyncio.Lock()  # this process's own anchorers, one at a time

    @asynccontextmanager
    async def held(self, wait_s: float = WAIT_S) -> AsyncGenerator[int]:
        """The lease (and this process's lock), renewed while held; yields its fence.

        Raises:
            Conflict: another replica held it for all of `wait_s`.
        """
        async with self._lock:
            fence = await self.acquire_within(wait_s)
            renewing = asyncio.create_task(self.renew(fence))
            try:
                yield fence
            finally:
                renewing.cancel()
                await self.release()

    async def acquire(self) -> int:
        """Take the lease if it is free or lapsed; returns its fence.

        Raises:
            Conflict: another replica holds it.
        """
        rows = await self._store.run("anchor/lease", owner=self.owner, ttlMs=self._ttl_ms)
        if not rows:
            raise Conflict("another graphsvc replica is anchoring right now; try again shortly")
        return int(rows[0]["fence"])

    async def acquire_within(self, seconds: float) -> int:
        """The lease, waiting up to `seconds` for another replica to finish (a batch takes a second or
        two) before answering Conflict."""
        deadline = self._clock.monotonic() + seconds
        while True:
            try:
                return await self.acquire()
            except Conflict:
                if self._clock.monotonic() >= deadline:
                    raise
            await self._clock.sleep(POLL_S)

    async def renew(self, fence: int) -> None:
        """Keep the lease while working: every third of its time-to-live, until cancelled."""
        while True:
            await self._clock.sleep(self._ttl_ms / 3000)
            try:
                if not await self._store.run(
                    "anchor/renew", owner=self.owner, fence=fence, ttlMs=self._ttl_ms
                ):
                    return  # lost: the fenced writes will refuse, nothing more to keep
            except GraphsvcError as e:  # Neo4j away for a moment: the lease may still hold
                log.warning("could not renew the anchoring lease: %s", e)

    async def release(self) -> None:
        await self._store.run("anchor/release", owner=self.owner)
