"""LangGraph's long-term memory (`BaseStore`) on graphsvc: `pip install 'graphsvc[langgraph]'`.

    store = GraphsvcStore(url="http://127.0.0.1:8080", token="gsk_...")   # or GRAPHSVC_URL / _TOKEN
    store.put(("users", "alice"), "prefs", {"drink": "tea"})
    store.search(("users",), query="what does alice drink?")

How items live in graphsvc (every one in the token's graph, or `graph=`):
- a namespace is a tag path beneath `tag_root`: ("users", "alice") is the tag `store/users/alice`; an
  item is the current memory holding that tag and `key:<key>`;
- its text is the value's indexed fields (the `index` of the store or of the put; by default the
  whole value as JSON, so the value itself is hashed and anchored); with fields named, the value is
  kept beside the text as the memory's data (not hashed);
- `put` remembers; on a key that holds an item it supersedes the item's memory, so the history of a
  key stays in the graph, each version hashed; `delete` forgets every version of the key (two puts
  racing on one key may leave two current versions; get and search show the newest, and the key's
  next put supersedes both: docs/python.md);
- `search(query=...)` is graphsvc's recall (keywords, meaning, time) over its 50 best memories of the
  graph, kept to the namespace; without a query, the namespace's items newest first; `filter` matches
  the value's fields (equality, or $eq $ne $gt $gte $lt $lte);
- `list_namespaces` pages through the graph's tags beneath `tag_root`.
Namespace labels are refused (InvalidNamespaceError, nothing written) when empty, holding `.`, `/` or
a control character, or when the tag would exceed 64 characters; keys likewise (InvalidInput) beyond
60 characters; a value that is not a JSON object is refused (InvalidInput). TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
from collections.abc import Callable, Coroutine, Iterable, Mapping
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path
from pydantic import BaseModel

from graphsvc.client import AsyncClient, Client, calls
from graphsvc.client.calls import Call
from graphsvc.client.errors import InvalidInput, NotConfigured
from graphsvc.domain.listing import PAGE_MAX, ListedMemory, ListMemoriesInput, ListTagsInput
from graphsvc.domain.models import CONTROL, RecallInput, RememberInput

T = TypeVar("T", bound=BaseModel)
TAG_MAX = 64
KEY = "key:"
CANDIDATES = 50  # recall's largest page: what a search with a query ranks before the namespace filter
READS = (GetOp, SearchOp, ListNamespacesOp)


class _Sender(Protocol):
    async def send(self, call: Call[T]) -> T: ...


class _Blocking:
    """The synchronous client behind the same awaitable `send` the operations use: nothing in it
    suspends, so `_complete` runs an operation to its end without an event loop."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def send(self, call: Call[T]) -> T:
        return self._client.send(call)


def _complete(work: Coroutine[Any, Any, Any]) -> Any:
    try:
        work.send(None)
    except StopIteration as done:
        return done.value
    work.close()
    raise RuntimeError("a synchronous store operation waited on asyncio")


class GraphsvcStore(BaseStore):
    """LangGraph's `BaseStore` on a graphsvc server (see the module docstring)."""

    supports_ttl = False

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        graph: str | None = None,
        index: IndexConfig | None = None,
        tag_root: str = "store",
        timeout: float = 15.0,
    ) -> None:
        """`url` and `token` default to GRAPHSVC_URL and GRAPHSVC_TOKEN; `graph` is sent as X-Graph-Id
        (a token's own graph needs none); `index["fields"]`: the value's fields that make a memory's
        text (LangGraph's paths; by default the whole value); the embedding is graphsvc's own.

        Raises:
            NotConfigured: no URL given nor in GRAPHSVC_URL.
        """
        url = url or os.environ.get("GRAPHSVC_URL")
        if not url:
            raise NotConfigured("no graphsvc URL: pass url= or set GRAPHSVC_URL")
        token = token or os.environ.get("GRAPHSVC_TOKEN")
        self._options = {"token": token, "graph": graph, "timeout": timeout}
        self._url = url
        self._sync = Client(url, token, graph=graph, timeout=timeout)
        self._async: AsyncClient | None = None
        self._fields = (index or {}).get("fields")
        self._root = _label_checked(tag_root)

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.close()

    def _client(self) -> AsyncClient:
        # Made in the event loop that first needs it (an httpx.AsyncClient belongs to one loop).
        if self._async is None:
            self._async = AsyncClient(self._url, **self._options)  # type: ignore[arg-type]
        return self._async

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        sender = _Blocking(self._sync)
        return [_complete(self._one(sender, op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The ops in order; a run of reads side by side."""
        sender, results, reads = self._client(), list[Result](), list[Op]()
        for op in [*ops, None]:
            if isinstance(op, READS):
                reads.append(op)
                continue
            results += await asyncio.gather(*(self._one(sender, read) for read in reads))
            reads = []
            if op is not None:
                results.append(await self._one(sender, op))
        return results

    async def _one(self, sender: _Sender, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(sender, op)
        if isinstance(op, SearchOp):
            return await self._search(sender, op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(sender, op)
        return await self._put(sender, op)

    # ---- the operations --------------------------------------------------------------------------

    async def _get(self, sender: _Sender, op: GetOp) -> Item | None:
        tags = [self._tag(op.namespace), _key_tag(op.key)]
        versions = await sender.send(
            calls.list_memories(ListMemoriesInput(tags=tags, current=False, limit=1))
        )
        if not versions.memories:
            return None
        newest = first = versions.memories[0]
        if versions.total > 1:  # when the key was first put: its oldest version
            oldest = ListMemoriesInput(tags=tags, current=False, offset=versions.total - 1, limit=1)
            first = next(iter((await sender.send(calls.list_memories(oldest))).memories), newest)
        return self._item(newest, created=first.createdAt)

    async def _put(self, sender: _Sender, op: PutOp) -> None:
        tags = [self._tag(op.namespace), _key_tag(op.key)]
        current = await _all(sender, ListMemoriesInput(tags=tags, current=op.value is not None))
        if op.value is None:
            for memory in current:
                await sender.send(calls.forget(memory.id))
            return
        text, data = self._text(op.key, op.value, op.index)
        remember = calls.checked(
            RememberInput,
            {"text": text, "tags": tags, "supersedes": [m.id for m in current], "data": data},
        )
        await sender.send(calls.remember(remember))

    async def _search(self, sender: _Sender, op: SearchOp) -> list[SearchItem]:
        under = self._tag(op.namespace_prefix) if op.namespace_prefix else self._root
        wanted = op.offset + op.limit
        if op.query and op.query.strip():
            found = await self._recalled(sender, op.query, under)
        else:
            found = [(m, None) for m in await _all(sender, ListMemoriesInput(under=under))]
        matching = [
            self._item(m, score=score)
            for m, score in _newest_per_key(found)
            if self._namespace(m) is not None and _matches(self._value(m), op.filter or {})
        ]
        return cast(list[SearchItem], matching[op.offset : wanted])

    async def _recalled(self, sender: _Sender, query: str, under: str) -> list[tuple[ListedMemory, float]]:
        ask = calls.checked(RecallInput, {"query": query, "hops": 0, "limit": CANDIDATES})
        hits = [
            m
            for m in (await sender.send(calls.recall(ask))).memories
            if any(_beneath(t, under) for t in m.tags)
        ]
        if not hits:
            return []
        listed = await sender.send(
            calls.list_memories(ListMemoriesInput(ids=[m.id for m in hits], limit=len(hits)))
        )
        by_id = {m.id: m for m in listed.memories}
        return [(by_id[m.id], m.score) for m in hits if m.id in by_id]

    async def _namespaces(self, sender: _Sender, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        page: ListTagsInput | None = ListTagsInput(under=self._root, limit=PAGE_MAX)
        while page is not None:
            got = await sender.send(calls.list_tags(page))
            found |= {ns for t in got.tags if (ns := self._path(t.tag)) is not None}
            page = calls.next_page(page, got)
        chosen = [ns for ns in found if all(_does_match(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # ---- items and memories ----------------------------------------------------------------------

    def _tag(self, namespace: tuple[str, ...]) -> str:
        for label in namespace:
            _label_checked(label)
        if not namespace:
            raise InvalidNamespaceError("a namespace has at least one label")
        tag = "/".join((self._root, *namespace))
        if len(tag) > TAG_MAX:
            raise InvalidNamespaceError(
                f"namespace {namespace} is longer than a tag holds ({TAG_MAX} characters)"
            )
        return tag

    def _path(self, tag: str) -> tuple[str, ...] | None:
        return tuple(tag.split("/")[1:]) if tag.startswith(self._root + "/") else None

    def _namespace(self, memory: ListedMemory) -> tuple[str, ...] | None:
        return next((ns for tag in memory.tags if (ns := self._path(tag)) is not None), None)

    def _text(
        self, key: str, value: Mapping[str, Any], index: Literal[False] | list[str] | None
    ) -> tuple[str, Any]:
        """The memory's text and data for a value: the whole value as JSON (its data: none, the text
        is the value), or the texts of the indexed fields (the value as data)."""
        try:
            whole = json.dumps(dict(value), sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidInput(f"the value of {key!r} is not a JSON object: {e}", ["value"]) from e
        fields = self._fields if index is None else index
        if fields is None or fields == ["$"]:
            return whole, None
        texts = [t for f in fields or () for t in get_text_at_path(dict(value), f)]  # False: none
        return "\n".join(texts) if any(t.strip() for t in texts) else key, json.loads(whole)

    def _value(self, memory: ListedMemory) -> dict[str, Any]:
        if memory.data is not None:
            return memory.data
        try:
            parsed = json.loads(memory.text)
        except ValueError:
            parsed = None
        return cast(dict[str, Any], parsed) if isinstance(parsed, dict) else {"text": memory.text}

    def _item(self, memory: ListedMemory, *, created: str | None = None, score: float | None = None) -> Any:
        key = next((t[len(KEY) :] for t in memory.tags if t.startswith(KEY)), memory.id)
        updated = datetime.fromisoformat(memory.createdAt)
        when = datetime.fromisoformat(created) if created else updated
        namespace = self._namespace(memory) or ()
        if created is not None:
            return Item(
                value=self._value(memory), key=key, namespace=namespace, created_at=when, updated_at=updated
            )
        return SearchItem(namespace, key, self._value(memory), when, updated, score)


async def _all(sender: _Sender, first: ListMemoriesInput) -> list[ListedMemory]:
    """Every memory `first` selects, page after page."""
    found: list[ListedMemory] = []
    page: ListMemoriesInput | None = first.model_copy(update={"limit": PAGE_MAX})
    while page is not None:
        got = await sender.send(calls.list_memories(page))
        found += got.memories
        page = calls.next_page(page, got)
    return found


def _newest_per_key(
    found: Iterable[tuple[ListedMemory, float | None]],
) -> list[tuple[ListedMemory, float | None]]:
    """One item per key, in the place of its first: two puts racing on one key leave two current
    versions, and the newest is the item (as `get` reads it)."""
    kept: dict[tuple[str, ...], tuple[ListedMemory, float | None]] = {}
    for memory, score in found:
        address = tuple(sorted(memory.tags))  # its namespace tag and its key tag, with any others
        first = kept.setdefault(address, (memory, score))
        if datetime.fromisoformat(memory.createdAt) > datetime.fromisoformat(first[0].createdAt):
            kept[address] = (memory, first[1])
    return list(kept.values())


def _label_checked(label: str) -> str:
    if not isinstance(label, str) or not label:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidNamespaceError(f"namespace labels are non-empty strings, not {label!r}")
    if "." in label or "/" in label or CONTROL.search(label) or not label.strip():
        raise InvalidNamespaceError(
            f"namespace label {label!r} holds '.', '/', a control character or only spaces"
        )
    return label


def _key_tag(key: str) -> str:
    if not key or not key.strip() or CONTROL.search(key) or len(KEY + key) > TAG_MAX:
        raise InvalidInput(
            f"a key is 1 to {TAG_MAX - len(KEY)} characters, not blank, without control characters", ["key"]
        )
    return KEY + key


def _beneath(tag: str, under: str) -> bool:
    return tag == under or tag.startswith(under + "/")


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """Whether a value's fields meet `filter` (dotted names reach into nested objects)."""
    return all(_meets(_field(value, name), wanted) for name, wanted in filter.items())


def _field(value: Any, name: str) -> Any:
    for part in name.split("."):
        value = cast(Mapping[str, Any], value).get(part, _MISSING) if isinstance(value, Mapping) else _MISSING
    return value


_MISSING = object()


def _meets(found: Any, wanted: Any) -> bool:
    conditions: Mapping[str, Any] = cast(Mapping[str, Any], wanted) if isinstance(wanted, Mapping) else {}
    if conditions and all(str(k).startswith("$") for k in conditions):
        return all(_compared(op, found, against) for op, against in conditions.items())
    return found == wanted


def _compared(op: str, found: Any, against: Any) -> bool:
    if op not in OPERATORS:
        raise InvalidInput(f"filter operator {op!r} is not one of {', '.join(OPERATORS)}", ["filter"])
    if found is _MISSING:
        return op == "$ne"
    try:
        return bool(OPERATORS[op](found, against))
    except TypeError:
        return False


__all__ = ["GraphsvcStore"]
