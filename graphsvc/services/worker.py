"""One supervisor for every background loop: a Worker runs a loop's *step* and guards the whole of it.

A step is an async callable that does one round of work and returns how much is still waiting
(0: nothing). The worker runs it again at once while something waits, else idles `interval_s`
(or until `wake()`). A step that raises (an `Unavailable` dependency, any other `GraphsvcError`, or a
bug) is retried with exponential back-off, BACKOFF_S doubling up to MAX_BACKOFF_S, and never ends the
loop. An outage is logged twice: a warning when the step starts failing (with the traceback when
the error is not a GraphsvcError: a bug), and a warning when it succeeds again, with how long it
failed; the retries in between log at debug.

A worker with `interval_s=None` runs only when woken: it stops once a step succeeds with nothing
waiting, and `wake()` starts it again (the term folds after a write; reconciliation at start-up,
"until it succeeds once").

`state()` reports whether the last step succeeded and the seconds since the last success (None before
the first); /health and /metrics show it per worker. `stop()` cancels the loop and waits for it, and
never raises.

Beside it: `Traffic`, the requests in flight, and `Pace`, a worker's speed beside them (a floor under
load); `Child`, a worker's process of its own, which dies with the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TypeVar

from graphsvc.errors import GraphsvcError

BACKOFF_S = 1.0  # the first retry after a failed step
MAX_BACKOFF_S = 10.0  # the back-off's cap: a dependency that returns is seen within this
# While requests run, a background worker keeps this share of its quiet speed (Pace). Above the half
# that operations promise: on two cores, requests slow a step below what its pauses aim at (at 0.5 the
# workers read 0.45-0.46 of quiet with 8 clients calling; bench/README.md, Background workers).
FLOOR = 0.6
log = logging.getLogger(__name__)

Step = Callable[[], Awaitable[int]]
T = TypeVar("T")


@dataclass(frozen=True)
class WorkerState:
    ok: bool  # the last step succeeded (or none ran yet)
    last_success_age_s: float | None  # seconds since the last step that succeeded; None before the first


class Worker:
    def __init__(
        self,
        name: str,
        step: Step,
        *,
        interval_s: float | None,
        backoff_s: float = BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.name = name
        self._step = step
        self._interval_s = interval_s
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._clock = clock
        self._sleep = sleep  # the back-off's wait
        self._woken = False
        self._wakeup: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_success: float | None = None
        self._failing_since: float | None = None
        self._failures = 0

    def start(self) -> None:
        """Run the loop in a task of its own (nothing when it runs already); the first step at once."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name=f"graphsvc-worker-{self.name}")

    def wake(self) -> None:
        """A step now rather than after the idle interval; starts the loop when it is not running."""
        self._woken = True
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)
        self.start()

    async def stop(self) -> None:
        """Cancel the loop and wait for it to end; never raises."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

    def state(self) -> WorkerState:
        age = None if self._last_success is None else self._clock() - self._last_success
        return WorkerState(ok=self._failing_since is None, last_success_age_s=age)

    async def run(self) -> None:
        """The loop: until cancelled, or (with no interval) until nothing waits."""
        try:
            while True:
                self._woken = False
                waiting = await self._guarded()
                if waiting is None:
                    await self._pause(self._retry_in())
                elif waiting > 0 or self._woken:
                    continue
                elif self._interval_s is None:
                    return
                else:
                    await self._pause(self._interval_s)
        finally:
            if self._task is asyncio.current_task():
                self._task = None

    async def _guarded(self) -> int | None:
        """The step's answer, or None when it failed (logged once per outage)."""
        try:
            waiting = await self._step()
        except GraphsvcError as e:  # a dependency down, or refusing: the step is retried
            self._failed(e, bug=False)
            return None
        except Exception as e:  # a bug must not end the loop either
            self._failed(e, bug=True)
            return None
        self._succeeded()
        return waiting

    def _failed(self, error: Exception, *, bug: bool) -> None:
        self._failures += 1
        if self._failing_since is not None:
            log.debug(
                "worker %s still failing (%d attempts): %s", self.name, self._failures, _described(error)
            )
            return
        self._failing_since = self._clock()
        log.warning(
            "worker %s is failing, retrying with back-off (up to %g s): %s",
            self.name,
            self._max_backoff_s,
            _described(error),
            exc_info=error if bug else None,
        )

    def _succeeded(self) -> None:
        now = self._clock()
        if self._failing_since is not None:
            log.warning(
                "worker %s recovered after %.1f s (%d failed attempts)",
                self.name,
                now - self._failing_since,
                self._failures,
            )
        self._last_success, self._failing_since, self._failures = now, None, 0

    def _retry_in(self) -> float:
        doublings = min(self._failures - 1, 32)  # a long outage must not overflow the float
        return min(self._max_backoff_s, self._backoff_s * 2**doublings)

    async def _pause(self, seconds: float) -> None:
        """Wait `seconds`, or less when woken (not while failing: a write does not cut the back-off)."""
        if self._failing_since is not None:
            await self._sleep(seconds)
            return
        self._wakeup = asyncio.get_running_loop().create_future()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await self._wakeup
        finally:
            self._wakeup = None


class Traffic:
    """The requests in flight, for background work to make room for (`Pace`): requests enter with
    `with traffic:`; one app shares one."""

    def __init__(self, *, recent_s: float = 0.1, clock: Callable[[], float] = time.monotonic) -> None:
        self._recent_s, self._clock = recent_s, clock
        self._in_flight, self._last_end = 0, float("-inf")

    def __enter__(self) -> None:
        self._in_flight += 1

    def __exit__(self, *_: object) -> None:
        self._in_flight -= 1
        self._last_end = self._clock()

    def since(self, moment: float) -> bool:
        """A request ran at some time since `moment` (one in flight now, or one ended within `recent_s`
        of it or after)."""
        return self._in_flight > 0 or self._last_end > moment - self._recent_s

    @property
    def active(self) -> bool:
        return self.since(self._clock())


class Pace:
    """One background worker's speed beside the requests: with no request about, full speed; while
    requests run, `floor` of its quiet speed, so that requests keep the rest of a small machine while the
    backlog keeps moving, however busy they are. After a step that requests overlapped, the worker pauses
    as long as the step should have taken at that speed less what it took (at most `max_pause_s`); a step
    slower than that (the machine is busy) is not followed by any pause, and leaves `short` set for the
    worker to take more of the machine (a second thread) until it is back. The quiet speed is learned from
    the full steps (a whole batch: a few memories cost a step's round trips, not its speed) that no
    request overlapped, as a running mean; until one was seen, a step is followed by a pause as long as
    itself."""

    def __init__(
        self,
        requests: Traffic,
        floor: float = FLOOR,
        *,
        max_pause_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._requests, self._floor, self._max_pause_s = requests, floor, max_pause_s
        self._clock, self._sleep = clock, sleep
        self.quiet: float | None = None  # items a second with no request about
        self.short = False  # the last step that requests overlapped was slower than the floor

    async def done(self, items: int, started: float, *, full: bool) -> float:
        """A step that began at `started` (this clock) handled `items` (`full`: a whole batch): learn or
        pause; returns the pause."""
        worked = self._clock() - started
        if items <= 0 or worked <= 0:
            return 0.0
        if not self._requests.since(started):
            if full:
                speed = items / worked
                self.quiet = speed if self.quiet is None else 0.7 * self.quiet + 0.3 * speed
            self.short = False
            return 0.0
        due = worked if self.quiet is None else items / (self._floor * self.quiet) - worked
        self.short = due < 0
        pause = min(self._max_pause_s, max(0.0, due))
        if pause:
            await self._sleep(pause)
        return pause


class Progress:
    """Logs a worker's progress at most every `every_s`: how many it `did` (a verb), how many wait."""

    def __init__(self, did: str, every_s: float) -> None:
        self._did, self._every_s = did, every_s
        self._done, self._since = 0, time.monotonic()

    async def add(self, count: int, waiting: Callable[[], Awaitable[int]]) -> None:
        self._done += count
        elapsed = time.monotonic() - self._since
        if self._done and elapsed >= self._every_s:
            log.info("%s %d memories in %.0f s; %d wait", self._did, self._done, elapsed, await waiting())
            self._done, self._since = 0, time.monotonic()


def alone_or_why(read: Callable[[list[str]], Sequence[T]], text: str | None) -> T | str:
    """What `read` gives for one text read alone, or why it gives nothing: no text, or the name of the
    error it raised (a model's libraries raise their own types). In a worker's process."""
    if text is None:
        return "no text"
    try:
        return read([text])[0]
    except Exception as e:
        return type(e).__name__


def _described(error: Exception) -> str:
    return str(error) if isinstance(error, GraphsvcError) else type(error).__name__


class Child:
    """A background worker's process of its own, started at its first `run` (spawned: it copies none of
    the server's state) at normal priority: work that would hold the interpreter's lock against the
    requests runs there (an encoder thread beside a busy event loop encoded at a quarter of its speed).
    It dies with the server, even by `kill -9` (`die_with_parent`), and multiprocessing's resource
    tracker with it (it ends once no process holds its pipe)."""

    def __init__(self, initializer: Callable[..., None], *initargs: object) -> None:
        self._initializer, self._initargs = initializer, initargs
        self._pool: ProcessPoolExecutor | None = None

    async def run(self, work: Callable[..., T], *args: object) -> T:
        """`work(*args)` in the process (pickled both ways).

        Raises:
            BrokenProcessPool: the process died (killed, out of memory): the next `run` starts another.
        """
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")
            initargs = (os.getpid(), self._initializer, *self._initargs)
            self._pool = ProcessPoolExecutor(1, spawn, initializer=_child_started, initargs=initargs)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, work, *args)
        except BrokenProcessPool:
            self._pool = None
            raise

    def close(self) -> None:
        """Stop the process (a later `run` starts another)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _child_started(parent: int, initializer: Callable[..., None], *initargs: object) -> None:
    die_with_parent(parent)
    initializer(*initargs)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """The calling process (a worker's child process, at its start) is killed when its parent dies, even
    by `kill -9`: Linux's parent-death signal (prctl PR_SET_PDEATHSIG); a parent already gone by then
    (`parent` is no longer the parent) ends it at once. Elsewhere (no prctl) nothing is set."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
