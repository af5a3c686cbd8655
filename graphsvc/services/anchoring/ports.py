"""What anchoring needs from outside: the chain (graphsvc.chain.anchor.AnchorContract) and a clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from graphsvc.domain.anchor import Inclusion, OnChainAnchor, SignedAnchor


class Chain(Protocol):
    """What anchoring needs of graphsvc.chain.anchor.AnchorContract."""

    @property
    def address(self) -> str | None: ...

    async def chain_id(self) -> int: ...
    async def pending_nonce(self) -> int: ...
    async def mined_nonce(self) -> int: ...
    async def sign_anchor(self, root: str, batch_seq: int, leaf_count: int, nonce: int) -> SignedAnchor: ...
    async def broadcast(self, raw: str) -> None: ...
    async def inclusion(self, tx_hash: str, root: str) -> Inclusion | None: ...
    async def anchor_of(self, root: str, block: str | int = "finalized") -> OnChainAnchor | None: ...
    async def verify_memory(self, root: str, memory_id: str, memory_hash: str, proof: list[str]) -> bool: ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Clock:
    """Time as anchoring reads it (the seal's stamp, the deadlines of its waits, the pauses between
    polls); a test passes one it drives, as MemoryService takes `clock`."""

    now: Callable[[], datetime] = _utc_now
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
