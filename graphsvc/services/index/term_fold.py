"""Folding each graph's pending term statistics into its counters, off the remember path.

A remember (or forget) transaction records what it changed in its graph's term statistics as one
TermDelta node (memory/commit) instead of updating a counter per term: for a round of 8 concurrent
remembers that was 176 counters to lock and update, a third of the round's time, while the graph's
write lock was held. A fold takes the deltas of the graphs written since the last one, adds them up
and updates each counter once (memory/take_deltas, then memory/count, in one transaction under those
graphs' GraphStats locks, so that folders on any replica take a delta once), shortly after the writes
that made them: FOLD_DELAY_S gathers several rounds into one fold, and one transaction folds every
graph they wrote (a transaction per graph fell behind writers spread over many graphs: 8 writers over
512 graphs left 3,334-3,431 of 4,000 deltas pending when they stopped, 402-499 folded together).
Recall reads the counters plus the pending deltas (graph/keyword_hits), so it never depends on when
a fold runs; a recall racing a fold's commit may read a delta both in the counters and pending, or in
neither (Neo4j reads committed data, statement by statement, not a snapshot), which moves one query's
scores slightly, once. Deltas a stopped process left are folded shortly after start-up, in the
background, and with the next fold of their graph.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from graphsvc.errors import GraphsvcError
from graphsvc.services.index.term_stats import Delta, folded
from graphsvc.services.ports import Reader, Store
from graphsvc.services.worker import Worker

FOLD_DELAY_S = 0.2  # a fold waits this long after a write, gathering the writes that follow
FOLD_LIMIT = 50  # deltas a fold transaction takes (one of a bulk import's batches holds thousands of terms)
log = logging.getLogger(__name__)


async def fold(store: Store, *graphs: str) -> int:
    """Fold the pending deltas of `graphs` into their counters, FOLD_LIMIT a transaction whatever their
    graphs (taken graph by graph, in order); returns how many there were."""
    names, total = sorted(set(graphs)), 0

    async def work(tx: Reader) -> list[Delta]:
        taken = await tx.run("memory/take_deltas", graphs=names, limit=FOLD_LIMIT)
        deltas = [Delta.of(row["delta"]) for row in taken]
        if deltas:
            await tx.run("memory/count", **folded(deltas))
        return deltas

    while names:
        deltas = await store.write_transaction(work)
        total += len(deltas)
        if len(deltas) < FOLD_LIMIT:
            break
        names = names[names.index(deltas[-1].graph) :]  # the graphs before it have none left
    return total


class TermFolder:
    """Folds the graphs it is told were written, FOLD_DELAY_S after the write, in a worker of its own
    (services/worker.py: it runs while graphs wait, retries with back-off while Neo4j is away)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._written: set[str] = set()
        self.worker = Worker("term_stats", self._fold_written, interval_s=None)

    def written(self, graphs: Iterable[str]) -> None:
        """Graphs whose writes just committed deltas."""
        self._written.update(graphs)
        if self._written:
            self.worker.wake()

    async def adopt_pending(self) -> None:
        """Fold every graph's pending deltas (at start-up: those a stopped process left) as if this
        process had just written them, in the background: a start-up does not wait for the locks of a
        fold that another process holds open (a paused replica held one start-up until Neo4j's deadline
        failed it), and recall counts the pending deltas meanwhile."""
        self.written(row["graph"] for row in await self._store.run("memory/pending_deltas"))

    async def backlog(self) -> int:
        """Deltas not folded yet, over every graph (a gauge of /metrics)."""
        return sum(row["deltas"] for row in await self._store.run("memory/pending_deltas"))

    async def close(self) -> None:
        """Fold what this process wrote now, rather than leave it to the next start-up (an outage only
        leaves it, logged)."""
        await self.worker.stop()
        graphs, self._written = sorted(self._written), set()
        try:
            await fold(self._store, *graphs)
        except GraphsvcError as e:  # Neo4j away: the deltas stay pending, the next start-up folds them
            log.warning("term statistics of %d graph(s) left to the next start-up: %s", len(graphs), e)
        except Exception:
            log.exception("folding term statistics failed; the next start-up folds them")

    async def _fold_written(self) -> int:
        """The worker's step: fold the graphs written, FOLD_DELAY_S after the first of their writes;
        returns how many graphs were written meanwhile. When the fold fails their deltas stay pending
        (recall counts them meanwhile) and the graphs wait for the next step."""
        if not self._written:
            return 0
        await asyncio.sleep(FOLD_DELAY_S)  # gathers the writes that follow into this fold
        graphs, self._written = sorted(self._written), set()
        try:
            await fold(self._store, *graphs)
        except BaseException:
            self._written.update(graphs)
            raise
        return len(self._written)
