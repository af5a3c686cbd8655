"""Taking an import back: what the file wrote into its graph removed, page by page, when a write fails for
a reason that will not pass (Neo4j refused a statement, or did not write what a page held). An outage
(Neo4j unreachable, the disk, the process stopped) is not taken back: run the import again to resume it.

What goes: the file's memories (at the file's positions: never one an agent remembered into the graph
during the import, which takes a position after them) with their edges, memberships and term statistics;
the tombstones of the file's memories; the file's entities no remaining memory reaches, and the entities
extraction made for what was removed; the file's batches. Then the graph's state: no longer importing,
no tag; with nothing left it is an empty graph's again, else the file's positions are recorded as
forgotten before this server anchored them (every position of its remember order stays accounted for).
Kept: every memory remembered during the import (its window may quote the file's texts it followed),
and the entities it reaches, with the relations between them. Each step is idempotent: an undo cut short
is taken up again by running the import again (it resumes, fails at the same page, and undoes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO

from graphsvc.exports.format import LINE, EntityLine, Header, MemoryLine, TombstoneLine
from graphsvc.exports.lines import bounded_lines, parse
from graphsvc.services.index.term_stats import as_delta, fields_of, tally
from graphsvc.services.ports import Reader, Store

PAGE = 500


def _ids(spool: IO[bytes], kinds: tuple[type, ...]) -> Iterator[str]:
    """The ids of the spooled file's records of `kinds` (memories, tombstones, entities)."""
    spool.seek(0)
    for raw in bounded_lines(spool):
        record = LINE.validate_python(parse(raw))
        if isinstance(record, (MemoryLine, TombstoneLine, EntityLine)) and isinstance(record, kinds):
            yield record.id


def _pages(ids: Iterable[str], size: int = PAGE) -> Iterator[list[str]]:
    page: list[str] = []
    for i in ids:
        page.append(i)
        if len(page) >= size:
            yield page
            page = []
    if page:
        yield page


async def undo(store: Store, header: Header, digest: str, spool: IO[bytes], roots: list[str]) -> bool:
    """Take back the import of the spooled, checked file into `header.graph`; returns whether anything
    an agent wrote during it was kept.

    Raises:
        Unavailable: Neo4j could not be reached (run the import again: it resumes, fails and undoes).
    """
    graph = header.graph

    async def memories(tx: Reader, page: list[str]) -> None:
        [row] = await tx.run("import/undo_memories", graph=graph, ids=page, lastSeq=header.lastSeq)
        gone = [c for m in row["removed"] for c in fields_of(m["text"], m["window"], m["tags"] or [], -1)]
        if gone:
            await tx.run("import/term_delta", delta=as_delta(graph, tally(gone)))

    for page in _pages(_ids(spool, (MemoryLine,))):
        await store.write_transaction(lambda tx, page=page: memories(tx, page))
    for page in _pages(_ids(spool, (MemoryLine, TombstoneLine))):  # an agent may forget a file's memory
        await store.run("import/undo_tombstones", graph=graph, ids=page)
    for page in _pages(_ids(spool, (EntityLine,))):
        await store.run("import/undo_entities", graph=graph, ids=page)
    while True:
        [orphans] = await store.run("import/undo_orphans", graph=graph, limit=PAGE)
        if not orphans["removed"]:
            break
    for page in _pages(roots):
        await store.run("import/undo_batches", graph=graph, roots=page)
    rows = await store.run("import/undo", graph=graph, digest=digest, lastSeq=header.lastSeq)
    return bool(rows and rows[0]["kept"])
