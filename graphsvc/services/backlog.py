"""One worker's side of a backlog that every graph shares (the embedding and the extraction workers').

- **Fair.** A claim (`<area>/claim`) takes first the memories a write could not finish in time (the
  write path marks them `embedFirst` / `extractFirst`), then goes round-robin over the graphs: from
  where the last claim stopped (`after`, a graph's name), at most GRAPHS graphs a claim, each giving up
  to the claim's size, each found by an index seek. So another graph's ten new memories wait at most for
  one claim of every graph with a backlog before them, however many memories those hold.
- **Only what it owns.** A claim matches memories only; a row the worker cannot read (no text, a text
  its model raises on, a graph or id that is not a string: `text_of`) is set aside (`<area>/set_aside`:
  out of the backlog, marked with who could not read it), logged once and counted (`set_aside`),
  never failing the rows claimed with it.
- **How long it waits.** `wait_s`: the longest that a memory this worker claimed during its current
  or last full round over the graphs had waited, since it was written (`createdAt`) or since a backfill
  put it in the backlog (`queued`); 0 once nothing else waits. /health calls the worker behind when
  that passes its setting (docs/operations.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from graphsvc.services.index.keywords import graph_key
from graphsvc.services.ports import Row, Store

GRAPHS = 256  # graphs a claim visits at most: bounds its seeks, however many graphs exist
OTHERS = "other"  # the /metrics label of the graphs beyond the top ones
log = logging.getLogger("graphsvc")
Area = Literal["embed", "extract"]


class Backlog:
    """`area`: the statements' (embed/…, extract/…); `worker`: its name in the logs."""

    def __init__(
        self,
        store: Store,
        area: Area,
        worker: str,
        *,
        graphs: int = GRAPHS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store, self._area, self._worker = store, area, worker
        self._graphs, self._clock = graphs, clock
        self._after = ""  # where the next claim resumes
        self._round = 0.0  # the longest wait seen in the current round
        self._last_round: float | None = None
        self.set_aside = 0  # rows set aside by this process

    def wait_s(self) -> float | None:
        """The longest a memory claimed in the current or the last full round had waited; 0.0 once
        nothing else waits (None before the first claim)."""
        if self._last_round is None:
            return self._round or None
        return max(self._last_round, self._round)

    async def claim(self, limit: int, lease_ms: int, token: str) -> list[Row]:
        """Up to `limit` memories for this worker: round-robin over the graphs, from where the last claim
        stopped, on through the graphs until it finds some or has been round them all once."""
        resumed, wrapped = self._after, False
        while True:
            claimed, more = await self._claim(limit, lease_ms, token)
            if claimed or not more or (wrapped and self._after >= resumed):
                return claimed
            if self._after == "":
                if wrapped or not resumed:
                    return claimed
                wrapped = True

    async def _claim(self, limit: int, lease_ms: int, token: str) -> tuple[list[Row], bool]:
        [row] = await self._store.run(
            f"{self._area}/claim",
            after=self._after,
            graphs=self._graphs,
            limit=limit,
            lease_ms=lease_ms,
            token=token,
        )
        claimed: list[Row] = row["claimed"]
        now = self._clock()
        waits = [w for r in claimed if (w := waited(r, now)) is not None]
        self._round = max([self._round, *waits])
        self._after = row["next"]
        if not row["more"]:  # nothing else waits: caught up
            self._last_round, self._round = 0.0, 0.0
        elif self._after == "":  # a round ended
            self._last_round, self._round = self._round, 0.0
        return claimed, row["more"]

    async def put_aside(self, claimed: Sequence[Row], read: Sequence[object], token: str, by: str) -> int:
        """Take out of the backlog the `claimed` rows that `by` could not read: those whose reading in
        `read` (by position) is why not, a string; logged once."""
        unread = [(r, why) for r, why in zip(claimed, read, strict=True) if isinstance(why, str)]
        if not unread:
            return 0
        nodes = [r["node"] for r, _ in unread]
        [done] = await self._store.run(f"{self._area}/set_aside", nodes=nodes, token=token, by=by)
        count: int = done["setAside"]
        self.set_aside += count
        named = ", ".join(f"{r['graph']!r}/{r['id']!r} ({why})" for r, why in unread)
        log.warning(
            "%s: %s cannot read %d memories, set aside (they leave the backlog until another version "
            "reads them): %s",
            self._worker,
            by,
            count,
            named,
        )
        return count

    async def state(self, top: int = 0) -> State:
        """What waits now, read from Neo4j: across every graph, per graph (the `top` ones), and set aside."""
        [row] = await self._store.run(f"{self._area}/backlog", top=top)
        graphs = {graph_key(str(g["graph"])): g["waiting"] for g in row["top"]}
        others = row["backlog"] - sum(graphs.values())
        return State(row["backlog"], row["setAside"], graphs | ({OTHERS: others} if top else {}))


@dataclass(frozen=True)
class State:
    """A backlog as one read saw it (metrics.QueueGauges)."""

    waiting: int  # memories waiting, across every graph
    set_aside: int  # memories no worker can read (with this model or extractor, or an earlier one)
    graphs: dict[str, int]  # waiting per graph: the top ones by graph key, the rest under OTHERS


def text_of(row: Row) -> Any:
    """What a worker reads of a claimed row: its text, whatever Neo4j holds there (the worker's model
    raises on what is not one, and the row is set aside); None when it has none, or when its graph or
    id is not a string (what it read could not be stored)."""
    return row["text"] if isinstance(row["graph"], str) and isinstance(row["id"], str) else None


def waited(row: Row, now: float) -> float | None:
    """Seconds `row` waited: since a backfill queued it, else since it was written (None for a memory read
    before, queued again when an agent named what it mentions: nothing says since when)."""
    if isinstance(queued := row.get("queued"), int | float):
        return max(0.0, now - queued / 1000)
    if row.get("again"):
        return None
    written = written_at(row)
    return None if written is None else max(0.0, now - written)


def written_at(row: Row) -> float | None:
    """A claimed row's `createdAt` in unix seconds; None when it is not a timestamp."""
    created = row.get("createdAt")
    try:
        return datetime.fromisoformat(created).timestamp() if isinstance(created, str) else None
    except ValueError:
        return None
