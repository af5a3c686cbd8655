"""What the services need of the store: named statements, alone or in one write transaction.

graphsvc.store.graph.GraphStore (and its Transaction) satisfy these; the services never see the driver.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
Row = dict[str, Any]


class Reader(Protocol):
    async def run(self, name: str, **params: Any) -> list[Row]: ...


class Store(Reader, Protocol):
    async def write_transaction(self, work: Callable[[Any], Awaitable[T]], *, bounded: bool = True) -> T: ...
