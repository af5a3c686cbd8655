"""Who wrote a memory: the id of the token it was written with (never its secret) and, over MCP, the
client that wrote it (`clientInfo` name/version, as the SDK gives it: from the initialize handshake on
a session, from each request's envelope on the 2026-07-28 protocol; none on a stateless handshake-era
call). Kept as the Memory's properties `writerToken` and `writerClient`: visible in Neo4j Browser,
exported and imported with the memory like its other stored properties.

They are not in the hashed envelope: a token id is the server's bookkeeping, not the author's content.
Hashed, the same text would hash differently per token, a token's rotation would change what the
chain proves, and a memory moved to another server (whose tokens differ) would carry an id that
means nothing there. They say which credential the server accepted, not who held it.

The edges bind the writer for the request they serve (`writing_as`); the remember service reads it
(`properties`) as it drafts each memory, in the caller's task, and recall reads its token
(`caller_token`) to walk only the links that token wrote (`links: mine`).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

TOKEN, CLIENT = "writerToken", "writerClient"
CLIENT_WIDTH = 200  # a client names itself: kept short


@dataclass(frozen=True)
class Writer:
    token: str | None = None  # the token's id
    client: str | None = None  # "name/version" of the MCP client


_current: ContextVar[Writer | None] = ContextVar("graphsvc_writer", default=None)


def client_name(name: str | None, version: str | None) -> str | None:
    """`name/version` (or the name alone) as a client declared it, cut to CLIENT_WIDTH."""
    if not name:
        return None
    return (f"{name}/{version}" if version else name)[:CLIENT_WIDTH]


@contextmanager
def writing_as(writer: Writer) -> Generator[None, None, None]:
    """`writer` writes whatever is remembered while the block runs."""
    token = _current.set(writer)
    try:
        yield
    finally:
        _current.reset(token)


def caller_token() -> str | None:
    """The id of the token the current request came with (None: none, or auth is off); recall's
    `links: mine` keeps the edges it wrote."""
    writer = _current.get()
    return writer.token if writer else None


def properties() -> dict[str, str]:
    """The provenance properties of a memory written now (none when no writer is known)."""
    writer = _current.get()
    if writer is None:
        return {}
    found = {TOKEN: writer.token, CLIENT: writer.client}
    return {key: value for key, value in found.items() if value}
