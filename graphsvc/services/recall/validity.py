"""Which memories hold at the instant a recall asks for: memory/validity's rows, read once as records."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.services.ports import Row
from graphsvc.services.recall.timing import Times


@dataclass(frozen=True, slots=True)
class Successor:
    """A memory superseding another, and when it starts (validFrom, else when it was remembered)."""

    id: str
    validFrom: str | None
    createdAt: str


@dataclass(frozen=True, slots=True)
class Validity:
    """A memory's own interval (validFrom, else when it was remembered; validTo), the memories that
    supersede it, its occurredAt and its stored times, as memory/validity reads them."""

    id: str
    validFrom: str | None
    validTo: str | None
    createdAt: str
    occurredAt: str | None
    successors: tuple[Successor, ...]
    times: Times

    @classmethod
    def of(cls, row: Row) -> Validity:
        """From a row of memory/validity."""
        return cls(
            id=row["id"],
            validFrom=row["validFrom"],
            validTo=row["validTo"],
            createdAt=row["createdAt"],
            occurredAt=row["occurredAt"],
            successors=tuple(Successor(s["id"], s["validFrom"], s["createdAt"]) for s in row["successors"]),
            times=Times.of(row),
        )

    def holds(self, at: str | None, now: str) -> bool:
        """A memory holds from its start (validFrom, else when it was remembered) until its validTo or
        the start of the first memory superseding it, whichever comes first; `at` None is now, where
        whatever was remembered has started (so no replica's clock can hide a fresh write). Instants
        are `YYYY-MM-DDTHH:MM:SS.mmmZ` text, which orders as time does."""

        def start(m: Validity | Successor) -> str:
            return m.validFrom or (m.createdAt if at else "")

        ends = [start(s) for s in self.successors] + ([self.validTo] if self.validTo else [])
        moment = at or now
        return start(self) <= moment and all(moment < end for end in ends)
