"""One deadline per request, counted from its arrival.

The HTTP edge notes when a request arrived, before it looks the caller's token up; the operation then
gets what is left of GRAPHSVC_DEADLINE_S, not a deadline of its own. So a request waiting on a Neo4j
that stopped answers 503 within the deadline of its arrival, not after the token look-up's wait plus
the operation's (an outside fault run saw 13.5 s). Operations that wait longer by design (anchor_now
waits for finality) keep their own documented bounds. The work can ask when its request arrived
(`arrival`): a remember's budget for its memory's vector is counted from it (services/at_write.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TypeVar

from graphsvc.errors import Unavailable

T = TypeVar("T")
_arrived: ContextVar[float | None] = ContextVar("graphsvc_arrived", default=None)


def now() -> float:
    """The clock arrivals are noted on."""
    return time.monotonic()


def arrival() -> float:
    """When the current request arrived (`within`'s `arrived`); now, off a request."""
    arrived = _arrived.get()
    return now() if arrived is None else arrived


async def within(work: Awaitable[T], deadline_s: float, arrived: float) -> T:
    """`work`'s answer, if it comes within `deadline_s` of `arrived`.

    Raises:
        Unavailable: it did not (the work is cancelled; a write already sent may stand).
    """
    left = max(0.0, deadline_s - (now() - arrived))
    noted = _arrived.set(arrived)  # in this task's context, where `work` runs
    try:
        async with asyncio.timeout(left):
            return await work
    except TimeoutError as e:
        raise Unavailable(f"no answer within {deadline_s:g} s of the request's arrival") from e
    finally:
        _arrived.reset(noted)
