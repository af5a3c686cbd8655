"""`Client`: graphsvc's REST API from synchronous Python, on httpx (see graphsvc/client/__init__.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
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


class Client:
    """graphsvc over REST: each method is one operation, taking and returning the contract's models.

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
        http: httpx.Client | None = None,
    ) -> None:
        """`url`: graphsvc's base URL; `token`: a `gsk_...` token (none on a development server);
        `graph`: sent as X-Graph-Id (a token's own graph needs none); `http`: your own httpx client
        (its base URL and headers are yours to set)."""
        self.url, self.timeout = url.rstrip("/"), timeout
        self._http = http or httpx.Client(
            base_url=self.url, headers=calls.headers(token, graph), timeout=timeout
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def send(self, call: Call[T]) -> T:
        """Send `call`, again after a failure that may pass (calls.retry_after), and return its result."""
        for attempt in count():
            try:
                response = self._http.request(call.method, call.path, json=call.body, params=call.params)
                outcome = calls.answered(call, response)
            except httpx.TransportError as e:
                outcome = calls.lost(call, self.url, self.timeout, e)
            if not isinstance(outcome, Failure):
                return outcome
            wait = calls.retry_after(call, outcome, attempt)
            if wait is None:
                raise outcome.error
            time.sleep(wait)
        raise AssertionError("unreachable")

    def remember(self, memory: RememberInput | str) -> RememberResult:
        """Store a memory. Safe to retry: the same content within 5 minutes answers the same memory."""
        return self.send(calls.remember(memory))

    def remember_batch(self, items: Sequence[RememberInput | Mapping[str, Any]]) -> RememberBatchResult:
        return self.send(calls.remember_batch(items))

    def recall(self, query: RecallInput | str) -> RecallResult:
        return self.send(calls.recall(query))

    def link(self, link: LinkInput | Mapping[str, Any]) -> LinkResult:
        return self.send(calls.link(link))

    def explore(self, start: ExploreInput | str | Sequence[str]) -> ExploreResult:
        return self.send(calls.explore(start))

    def forget(self, memory_id: str) -> ForgetResult:
        return self.send(calls.forget(memory_id))

    def anchor_now(self) -> AnchorResult:
        return self.send(calls.anchor_now())

    def verify(self, memory_id: str) -> VerifyResult:
        return self.send(calls.verify(memory_id))

    def proof(self, memory_id: str) -> ProofBundle:
        return self.send(calls.proof(memory_id))

    def store_event(self, event: StoreEventInput | Mapping[str, Any]) -> StoreEventResult:
        return self.send(calls.store_event(event))

    def retrieve_memories(self, query: RetrieveInput | str) -> RetrieveResult:
        return self.send(calls.retrieve_memories(query))

    def list_contexts(self, page: ListContextsInput | None = None) -> ListContextsResult:
        return self.send(calls.list_contexts(page))

    def contexts(self, first: ListContextsInput | None = None) -> Iterator[ContextInfo]:
        """Every context from `first`'s page on, page after page."""
        page: ListContextsInput | None = first or ListContextsInput()
        while page is not None:
            got = self.list_contexts(page)
            yield from got.contexts
            page = calls.next_contexts(page, got)

    def generate_insights(self, task: InsightsInput | str) -> InsightsResult:
        return self.send(calls.generate_insights(task))

    def list_memories(self, page: ListMemoriesInput | None = None) -> ListMemoriesResult:
        """One page of the graph's memories by their tags (newest first), with the total."""
        return self.send(calls.list_memories(page))

    def memories(self, first: ListMemoriesInput | None = None) -> Iterator[ListedMemory]:
        """Every memory `first` selects, from its offset on, page after page."""
        page: ListMemoriesInput | None = first or ListMemoriesInput()
        while page is not None:
            got = self.list_memories(page)
            yield from got.memories
            page = calls.next_page(page, got)

    def list_tags(self, page: ListTagsInput | None = None) -> ListTagsResult:
        """One page of the graph's tags (in order) with how many memories hold each, and the total."""
        return self.send(calls.list_tags(page))

    def tags(self, first: ListTagsInput | None = None) -> Iterator[TagCount]:
        """Every tag `first` selects, from its offset on, page after page."""
        page: ListTagsInput | None = first or ListTagsInput()
        while page is not None:
            got = self.list_tags(page)
            yield from got.tags
            page = calls.next_page(page, got)
