"""Import an export (domain/export.py) into an empty graph: the same ids, hashes, positions, batches
and proofs, so every memory verifies against the same roots on chain with no new anchoring.

The file is read once: the first pass checks every line (domain/export_check.py) while it copies the
bytes to a private spool, and writes nothing when any rule fails; the second pass writes from the spool,
so what was checked is what is written, whatever the file is (a pipe, or a file that changes under
us). Each record is built from an allow-list (services/import_rows.py) and merged by its id, page by
page: an import cut short and run again with the same file resumes (the graph's GraphState carries
the file's digest while the import runs) and never writes a record twice; any other non-empty graph is
refused. Every page's writes are counted: a record the store did not write stops the import. Windows
(the neighbouring texts recall scores) are rebuilt from the remember order; term statistics are added
page by page, with the memories a page creates.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from graphsvc.domain.export import (
    LINE,
    BatchLine,
    EntityLine,
    Header,
    MemoryLine,
    RelationLine,
    TombstoneLine,
)
from graphsvc.domain.export_check import Checked, Finding, check_lines
from graphsvc.domain.export_lines import bounded_lines, parse
from graphsvc.errors import Conflict, InvalidInput, Unavailable
from graphsvc.services.import_rows import entity_row, memory_row, packed, relation_row
from graphsvc.services.index.term_stats import as_delta, fields_of, tally
from graphsvc.services.index.windows import WINDOW
from graphsvc.services.ports import Reader, Store

PAGE = 500
Progress = Callable[[int, int], None]  # (memories written, memories in all)


class ExportRejected(InvalidInput):
    """The export breaks a rule of the format: nothing was written."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        shown = "; ".join(str(f) for f in findings[:5])
        more = f" (and {len(findings) - 5} more)" if len(findings) > 5 else ""
        super().__init__(f"the export was refused, nothing was written: {shown}{more}")


class NotWritten(Unavailable):
    """The store wrote fewer records than a page held: the import stopped (run it again to resume)."""


@dataclass(frozen=True)
class Confirmed:
    """What the chain said of a checked export (the caller's chain audit): problems refuse the import;
    `said` is what was proven, and from which trust roots, in words."""

    findings: list[Finding]
    said: list[str]


Confirm = Callable[[Checked], Confirmed]


@dataclass(frozen=True)
class Imported:
    graph: str
    memories: int
    tombstones: int
    batches: int
    entities: int
    resumed: bool
    final: bool  # the batches were confirmed on chain (else imported as INCLUDED: not final)
    said: list[str]  # what the chain confirmed (nothing without it)


def _spooled(source: Iterable[bytes], spool: IO[bytes]) -> Iterator[bytes]:
    """`source`'s lines, each copied to `spool` as it is read."""
    for line in source:
        spool.write(line)
        yield line


class ExportImporter:
    def __init__(
        self,
        store: Store,
        *,
        chain_id: int | None,
        contract: str | None,
        confirm: Confirm | None,
        written: Callable[[str], None] | None = None,
        page: int = PAGE,
    ):
        """`confirm`: the chain part of the audit, run on the checked file before anything is written;
        None (`--no-chain`): nothing is confirmed, and the batches are imported as not final."""
        self._store, self._chain_id, self._contract = store, chain_id, contract
        self._confirm, self._written, self._page = confirm, written, page

    def check(self, lines: Iterable[bytes], graph: str | None) -> Checked:
        """The first pass: every rule of the file, this server's chain, and the graph asked for.

        Raises:
            ExportRejected: a rule fails (each named with its line).
        """
        checked = check_lines(lines)
        findings = list(checked.findings)
        header = checked.header
        if header is not None and graph is not None and graph != header.graph:
            findings.append(
                Finding(
                    1,
                    "graph",
                    f"the export is of graph {header.graph!r}, not {graph!r}: a "
                    "memory's graph is in its hash, so a graph keeps its name",
                )
            )
        if header is not None and checked.batches and self._chain_id is not None:  # noqa: SIM102
            if (header.chainId, (header.contract or "").lower()) != (
                self._chain_id,
                (self._contract or "").lower(),
            ):
                findings.append(
                    Finding(
                        1,
                        "chain",
                        f"the export was anchored on chain {header.chainId} contract "
                        f"{header.contract}; this server anchors on chain {self._chain_id} contract {self._contract}",
                    )
                )
        if findings:
            raise ExportRejected(findings)
        return checked

    async def run(
        self, source: Iterable[bytes], graph: str | None = None, progress: Progress | None = None
    ) -> Imported:
        """Check `source` (the file's lines, read once: export_lines.bounded_lines of a file), then
        write what was checked. Raises:
        ExportRejected: the file breaks a rule; nothing was written.
        Conflict: the graph is not empty (and is not an import of this file cut short), or a batch
            root of the export belongs to another graph of this server.
        NotWritten: the store did not write a record of a page; run again to resume.
        """
        with tempfile.TemporaryFile() as spool:
            checked = self.check(_spooled(source, spool), graph)
            confirmed = await self._confirmed(checked)
            spool.seek(0)
            return await self._write(checked, spool, progress, confirmed)

    async def _confirmed(self, checked: Checked) -> Confirmed | None:
        """The chain's word on the checked file (in a thread: its RPC calls block).

        Raises:
            ExportRejected: the chain does not confirm it; nothing was written.
        """
        if self._confirm is None:
            return None
        confirmed = await asyncio.to_thread(self._confirm, checked)
        if confirmed.findings:
            raise ExportRejected(confirmed.findings)
        return confirmed

    async def _write(
        self, checked: Checked, spool: IO[bytes], progress: Progress | None, confirmed: Confirmed | None
    ) -> Imported:
        header, trailer = checked.header, checked.trailer
        assert header is not None and trailer is not None
        resumed = await self._begin(header, trailer.sha256, list(checked.batches))
        status = "FINALIZED" if confirmed is not None else "INCLUDED"
        writer = _Writer(self._store, header.graph, self._page, trailer.counts.memories, progress, status)
        for raw in bounded_lines(spool):
            await writer.add(LINE.validate_python(parse(raw)))
        await writer.flush()
        top = max((s.batch.seq for s in checked.batches.values()), default=0)
        await self._store.run("import/finish", graph=header.graph, digest=trailer.sha256, batchSeq=top)
        if self._written is not None:  # the term folder folds the graph's new statistics
            self._written(header.graph)
        return Imported(
            header.graph,
            writer.written,
            checked.tombstones,
            len(checked.batches),
            checked.entities,
            resumed,
            confirmed is not None,
            confirmed.said if confirmed else [],
        )

    async def _begin(self, header: Header, digest: str, roots: list[str]) -> bool:
        """Start or resume the import; True when resuming one of this file cut short."""
        [taken] = await self._store.run("import/roots_taken", graph=header.graph, roots=roots)
        if taken["taken"]:
            raise Conflict(f"batch {taken['taken'][0]} of the export is held by another graph of this server")
        rows = await self._store.run(
            "import/begin",
            graph=header.graph,
            digest=digest,
            lastSeq=header.lastSeq,
            graphTag=header.graphTag,
            forgotten=header.forgottenUnanchored,
        )
        if not rows:
            raise Conflict(
                f"graph {header.graph!r} is not empty: an export is imported into an empty graph only"
            )
        return bool(rows[0]["resumed"])


def _must(expected: int, wrote: int, what: str) -> None:
    if wrote != expected:
        raise NotWritten(
            f"the store wrote {wrote} of {expected} {what} of a page: the import stopped; run it again to resume"
        )


class _Writer:
    """The second pass: records buffered per kind and written a page at a time, in file order; every
    page's writes counted."""

    def __init__(
        self, store: Store, graph: str, page: int, total: int, progress: Progress | None, status: str
    ):
        self._store, self._graph, self._page = store, graph, page
        self._total, self._progress, self._status = total, progress, status
        self._rows: dict[str, list[dict[str, Any]]] = {
            k: [] for k in ("batches", "entities", "relations", "tombstones")
        }
        self._memories: list[MemoryLine] = []
        self._before: list[str] = []  # texts of the WINDOW memories before the buffered ones
        self.written = 0

    async def add(self, record: Any) -> None:
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

    async def _flush_kind(self, *kinds: str) -> None:
        for kind in kinds:
            rows = self._rows[kind]
            if rows:
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
        await self._store.write_transaction(lambda tx: self._memories_and_terms(tx, rows), bounded=False)
        self._before = texts[max(0, start + n - WINDOW) : start + n]
        self._memories = self._memories[n:]
        self.written += n
        if self._progress:
            self._progress(self.written, self._total)
