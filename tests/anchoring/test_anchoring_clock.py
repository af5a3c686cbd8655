"""Anchoring's waits on a clock the test drives (services/anchoring takes a Clock, as MemoryService
takes `clock`): each wait ends when its deadline passes on that clock, with no real time spent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from graphsvc.domain.anchor import OnChainAnchor
from graphsvc.errors import Conflict
from graphsvc.services.anchoring import Clock
from graphsvc.services.anchoring.batches import Batches
from graphsvc.services.anchoring.lease import Lease


class Driven:
    """A clock that moves only when anchoring sleeps on it."""

    def __init__(self) -> None:
        self.t = 0.0

    async def sleep(self, seconds: float) -> None:
        self.t += seconds

    def clock(self) -> Clock:
        return Clock(
            now=lambda: datetime(2026, 12, 5, tzinfo=UTC), monotonic=lambda: self.t, sleep=self.sleep
        )


class Store:
    """Answers each named statement from `answers`, and records what ran."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]]):
        self.answers, self.ran = answers, list[str]()

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        self.ran.append(name)
        return self.answers.get(name, [])

    async def write_transaction(self, work: Callable[[Any], Awaitable[Any]], *, bounded: bool = True) -> Any:
        return await work(self)


class Chain:
    """Final from the `final_at`-th read of the finalized block on (never when None)."""

    address = "0x" + "12" * 20

    def __init__(self, final_at: int | None):
        self.final_at, self.reads = final_at, 0

    async def anchor_of(self, root: str, block: str | int = "finalized") -> OnChainAnchor | None:
        self.reads += 1
        return (
            OnChainAnchor(1, 2, 3, 4) if self.final_at is not None and self.reads >= self.final_at else None
        )


async def test_a_lease_held_elsewhere_answers_conflict_once_the_wait_has_passed_on_the_clock() -> None:
    time, store = Driven(), Store({})  # anchor/lease returns no row: another replica holds it
    lease = Lease(store, "me", ttl_s=15, clock=time.clock())
    with pytest.raises(Conflict):
        await lease.acquire_within(5)
    assert time.t == 5.0 and store.ran == ["anchor/lease"] * 21  # every 0.25 s from 0 to 5 s


async def test_a_lease_freed_during_the_wait_is_taken_with_its_fence() -> None:
    time, store = Driven(), Store({})

    async def freed_at_one_second(seconds: float) -> None:
        time.t += seconds
        if time.t >= 1:
            store.answers["anchor/lease"] = [{"fence": 7}]

    lease = Lease(store, "me", ttl_s=15, clock=Clock(monotonic=lambda: time.t, sleep=freed_at_one_second))
    assert await lease.acquire_within(5) == 7 and time.t == 1.0


def _batches(chain: Chain, store: Store, time: Driven) -> Batches:
    return Batches(store, chain, "me", receipt_timeout_s=60, finality_timeout_s=30, clock=time.clock())  # type: ignore[arg-type]


async def test_finality_is_awaited_until_its_timeout_passes_on_the_clock() -> None:
    time, store = Driven(), Store({})
    assert not await _batches(Chain(final_at=None), store, time).await_finality("0xroot")
    assert time.t == 30.0 and store.ran == []  # never final: the batch is not marked


async def test_a_root_final_before_the_timeout_marks_its_batch_finalized() -> None:
    time, store = Driven(), Store({})
    assert await _batches(Chain(final_at=3), store, time).await_finality("0xroot")
    assert time.t == 0.5 and store.ran == ["anchor/finalized"]
