"""The second pass of an import: what was checked, written a page at a time, in file order, every page's
writes counted. Each record is built from an allow-list (exports/rows.py) and merged by its id, so an
import cut short and run again writes nothing twice. The writer knows the lines of the page it writes:
a page the store refuses is named by them (exports/importer.py takes the import back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphsvc.errors import Refused
from graphsvc.exports.format import BatchLine, EntityLine, MemoryLine, RelationLine, TombstoneLine
from graphsvc.exports.rows import entity_row, memory_row, packed, relation_row
from graphsvc.services.index.term_stats import as_delta, fields_of, tally
from graphsvc.services.index.windows import WINDOW
from graphsvc.services.ports import Reader, Store

KINDS = ("batches", "entities", "relations", "tombstones")
_KIND_OF: tuple[tuple[type, str], ...] = (
    (BatchLine, "batches"),
    (EntityLine, "entities"),
    (RelationLine, "relations"),
    (MemoryLine, "memories"),
    (TombstoneLine, "tombstones"),
)


class NotWritten(Refused):
    """The store wrote fewer records than a page held: Neo4j answered, and did not write them."""


def _must(expected: int, wrote: int, what: str) -> None:
    if wrote != expected:
        raise NotWritten(f"the store wrote {wrote} of {expected} {what} of a page")


class Writer:
    """Records buffered per kind and written a page at a time; `at` is the page being written: its
    first and last line and what it holds."""

    def __init__(
        self,
        store: Store,
        graph: str,
        page: int,
        total: int,
        progress: Callable[[int, int], None] | None,
        status: str,
    ):
        self._store, self._graph, self._page = store, graph, page
        self._total, self._progress, self._status = total, progress, status
        self._rows: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
        self._lines: dict[str, list[int]] = {k: [] for k in (*KINDS, "memories")}  # of what is buffered
        self._memories: list[MemoryLine] = []
        self._before: list[str] = []  # texts of the WINDOW memories before the buffered ones
        self.written = 0
        self.at: tuple[int, int, str] | None = None

    async def add(self, number: int, record: Any) -> None:
        """The record of line `number`."""
        kind = next((k for t, k in _KIND_OF if isinstance(record, t)), None)
        if kind is not None:
            self._lines[kind].append(number)
        match record:
            case BatchLine():
                row = record.model_dump(exclude={"type", "manifestProof"})
                if record.manifestProof is not None:
                    row["manifestProof"] = packed(record.manifestProof)
                self._rows["batches"].append(row)
            case EntityLine():
                await self._flush_kind("batches")
                self._rows["entities"].append(entity_row(record))
            case RelationLine():
                row = relation_row(record)
                if row is not None:
                    self._rows["relations"].append(row)
            case MemoryLine():
                await self._flush_kind("batches", "entities", "relations")
                self._memories.append(record)
                if len(self._memories) >= self._page + WINDOW:
                    await self._write_memories(final=False)
            case TombstoneLine():
                await self._flush_kind("batches", "entities", "relations")
                if self._memories:
                    await self._write_memories(final=True)
                forget = record.forget
                self._rows["tombstones"].append(
                    record.model_dump(exclude={"type", "proof", "forget"})
                    | {"proof": packed(record.proof)}
                    | {"recordedIn": forget and forget.batch, "recordProof": forget and packed(forget.proof)}
                )
            case _:
                pass
        if any(len(rows) >= self._page for rows in self._rows.values()):
            # in file order: a relation's entity, a tombstone's batch are written before it
            await self._flush_kind("batches", "entities", "relations", "tombstones")

    def _page_of(self, kind: str, n: int) -> None:
        """The page being written: the first `n` buffered records of `kind`."""
        lines = self._lines[kind]
        self.at = (lines[0], lines[n - 1], kind)
        self._lines[kind] = lines[n:]

    async def _flush_kind(self, *kinds: str) -> None:
        for kind in kinds:
            rows = self._rows[kind]
            if rows:
                self._page_of(kind, len(self._lines[kind]))
                extra = {"status": self._status} if kind == "batches" else {}
                [wrote] = await self._store.run(f"import/{kind}", graph=self._graph, rows=rows, **extra)
                _must(len(rows), wrote["written"], kind)
                self._rows[kind] = []

    async def flush(self) -> None:
        await self._flush_kind("batches", "entities", "relations")
        if self._memories:
            await self._write_memories(final=True)
        await self._flush_kind("tombstones")

    async def _memories_and_terms(self, tx: Reader, rows: list[dict[str, Any]]) -> None:
        """A page of memories and, for those this transaction creates (not a resumed import's), what
        they add to the graph's term statistics: all of it or none."""
        [known] = await tx.run("memory/known_ids", graph=self._graph, ids=[r["id"] for r in rows])
        old = set(known["ids"])
        [wrote] = await tx.run("import/memories", graph=self._graph, rows=rows)
        _must(len(rows), wrote["written"], "memories")
        _must(sum(r["batch"] is not None for r in rows), wrote["linked"], "memberships")
        _must(sum(len(r["edges"]) for r in rows), wrote["edges"], "edges")
        new = [r["memory"] for r in rows if r["id"] not in old]
        if new:
            changes = [c for m in new for c in fields_of(m["text"], m["window"], m.get("tags") or [], 1)]
            await tx.run("import/term_delta", delta=as_delta(self._graph, tally(changes)))

    async def _write_memories(self, final: bool) -> None:
        """Write the buffered memories whose windows are known (all of them at the end)."""
        texts = self._before + [str(m.envelope["text"]) for m in self._memories]
        n = len(self._memories) if final else len(self._memories) - WINDOW
        start = len(self._before)
        rows = [
            memory_row(m, "\n".join(texts[max(0, start + i - WINDOW) : start + i + WINDOW + 1]), self._graph)
            for i, m in enumerate(self._memories[:n])
        ]
        self._page_of("memories", n)
        await self._store.write_transaction(lambda tx: self._memories_and_terms(tx, rows), bounded=False)
        self._before = texts[max(0, start + n - WINDOW) : start + n]
        self._memories = self._memories[n:]
        self.written += n
        if self._progress:
            self._progress(self.written, self._total)
