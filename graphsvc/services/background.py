"""The steps of the anchoring workers (services/worker.py runs them; app.py composes them).

- `anchor_due`: automatic anchoring, every `auto_interval_s`, or as soon as `auto_pending` memories
  of a graph are pending (read every AUTO_POLL_S when no interval is set).
- `reconcile`: at start-up, finish the batches a stopped process left (a dead replica's lease lapses
  within its TTL), retried until it succeeds once.

The term folds (services/index/term_fold.py) and the embedding worker (EmbeddingService.embed_pending) are
steps of their own.
"""

from __future__ import annotations

import logging
from typing import Protocol

from graphsvc.config import ChainSettings
from graphsvc.domain.models import AnchorResult, GraphInput
from graphsvc.errors import Conflict
from graphsvc.services.ports import Reader

AUTO_POLL_S = 5.0  # with auto_pending alone: how often the pending memories are counted
log = logging.getLogger("graphsvc")


class Anchoring(Protocol):
    """services.anchoring.AnchoringService, as the workers use it."""

    async def anchor_now(self, req: GraphInput) -> AnchorResult: ...
    async def reconcile(self) -> list[str]: ...


def anchor_interval(chain: ChainSettings) -> float | None:
    """How often automatic anchoring looks for due graphs; None when it is off."""
    if not (chain.auto_interval_s or chain.auto_pending):
        return None
    return chain.auto_interval_s or AUTO_POLL_S


async def anchor_due(store: Reader, anchoring: Anchoring, chain: ChainSettings) -> int:
    """Anchor every graph whose pending memories are due (any, with an interval; else at least
    `auto_pending`); a graph whose lease another replica holds is left to it. Returns 0: the next
    round comes at the interval.

    Raises:
        GraphsvcError: the first failure, once every due graph was tried (Unavailable: Neo4j is away;
            ChainUnavailable: the chain is; the worker retries with back-off).
    """
    failures: list[Exception] = []
    for row in await store.run("anchor/pending_graphs"):
        if not (chain.auto_interval_s or row["pending"] >= chain.auto_pending):
            continue
        try:
            await anchoring.anchor_now(GraphInput(graph=row["graph"]))
        except Conflict as e:  # another replica holds the lease: it anchors them
            log.info("auto-anchoring of %s skipped: %s", row["graph"], e)
        except Exception as e:  # the other graphs are still tried
            failures.append(e)
    if failures:
        raise failures[0]
    return 0


async def reconcile(anchoring: Anchoring) -> int:
    """Finish the batches a stopped process left; returns 0 (done: the worker stops).

    Raises:
        GraphsvcError: Neo4j is away or another replica holds the lease (Conflict): retried.
    """
    finished = await anchoring.reconcile()
    if finished:
        log.warning("reconciled %d unfinished batch(es) at start-up", len(finished))
    return 0
