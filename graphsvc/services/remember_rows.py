"""What remember's and forget's statements read (cypher/memory/), as typed records."""

from __future__ import annotations

from dataclasses import dataclass

from graphsvc.services.ports import Row


@dataclass(frozen=True)
class Neighbour:
    """A memory of the remember order whose window a write can change."""

    id: str
    text: str
    window: str | None

    @classmethod
    def from_row(cls, row: Row) -> Neighbour:
        return cls(row["id"], row["text"], row["window"])


@dataclass(frozen=True)
class Known:
    """A memory holding a content key a write brings (a duplicate's), and whether its vector and its
    links are written."""

    key: str
    id: str
    hash: str
    embedded: bool = False
    extracted: bool = False

    @classmethod
    def from_row(cls, row: Row) -> Known:
        return cls(row["key"], row["id"], row["hash"], row["embedded"], row["extracted"])


@dataclass(frozen=True)
class Begun:
    """memory/begin's row for one graph: its last position, the memories up to it whose windows the
    new ones extend (oldest first), and its memories holding the write's content keys."""

    graph: str
    seq: int
    recent: list[Neighbour]
    known: list[Known]

    @classmethod
    def from_row(cls, row: Row) -> Begun:
        return cls(
            row["graph"],
            row["seq"],
            [Neighbour.from_row(r) for r in row["recent"]],
            [Known.from_row(k) for k in row["known"]],
        )


@dataclass(frozen=True)
class Around:
    """memory/around's row: the memories before and after a position (each nearest last / first)."""

    before: list[Neighbour]
    after: list[Neighbour]

    @classmethod
    def from_row(cls, row: Row) -> Around:
        return cls(
            [Neighbour.from_row(r) for r in row["before"]], [Neighbour.from_row(r) for r in row["after"]]
        )


@dataclass(frozen=True)
class Gone:
    """memory/forget's row: what the forgotten memory held for the windows and the term statistics."""

    seq: int | None
    text: str
    window: str | None
    tags: list[str]

    @classmethod
    def from_row(cls, row: Row) -> Gone:
        return cls(row["seq"], row["text"], row["window"], row["tags"] or [])
