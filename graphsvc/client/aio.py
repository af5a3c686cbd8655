"""`AsyncClient`: graphsvc's REST API from asyncio, on httpx (see graphsvc/client/__init__.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from itertools import count
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from graphsvc.client import calls
from graphsvc.client.calls import Call, Failure
from graphsvc.domain.listing import (
    ListedMemory,
    ListMemoriesInput,
    ListMemoriesResult,
    ListTagsInput,
    ListTagsResult,
    TagCount,
)
from graphsvc.domain.locus import (
    ContextInfo,
    InsightsInput,
    InsightsResult,
    ListContextsInput,
    ListContextsResult,
    RetrieveInput,
    RetrieveResult,
    StoreEventInput,
    StoreEventResult,
)
from graphsvc.domain.models import (
    AnchorResult,
    ExploreInput,
    ExploreResult,
    ForgetResult,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberBatchResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.domain.proof import ProofBundle

T = TypeVar("T", bound=BaseModel)
TIMEOUT_S = 15.0  # the server answers within its 10 s deadline


class AsyncClient:
    """graphsvc over REST, for asyncio: each method is one operation, taking and returning the contract's models.

    Raises (every method): the error tree of graphsvc.client.errors — the server's code as its class,
    with its message; `Timeout` when no answer came within `timeout` seconds; `InvalidInput` before
    anything is sent when the input breaks the contract.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        graph: str | None = None,
        timeout: float = TIMEOUT_S,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """`url`: graphsvc's base URL; `token`: a `gsk_...` token (none on a development server);
        `graph`: sent as X-Graph-Id (a token's own graph needs none); `http`: your own httpx client
        (its base URL and headers are yours to set)."""
        self.url, self.timeout = url.rstrip("/"), timeout
        self._http = http or httpx.AsyncClient(
            base_url=self.url, headers=calls.headers(token, graph), timeout=timeout
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call[T]) -> T:
        """Send `call`, again after a failure that may pass (calls.retry_after), and return its result."""
        for attempt in count():
            try:
                response = await self._http.request(
                    call.method, call.path, json=call.body, params=call.params
                )
                outcome = calls.answered(call, response)
            except httpx.TransportError as e:
                outcome = calls.lost(call, self.url, self.timeout, e)
            if not isinstance(outcome, Failure):
                return outcome
            wait = calls.retry_after(call, outcome, attempt)
            if wait is None:
                raise outcome.error
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def remember(self, memory: RememberInput | str) -> RememberResult:
        """Store a memory. Safe to retry: the same content within 5 minutes answers the same memory."""
        return await self.send(calls.remember(memory))

    async def remember_batch(self, items: Sequence[RememberInput | Mapping[str, Any]]) -> RememberBatchResult:
        return await self.send(calls.remember_batch(items))

    async def recall(self, query: RecallInput | str) -> RecallResult:
        return await self.send(calls.recall(query))

    async def link(self, link: LinkInput | Mapping[str, Any]) -> LinkResult:
        return await self.send(calls.link(link))

    async def explore(self, start: ExploreInput | str | Sequence[str]) -> ExploreResult:
        return await self.send(calls.explore(start))

    async def forget(self, memory_id: str) -> ForgetResult:
        return await self.send(calls.forget(memory_id))

    async def anchor_now(self) -> AnchorResult:
        return await self.send(calls.anchor_now())

    async def verify(self, memory_id: str) -> VerifyResult:
        return await self.send(calls.verify(memory_id))

    async def proof(self, memory_id: str) -> ProofBundle:
        return await self.send(calls.proof(memory_id))

    async def store_event(self, event: StoreEventInput | Mapping[str, Any]) -> StoreEventResult:
        return await self.send(calls.store_event(event))

    async def retrieve_memories(self, query: RetrieveInput | str) -> RetrieveResult:
        return await self.send(calls.retrieve_memories(query))

    async def list_contexts(self, page: ListContextsInput | None = None) -> ListContextsResult:
        return await self.send(calls.list_contexts(page))

    async def contexts(self, first: ListContextsInput | None = None) -> AsyncIterator[ContextInfo]:
        """Every context from `first`'s page on, page after page."""
        page: ListContextsInput | None = first or ListContextsInput()
        while page is not None:
            got = await self.list_contexts(page)
            for context in got.contexts:
                yield context
            page = calls.next_contexts(page, got)

    async def generate_insights(self, task: InsightsInput | str) -> InsightsResult:
        return await self.send(calls.generate_insights(task))

    async def list_memories(self, page: ListMemoriesInput | None = None) -> ListMemoriesResult:
        """One page of the graph's memories by their tags (newest first), with the total."""
        return await self.send(calls.list_memories(page))

    async def memories(self, first: ListMemoriesInput | None = None) -> AsyncIterator[ListedMemory]:
        """Every memory `first` selects, from its offset on, page after page."""
        page: ListMemoriesInput | None = first or ListMemoriesInput()
        while page is not None:
            got = await self.list_memories(page)
            for one in got.memories:
                yield one
            page = calls.next_page(page, got)

    async def list_tags(self, page: ListTagsInput | None = None) -> ListTagsResult:
        """One page of the graph's tags (in order) with how many memories hold each, and the total."""
        return await self.send(calls.list_tags(page))

    async def tags(self, first: ListTagsInput | None = None) -> AsyncIterator[TagCount]:
        """Every tag `first` selects, from its offset on, page after page."""
        page: ListTagsInput | None = first or ListTagsInput()
        while page is not None:
            got = await self.list_tags(page)
            for one in got.tags:
                yield one
            page = calls.next_page(page, got)
