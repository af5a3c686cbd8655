"""The group commit with a fake flush, and remember's use of it with a fake write (no Neo4j): concurrent
submissions coalesce, each submitter hears its own answer, and waits no longer than its own deadline."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from graphsvc.domain.models import RememberInput
from graphsvc.errors import Conflict, GraphsvcError, NotFound, Unavailable
from graphsvc.services.drafts import Draft, Stored
from graphsvc.services.group_commit import GroupCommit
from graphsvc.services.index.term_fold import TermFolder
from graphsvc.services.remember import Outcome, RememberService

BOUND_S = 10  # no wait in these tests comes near it unless something hangs


class Flushes:
    """A flush that records its batches and answers each item doubled; `gate`, when set, holds every
    flush until it is opened; an item in `failing` gets its own error."""

    def __init__(self, *, gated: bool = False, failing: frozenset[int] = frozenset()) -> None:
        self.batches: list[list[int]] = []
        self.started = asyncio.Event()
        self.gate = asyncio.Event()
        if not gated:
            self.gate.set()
        self.failing = failing

    async def __call__(self, items: list[int]) -> list[int | BaseException]:
        self.batches.append(list(items))
        self.started.set()
        await self.gate.wait()
        return [ValueError(item) if item in self.failing else 2 * item for item in items]


async def test_submissions_that_arrive_during_a_flush_go_together_in_the_next() -> None:
    flush = Flushes(gated=True)
    commits: GroupCommit[int, int] = GroupCommit(flush)
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)  # a lone writer waits for nobody
    rest = [asyncio.create_task(commits.submit(n)) for n in range(1, 6)]
    await asyncio.sleep(0)  # let them queue
    flush.gate.set()
    assert await asyncio.wait_for(asyncio.gather(first, *rest), BOUND_S) == [0, 2, 4, 6, 8, 10]
    assert flush.batches == [[0], [1, 2, 3, 4, 5]]


async def test_a_batch_holds_at_most_max_batch_items() -> None:
    flush = Flushes(gated=True)
    commits: GroupCommit[int, int] = GroupCommit(flush, max_batch=2)
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)
    rest = [asyncio.create_task(commits.submit(n)) for n in range(1, 6)]
    await asyncio.sleep(0)
    flush.gate.set()
    await asyncio.wait_for(asyncio.gather(first, *rest), BOUND_S)
    assert flush.batches == [[0], [1, 2], [3, 4], [5]]


async def test_a_member_the_flush_fails_fails_alone() -> None:
    flush = Flushes(gated=True, failing=frozenset({2}))
    commits: GroupCommit[int, int] = GroupCommit(flush)
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)
    rest = [asyncio.create_task(commits.submit(n)) for n in (1, 2, 3)]
    await asyncio.sleep(0)
    flush.gate.set()
    results = await asyncio.wait_for(asyncio.gather(first, *rest, return_exceptions=True), BOUND_S)
    assert [r if not isinstance(r, ValueError) else "failed" for r in results] == [0, 2, "failed", 6]


async def test_a_flush_that_fails_as_a_whole_fails_every_member_with_its_error() -> None:
    async def down(items: list[int]) -> list[int | BaseException]:
        raise Unavailable("Neo4j cannot be reached")

    commits: GroupCommit[int, int] = GroupCommit(down)
    results = await asyncio.wait_for(
        asyncio.gather(*(commits.submit(n) for n in range(3)), return_exceptions=True), BOUND_S
    )
    assert [type(r) for r in results] == [Unavailable] * 3


async def test_a_submitter_cancelled_while_queued_is_never_flushed_and_the_others_are_answered() -> None:
    flush = Flushes(gated=True)
    commits: GroupCommit[int, int] = GroupCommit(flush)
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)
    gone, kept = asyncio.create_task(commits.submit(1)), asyncio.create_task(commits.submit(2))
    await asyncio.sleep(0)
    gone.cancel()
    flush.gate.set()
    assert await asyncio.wait_for(asyncio.gather(first, kept), BOUND_S) == [0, 4]
    assert gone.cancelled()
    assert flush.batches == [[0], [2]]


async def test_a_submitter_cancelled_in_flight_leaves_its_batch_to_finish() -> None:
    flush = Flushes(gated=True)
    commits: GroupCommit[int, int] = GroupCommit(flush)
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)
    first.cancel()
    later = asyncio.create_task(commits.submit(1))
    await asyncio.sleep(0)
    flush.gate.set()
    assert await asyncio.wait_for(later, BOUND_S) == 2
    assert flush.batches == [[0], [1]]  # the write in flight stood


async def test_a_queued_submitter_waits_its_own_deadline_from_arrival_not_the_flush_ahead_of_it() -> None:
    flush = Flushes(gated=True)  # a flush in flight that does not answer
    commits: GroupCommit[int, int] = GroupCommit(flush)
    loop = asyncio.get_running_loop()
    first = asyncio.create_task(commits.submit(0))
    await asyncio.wait_for(flush.started.wait(), BOUND_S)
    arrived = loop.time()
    with pytest.raises(TimeoutError):
        await commits.submit(1, within_s=0.05)
    assert loop.time() - arrived < BOUND_S / 2  # the flush ahead is still held: it did not wait for it
    flush.gate.set()
    assert await asyncio.wait_for(first, BOUND_S) == 0
    await asyncio.sleep(0)
    assert flush.batches == [[0]]  # it gave up before its batch was taken: never written


class FakeWrites(RememberService):
    """RememberService with its transaction replaced: a group holding a draft whose text starts with
    "bad" is refused as a whole (Conflict), as the database refuses a group; alone, such a draft is
    refused by itself (NotFound); `gate` holds every write, bounded by the store's `deadline_s` from
    the write's start, as GraphStore bounds a transaction."""

    def __init__(self, *, deadline_s: float | None = None, store_deadline_s: float = BOUND_S) -> None:
        store: Any = object()
        super().__init__(
            store, TermFolder(store), lambda: datetime(2026, 12, 5, tzinfo=UTC), None, deadline_s
        )
        self.writes: list[list[str]] = []
        self.started = asyncio.Event()
        self.gate = asyncio.Event()
        self.gate.set()
        self._store_deadline_s = store_deadline_s

    async def _write(self, drafts: list[Draft], *, since: str) -> list[Outcome]:
        self.writes.append([d.req.text for d in drafts])
        self.started.set()
        try:
            async with asyncio.timeout(self._store_deadline_s):
                await self.gate.wait()
        except TimeoutError as e:
            raise Unavailable(f"Neo4j did not answer within {self._store_deadline_s:g} s") from e
        bad = [d for d in drafts if d.req.text.startswith("bad")]
        if bad and len(drafts) > 1:
            raise Conflict("refused as a whole")
        return [
            NotFound("no such endpoint") if d in bad else Stored(d, "created", d.id, d.digest) for d in drafts
        ]


def remember(text: str) -> RememberInput:
    return RememberInput(text=text, graph="g")


async def test_a_group_refused_as_a_whole_is_retried_writer_by_writer_so_the_bad_one_fails_alone() -> None:
    writes = FakeWrites()
    writes.gate.clear()
    first = asyncio.create_task(writes.remember(remember("first")))
    await asyncio.wait_for(writes.started.wait(), BOUND_S)
    group = [asyncio.create_task(writes.remember(remember(t))) for t in ("one", "bad one", "two")]
    await asyncio.sleep(0)
    writes.gate.set()
    results = await asyncio.wait_for(asyncio.gather(first, *group, return_exceptions=True), BOUND_S)
    assert [type(r).__name__ for r in results] == [
        "RememberResult",
        "RememberResult",
        "NotFound",
        "RememberResult",
    ]
    assert writes.writes == [["first"], ["one", "bad one", "two"], ["one"], ["bad one"], ["two"]]


async def test_a_lone_remember_refused_as_a_whole_hears_the_refusal() -> None:
    writes = FakeWrites()

    async def refused(drafts: list[Draft], *, since: str) -> list[Outcome]:
        raise Conflict("refused as a whole")

    writes._write = refused  # type: ignore[method-assign]
    with pytest.raises(Conflict):
        await asyncio.wait_for(writes.remember(remember("alone")), BOUND_S)


async def test_remember_many_answers_a_receipt_per_item_with_the_rejected_reason() -> None:
    writes = FakeWrites()

    async def mixed(drafts: list[Draft], *, since: str) -> list[Outcome]:
        first, _ = drafts
        return [Stored(first, "duplicate", "mem_old", "h"), NotFound("no memory 'x' to supersede")]

    writes._write = mixed  # type: ignore[method-assign]
    receipts = await writes.remember_many([remember("a"), remember("b")])
    assert [r.model_dump(exclude_none=True) for r in receipts] == [
        {"index": 0, "status": "duplicate", "id": "mem_old", "hash": "h"},
        {"index": 1, "status": "rejected", "error": "no memory 'x' to supersede"},
    ]


async def test_a_remember_queued_behind_a_stuck_flush_is_unavailable_at_its_own_deadline() -> None:
    """Neo4j killed mid-load: the flush in flight waits out the store's deadline; a remember queued
    behind it is told Unavailable at its own deadline, counted from its arrival, not after that flush's
    deadline and then its own."""
    deadline_s = 1.0
    writes = FakeWrites(deadline_s=deadline_s, store_deadline_s=deadline_s)
    writes.gate.clear()  # Neo4j does not answer
    loop = asyncio.get_running_loop()
    first = asyncio.create_task(writes.remember(remember("in flight")))
    await asyncio.wait_for(writes.started.wait(), BOUND_S)
    await asyncio.sleep(deadline_s / 2)  # the queued one arrives half-way through the flush
    arrived = loop.time()
    with pytest.raises(Unavailable):
        await writes.remember(remember("queued"))
    waited = loop.time() - arrived
    assert deadline_s * 0.9 <= waited < deadline_s * 1.45  # not the 1.5 deadlines left before the fix
    with pytest.raises(GraphsvcError):
        await asyncio.wait_for(first, BOUND_S)
    writes.gate.set()  # Neo4j is back: the queued remember, taken when the first flush failed, lands
