"""list_memories and list_tags: a graph's memories by their tags, and its tags, page by page."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from graphsvc.domain.hashing import format_timestamp
from graphsvc.domain.listing import (
    ListedMemory,
    ListMemoriesInput,
    ListMemoriesResult,
    ListTagsInput,
    ListTagsResult,
    TagCount,
)
from graphsvc.services.ports import Reader, Row


class ListingService:
    def __init__(self, store: Reader, clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self._store = store
        self._clock = clock

    async def memories(self, req: ListMemoriesInput) -> ListMemoriesResult:
        [row] = await self._store.run(
            "memory/list",
            graph=req.graph,
            tags=req.tags,
            under=req.under,
            ids=req.ids,
            current=req.current,
            now=format_timestamp(self._clock()),
            skip=req.offset,
            limit=req.limit,
        )
        return ListMemoriesResult(memories=[_listed(m) for m in row["page"]], total=row["total"])

    async def tags(self, req: ListTagsInput) -> ListTagsResult:
        [row] = await self._store.run(
            "memory/tags", graph=req.graph, under=req.under, skip=req.offset, limit=req.limit
        )
        return ListTagsResult(tags=[TagCount.model_validate(t) for t in row["page"]], total=row["total"])


def _listed(row: Row) -> ListedMemory:
    data = row["data"]
    return ListedMemory.model_validate({**row, "data": json.loads(data) if data else None})
