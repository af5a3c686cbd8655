"""Each REST operation as a request description (`Call`), built and checked against the contract's own
models before anything is sent, and the retry policy: shared by `Client` and `AsyncClient`, which only
send. Nothing here does I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from graphsvc.client.errors import (
    GraphsvcError,
    NotConfigured,
    ServerError,
    Timeout,
    Unavailable,
    Unreachable,
    from_answer,
    unsent,
)
from graphsvc.domain.listing import ListMemoriesInput, ListMemoriesResult, ListTagsInput, ListTagsResult
from graphsvc.domain.locus import (
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
    IdInput,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberBatchInput,
    RememberBatchResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.domain.proof import ProofBundle
from graphsvc.errors import invalid_input

T = TypeVar("T", bound=BaseModel)
M = TypeVar("M", bound=BaseModel)
# "deduped": the call is safe to send again whatever became of the first (remember's content key, an
# idempotent write, a read); "unsent": only when the first never reached the server (forget: a retry
# of one that landed would answer not_found).
Retry = Literal["deduped", "unsent"]
RETRIES = 2
BACKOFF_S = 0.25
MAX_WAIT_S = 5.0


@dataclass(frozen=True)
class Call(Generic[T]):
    name: str  # the operation id (its name in messages)
    method: Literal["GET", "POST", "DELETE"]
    path: str
    output: type[T]
    body: Any = None
    retry: Retry = "deduped"
    params: Mapping[str, str] = field(default_factory=dict[str, str])


def checked(model: type[M], given: M | Mapping[str, Any]) -> M:
    """`given` as `model`: an instance as it is, a mapping validated.

    Raises:
        InvalidInput: the mapping breaks the contract (nothing is sent).
    """
    if isinstance(given, model):
        return given
    try:
        return model.model_validate(given)
    except ValidationError as e:
        raise invalid_input(e.errors()) from e


def body(model: BaseModel) -> dict[str, Any]:
    """What was given of `model`, as the REST API reads it (aliases; the graph only when named)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _memory_path(memory_id: str, suffix: str = "") -> str:
    checked(IdInput, {"id": memory_id})
    return f"/v1/memories/{quote(memory_id, safe='')}{suffix}"


def remember(memory: RememberInput | str) -> Call[RememberResult]:
    given = checked(RememberInput, {"text": memory} if isinstance(memory, str) else memory)
    return Call("remember", "POST", "/v1/memories", RememberResult, body(given))


def remember_batch(items: Sequence[RememberInput | Mapping[str, Any]]) -> Call[RememberBatchResult]:
    rows = [body(item) if isinstance(item, BaseModel) else dict(item) for item in items]
    checked(RememberBatchInput, {"items": rows})
    return Call("remember_batch", "POST", "/v1/memories/batch", RememberBatchResult, {"items": rows})


def recall(query: RecallInput | str) -> Call[RecallResult]:
    given = checked(RecallInput, {"query": query} if isinstance(query, str) else query)
    return Call("recall", "POST", "/v1/recall", RecallResult, body(given))


def link(given: LinkInput | Mapping[str, Any]) -> Call[LinkResult]:
    return Call("link", "POST", "/v1/links", LinkResult, body(checked(LinkInput, given)))


def explore(start: ExploreInput | str | Sequence[str]) -> Call[ExploreResult]:
    given = checked(ExploreInput, start if isinstance(start, ExploreInput) else {"start": start})
    return Call("explore", "POST", "/v1/explore", ExploreResult, body(given))


def forget(memory_id: str) -> Call[ForgetResult]:
    return Call("forget", "DELETE", _memory_path(memory_id), ForgetResult, retry="unsent")


def anchor_now() -> Call[AnchorResult]:
    return Call("anchor_now", "POST", "/v1/anchor", AnchorResult)


def verify(memory_id: str) -> Call[VerifyResult]:
    return Call("verify_memory", "GET", _memory_path(memory_id, "/verify"), VerifyResult)


def proof(memory_id: str) -> Call[ProofBundle]:
    return Call("proof_bundle", "GET", _memory_path(memory_id, "/proof"), ProofBundle)


def store_event(event: StoreEventInput | Mapping[str, Any]) -> Call[StoreEventResult]:
    given = body(checked(StoreEventInput, event))
    return Call("store_event", "POST", "/v1/locus/store_event", StoreEventResult, given)


def retrieve_memories(query: RetrieveInput | str) -> Call[RetrieveResult]:
    given = checked(RetrieveInput, {"query": query} if isinstance(query, str) else query)
    return Call("retrieve_memories", "POST", "/v1/locus/retrieve_memories", RetrieveResult, body(given))


def list_contexts(page: ListContextsInput | None = None) -> Call[ListContextsResult]:
    given = body(page) if page is not None else {}
    return Call("list_contexts", "POST", "/v1/locus/list_contexts", ListContextsResult, given)


def next_contexts(asked: ListContextsInput, got: ListContextsResult) -> ListContextsInput | None:
    """The page after `got`, or None when it was the last."""
    if not got.contexts or (asked.page + 1) * asked.limit >= got.total:
        return None
    return asked.model_copy(update={"page": asked.page + 1})


def list_memories(page: ListMemoriesInput | None = None) -> Call[ListMemoriesResult]:
    given = body(page) if page is not None else {}
    return Call("list_memories", "POST", "/v1/memories/list", ListMemoriesResult, given)


def list_tags(page: ListTagsInput | None = None) -> Call[ListTagsResult]:
    given = body(page) if page is not None else {}
    return Call("list_tags", "POST", "/v1/tags/list", ListTagsResult, given)


Paged = TypeVar("Paged", ListMemoriesInput, ListTagsInput)


def next_page(asked: Paged, got: ListMemoriesResult | ListTagsResult) -> Paged | None:
    """The page after `got` (by offset), or None when it was the last."""
    shown = len(got.memories) if isinstance(got, ListMemoriesResult) else len(got.tags)
    if not shown or asked.offset + shown >= got.total:
        return None
    return asked.model_copy(update={"offset": asked.offset + shown})


def generate_insights(task: InsightsInput | str) -> Call[InsightsResult]:
    given = checked(InsightsInput, {"task": task} if isinstance(task, str) else task)
    return Call("generate_insights", "POST", "/v1/locus/generate_insights", InsightsResult, body(given))


@dataclass(frozen=True)
class Failure:
    """A call that failed: the error to raise, and the server's Retry-After (seconds) if it sent one."""

    error: GraphsvcError
    wait: float | None = None


def retry_after(call: Call[Any], failure: Failure, attempt: int) -> float | None:
    """Seconds to wait before sending `call` again after `failure` on attempt `attempt` (0-based), or
    None not to: an error that may pass (no connection, no answer in time, 503 but not_configured), at
    most RETRIES times, waiting the server's Retry-After (at most MAX_WAIT_S) or an exponential
    backoff. A call that is not deduped goes again only if the first never reached the server."""
    error = failure.error
    if attempt >= RETRIES or isinstance(error, NotConfigured) or not isinstance(error, Unavailable):
        return None
    if call.retry == "unsent" and not unsent(error):
        return None
    return min(failure.wait if failure.wait is not None else BACKOFF_S * 2**attempt, MAX_WAIT_S)


def headers(token: str | None, graph: str | None) -> dict[str, str]:
    """Every request's headers: the bearer token, and X-Graph-Id when a graph is named."""
    sent = {"Accept": "application/json", "User-Agent": "graphsvc-client"}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if graph:
        sent["X-Graph-Id"] = graph
    return sent


def answered(call: Call[T], response: httpx.Response) -> T | Failure:
    """The result of an answer, or why it failed: an error answer (its class by the envelope's code),
    or an answer that is not JSON or does not fit the contract."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not response.is_success:
        wait = response.headers.get("retry-after", "")
        return Failure(from_answer(response.status_code, payload), float(wait) if wait.isdigit() else None)
    if payload is None:
        return Failure(ServerError(f"{call.name}: HTTP {response.status_code} with a body that is not JSON"))
    try:
        return call.output.model_validate(payload)
    except ValidationError as e:
        return Failure(
            ServerError(f"{call.name}: the answer does not fit the contract ({e.error_count()} errors)")
        )


def lost(call: Call[Any], url: str, timeout: float, e: httpx.TransportError) -> Failure:
    """A transport failure, said in the caller's words (the httpx error as its cause)."""
    where = f"graphsvc at {url}"
    error: GraphsvcError
    if isinstance(e, httpx.ConnectTimeout | httpx.PoolTimeout):
        error = Timeout(f"{call.name}: no connection to {where} within {timeout:g} s", sent=False)
    elif isinstance(e, httpx.TimeoutException):
        error = Timeout(f"{call.name}: no answer from {where} within {timeout:g} s", sent=True)
    elif isinstance(e, httpx.ConnectError):
        error = Unreachable(f"{call.name}: cannot connect to {where} ({e})")
    else:
        error = Unavailable(
            f"{call.name}: the connection to {where} failed before an answer ({type(e).__name__})"
        )
    error.__cause__ = e
    return Failure(error)
