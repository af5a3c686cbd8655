"""The five graph tools behind one service: remember and forget (services/remember.py), recall
(services/recall/service.py, scored by services/recall/ranking.py), link and explore (services/graph_tools.py); and the
term statistics' folder they share (services/index/term_fold.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graphsvc.domain.listing import ListMemoriesInput, ListMemoriesResult, ListTagsInput, ListTagsResult
from graphsvc.domain.models import (
    ExploreInput,
    ExploreResult,
    ForgetResult,
    IdInput,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberInput,
    RememberReceipt,
    RememberResult,
)
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.services import graph_tools
from graphsvc.services.at_write import BUDGET_S, Freshness
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.index.term_fold import TermFolder
from graphsvc.services.listing import ListingService
from graphsvc.services.ports import Store
from graphsvc.services.recall.service import RecallService
from graphsvc.services.remember import RememberService
from graphsvc.services.worker import Traffic


class MemoryService:
    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        embeddings: EmbeddingService | None = None,
        *,
        deadline_s: float | None = None,
        recall: RecallConfig | None = None,
        extraction: ExtractionService | None = None,
        write_budget_s: float = BUDGET_S,
        freshness: Freshness | None = None,
    ):
        """`deadline_s`: how long a remember waits for its answer, counted from its arrival (None: as
        long as the store's own deadlines take); `recall`: recall's weights and knobs (the defaults
        unless given); `write_budget_s`: how long a remember waits for its memory's vector and links,
        from its arrival (services/at_write.py; 0: it leaves them to the workers); `freshness`: where
        writes report it (the metrics)."""
        self._store = store
        self.folder = TermFolder(store)
        self._writes = RememberService(
            store,
            self.folder,
            clock,
            embeddings,
            deadline_s,
            extraction,
            budget_s=write_budget_s,
            freshness=freshness,
        )
        self._recall = RecallService(store, clock, embeddings, recall)
        self._listing = ListingService(store, clock)
        # remember and recall are what the extraction worker makes room for (services/extraction.py)
        self._requests = extraction.requests if extraction is not None else Traffic()

    async def start(self) -> None:
        """A start-up step: fold the term statistics' deltas a stopped process left (in the background)."""
        await self.folder.adopt_pending()

    async def close(self) -> None:
        self._writes.at_write.close()
        await self.folder.close()

    async def remember(
        self,
        req: RememberInput,
        *,
        links: Sequence[tuple[str, str]] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> RememberResult:
        """RememberService.remember."""
        with self._requests:
            return await self._writes.remember(req, links=links, extra=extra)

    async def remember_many(
        self, reqs: Sequence[RememberInput], *, interactive: bool = False
    ) -> list[RememberReceipt]:
        """RememberService.remember_many."""
        with self._requests:
            return await self._writes.remember_many(reqs, interactive=interactive)

    async def forget(self, req: IdInput) -> ForgetResult:
        """RememberService.forget."""
        with self._requests:
            return await self._writes.forget(req)

    async def recall(self, req: RecallInput) -> RecallResult:
        """RecallService.recall."""
        with self._requests:
            return await self._recall.recall(req)

    async def link(self, req: LinkInput) -> LinkResult:
        return await graph_tools.link(self._store, req)

    async def explore(self, req: ExploreInput) -> ExploreResult:
        return await graph_tools.explore(self._store, req)

    async def list_memories(self, req: ListMemoriesInput) -> ListMemoriesResult:
        return await self._listing.memories(req)

    async def list_tags(self, req: ListTagsInput) -> ListTagsResult:
        return await self._listing.tags(req)
