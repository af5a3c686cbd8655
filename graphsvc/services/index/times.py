"""The times a memory is stored with (services/recall/timing.py reads them at recall).

Remember: a memory's time is its `occurredAt` (else when it was remembered); the time expressions of
its text are resolved against it (domain/when.py) and stored beside it as the times it mentions.
These are derived, not hashed: `occurredAt` alone joins the envelope.
"""

from __future__ import annotations

from datetime import datetime
from typing import NotRequired, TypedDict

from graphsvc.domain.spans import Occurred
from graphsvc.domain.when import Reference, mentions


class StoredTimes(TypedDict):
    """A memory's time properties: epoch milliseconds, each span `[from, to)`."""

    occurredFrom: int
    occurredTo: int
    timeFrom: int
    timeTo: int
    mentionFrom: NotRequired[list[int]]
    mentionTo: NotRequired[list[int]]


def stamp(occurred: Occurred | None, created_at: datetime, text: str) -> StoredTimes:
    """The time properties a memory is stored with: its own span (`occurredFrom`, `occurredTo`:
    occurredAt's, else the instant it was remembered), the spans its text mentions (`mentionFrom`,
    `mentionTo`, parallel lists; absent when none) and their hull (`timeFrom`, `timeTo`, indexed)."""
    own = occurred or Occurred.at(created_at)
    spans = [m.span for m in mentions(text, Reference.of(own))]
    hull = own.span
    for span in spans:
        hull = hull.hull(span)
    stored = StoredTimes(
        occurredFrom=own.span.start, occurredTo=own.span.end, timeFrom=hull.start, timeTo=hull.end
    )
    if spans:
        stored["mentionFrom"], stored["mentionTo"] = [s.start for s in spans], [s.end for s in spans]
    return stored
