"""One deadline per request, counted from its arrival.

The HTTP edge notes when a request arrived, before it looks the caller's token up; the operation then
gets what is left of GRAPHSVC_DEADLINE_S, not a deadline of its own. So a request waiting on a Neo4j
that stopped answers 503 within the deadline of its arrival, not after the token look-up's wait plus
the operation's (an outside fault run saw 13.5 s). Operations that wait longer by design (anchor_now
waits for finality) keep their own documented bounds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

from graphsvc.errors import Unavailable

T = TypeVar("T")


def now() -> float:
    """The clock arrivals are noted on."""
    return time.monotonic()


async def within(work: Awaitable[T], deadline_s: float, arrived: float) -> T:
    """`work`'s answer, if it comes within `deadline_s` of `arrived`.

    Raises:
        Unavailable: it did not (the work is cancelled; a write already sent may stand).
    """
    left = max(0.0, deadline_s - (now() - arrived))
    try:
        async with asyncio.timeout(left):
            return await work
    except TimeoutError as e:
        raise Unavailable(f"no answer within {deadline_s:g} s of the request's arrival") from e
