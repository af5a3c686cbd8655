"""The supervisor of the background loops (services/worker.py) with fake steps: back-off, one log line at
each end of an outage, recovery, the idle interval, waking, and a clean stop."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import pytest

from graphsvc.errors import Unavailable
from graphsvc.services import worker as worker_module
from graphsvc.services.index.term_fold import TermFolder
from graphsvc.services.worker import Pace, Traffic, Worker

WITHIN_S = 10.0  # every wait on a step is bounded by this


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Steps:
    """A fake step: answers (or raises) each of `script` in turn, then 0; records when it was called."""

    def __init__(self, *script: int | Exception) -> None:
        self.script = list(script)
        self.calls = 0
        self.called = asyncio.Event()

    async def __call__(self) -> int:
        self.calls += 1
        self.called.set()
        await asyncio.sleep(0)
        if not self.script:
            return 0
        answer = self.script.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class Pauses:
    """A back-off wait that records what it was asked and returns at once."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await asyncio.sleep(0)


async def _until(done: Callable[[], bool], within_s: float = WITHIN_S) -> None:
    deadline = time.monotonic() + within_s
    while not done():
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.005)


def _worker(step: Callable[[], Awaitable[int]], **options: object) -> Worker:
    return Worker("test", step, **{"interval_s": 3600.0, "backoff_s": 1.0, "max_backoff_s": 8.0, **options})  # type: ignore[arg-type]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == worker_module.log.name and r.levelno >= logging.WARNING]


async def test_a_failing_step_is_retried_with_a_doubling_back_off_up_to_its_cap() -> None:
    pauses = Pauses()
    steps = Steps(*[Unavailable("Neo4j cannot be reached")] * 6)
    worker = _worker(steps, sleep=pauses)
    worker.start()
    await _until(lambda: steps.calls == 7)
    await worker.stop()
    assert pauses.asked == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


async def test_a_long_outage_keeps_retrying_at_the_cap() -> None:
    pauses = Pauses()
    steps = Steps(*[Unavailable("down")] * 1200)
    worker = _worker(steps, sleep=pauses)
    worker.start()
    await _until(lambda: steps.calls == 1201, within_s=30)
    await worker.stop()
    assert pauses.asked[-1] == 8.0 and len(pauses.asked) == 1200 and worker.state().ok


async def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends_with_its_length(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, pauses = Clock(), Pauses()
    steps = Steps(*[Unavailable("Neo4j cannot be reached")] * 5)

    async def sleep(seconds: float) -> None:
        clock.now += seconds
        await pauses(seconds)

    worker = _worker(steps, sleep=sleep, clock=clock)
    worker.start()
    await _until(lambda: steps.calls == 6)
    await worker.stop()
    started, recovered = _warnings(caplog)
    assert "failing" in started.getMessage() and "Neo4j cannot be reached" in started.getMessage()
    assert started.exc_info is None  # a dependency down: no traceback
    assert "recovered after 23.0 s (5 failed attempts)" in recovered.getMessage()  # 1 + 2 + 4 + 8 + 8


async def test_a_bug_in_a_step_is_logged_once_with_its_traceback_and_does_not_end_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    steps = Steps(KeyError("oops"), KeyError("oops"), 2)
    worker = _worker(steps, sleep=Pauses())
    worker.start()
    await _until(lambda: steps.calls == 4)  # two failures, 2 waiting (at once), then 0
    await worker.stop()
    started, recovered = _warnings(caplog)
    assert started.exc_info is not None and started.exc_info[0] is KeyError
    assert "recovered" in recovered.getMessage()


async def test_the_state_says_failing_during_an_outage_and_the_age_of_the_last_success() -> None:
    clock, gate = Clock(), asyncio.Event()
    steps = Steps(0, Unavailable("down"))

    async def wait_for_the_test(_: float) -> None:
        await gate.wait()

    worker = _worker(steps, clock=clock, sleep=wait_for_the_test, interval_s=0.0)
    assert worker.state().ok and worker.state().last_success_age_s is None  # nothing ran yet
    worker.start()
    await _until(lambda: steps.calls == 2)
    clock.now += 7.5
    assert not worker.state().ok and worker.state().last_success_age_s == 7.5
    gate.set()  # the back-off ends; the next step succeeds
    await _until(lambda: worker.state().ok)
    assert worker.state().last_success_age_s == 0.0
    await worker.stop()


async def test_a_worker_loops_at_once_while_work_waits_and_idles_at_its_interval_when_none() -> None:
    steps = Steps(3, 2, 1)
    worker = _worker(steps)  # an interval of an hour
    worker.start()
    await _until(lambda: steps.calls == 4)  # 3, 2, 1 waiting: at once; then 0: idle
    for _ in range(20):
        await asyncio.sleep(0)
    assert steps.calls == 4
    worker.wake()  # e.g. a write: the next step now
    await _until(lambda: steps.calls == 5)
    await worker.stop()


async def test_a_worker_without_interval_stops_when_nothing_waits_and_a_wake_starts_it_again() -> None:
    steps = Steps(Unavailable("down"), 1)
    worker = _worker(steps, interval_s=None, sleep=Pauses())
    worker.start()
    await _until(lambda: steps.calls == 3)  # failed, 1 waiting, then 0: done
    await _until(lambda: worker._task is None)  # pyright: ignore[reportPrivateUsage]
    worker.wake()
    await _until(lambda: steps.calls == 4)
    await worker.stop()


async def test_background_work_slows_to_a_floor_of_its_quiet_speed_while_requests_run() -> None:
    now = [100.0]
    paused: list[float] = []

    async def sleep(seconds: float) -> None:
        paused.append(seconds)

    traffic = Traffic(recent_s=0.1, clock=lambda: now[0])
    pace = Pace(traffic, 0.5, max_pause_s=2.0, clock=lambda: now[0], sleep=sleep)

    async def step(items: int, seconds: float, full: bool = True) -> float:
        started = now[0]
        now[0] += seconds
        return await pace.done(items, started, full=full)

    with traffic:  # before any quiet step: as long as the step took
        assert await step(10, 0.3) == pytest.approx(0.3)
    now[0] += 1
    assert await step(100, 1.0) == 0.0 and pace.quiet == 100  # no request about: full speed, learned
    assert await step(3, 0.5, full=False) == 0.0 and pace.quiet == 100  # a step's round trips, not its speed
    with traffic:
        assert traffic.active
        assert await step(50, 0.5) == pytest.approx(0.5)  # at half the quiet speed: 50 in 1 s
        assert await step(30, 0.9) == 0.0  # the machine slows it more: no pause of its own
        assert await step(500, 1.0) == 2.0  # never more than the cap
    now[0] += 0.05
    assert await step(20, 0.1) == pytest.approx(0.3)  # one just ended: it overlapped the step
    now[0] += 1
    assert not traffic.active and await step(120, 1.0) == 0.0 and pace.quiet == pytest.approx(106)
    assert paused == pytest.approx([0.3, 0.5, 2.0, 0.3])


async def test_stop_cancels_a_step_in_flight_waits_for_it_and_never_raises() -> None:
    cancelled = asyncio.Event()

    async def hangs() -> int:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return 0

    worker = _worker(hangs)
    await worker.stop()  # never started: nothing to do
    worker.start()
    await asyncio.sleep(0)
    await asyncio.wait_for(worker.stop(), WITHIN_S)
    assert cancelled.is_set()
    await worker.stop()  # twice: nothing more


class FailingOnce:
    """A store whose first fold transaction fails as Neo4j away does; it records the graphs folded."""

    def __init__(self) -> None:
        self.folds = 0
        self.failed = False

    async def run(self, name: str, **params: object) -> list[dict[str, object]]:
        return []

    async def write_transaction(self, work: object, *, bounded: bool = True) -> list[object]:
        if not self.failed:
            self.failed = True
            raise Unavailable("Neo4j cannot be reached")
        self.folds += 1
        return []


async def test_the_term_folder_keeps_the_graphs_of_a_failed_fold_and_folds_them_when_neo4j_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graphsvc.services.index import term_fold

    monkeypatch.setattr(term_fold, "FOLD_DELAY_S", 0.0)
    store = FailingOnce()
    folder = TermFolder(store)
    folder.written(["g1", "g2"])
    await _until(lambda: store.failed and not folder.worker.state().ok)
    await _until(lambda: store.folds == 1, within_s=WITHIN_S)  # after the first back-off (1 s)
    await _until(lambda: folder.worker.state().ok)
    await folder.close()
