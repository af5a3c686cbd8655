"""Import an export (exports/format.py) into an empty graph: the same ids, hashes, positions, batches
and proofs, so every memory verifies against the same roots on chain with no new anchoring.

The file is read once: the first pass checks every line (exports/checks.py) while it copies the
bytes to a private spool, and writes nothing when any rule fails; the second pass writes from the spool,
so what was checked is what is written, whatever the file is (a pipe, or a file that changes under
us). Each record is built from an allow-list (exports/rows.py) and merged by its id, page by page
(exports/writer.py): an import cut short by an outage and run again with the same file resumes (the
graph's GraphState carries the file's digest while the import runs) and never writes a record twice; any
other non-empty graph is refused. Every page's writes are counted. A page the store refuses, or does
not write whole, although every rule of the file allows it, takes the import back (exports/undo.py):
nothing of the file is left, and the error names the page's lines (rule `write`). Windows (the
neighbouring texts recall scores) are rebuilt from the remember order; term statistics are added page
by page, with the memories a page creates. While the import runs, no batch is sealed for its graph.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from graphsvc.errors import ChainUnavailable, Conflict, GraphsvcError, InvalidInput, Refused, Unavailable
from graphsvc.exports.chain_reads import Pins, check_chain
from graphsvc.exports.checks import UNREADABLE, Checked, check_lines
from graphsvc.exports.findings import Finding, Findings
from graphsvc.exports.format import LINE, Header
from graphsvc.exports.lines import bounded_lines, parse
from graphsvc.exports.undo import undo
from graphsvc.exports.writer import Writer
from graphsvc.services.ports import Store
from graphsvc.verifier import Rpc, RpcError

PAGE = 500
log = logging.getLogger("graphsvc")
Progress = Callable[[int, int], None]  # (memories written, memories in all)


class ExportRejected(InvalidInput):
    """The export is refused: it breaks a rule of the format (nothing was written), or the store refused
    a page that every rule allows (rule `write`: what the import wrote was taken back)."""

    def __init__(self, findings: Findings):
        self.findings: list[Finding] = list(findings)  # the first MAX_KEPT
        self.more, self.rules = findings.more, set(findings.rules)
        shown = "; ".join(str(f) for f in self.findings[:5])
        more = f" (and {findings.count - 5:,} more)" if findings.count > 5 else ""
        super().__init__(f"the export was refused, nothing was written: {shown}{more}")

    @property
    def unreadable(self) -> bool:
        """A line is not a record of the format (`graphsvc audit` would exit 2)."""
        return bool(self.rules & UNREADABLE)


@dataclass(frozen=True)
class Confirmed:
    """What the chain said of a checked export (the caller's chain audit): problems refuse the import;
    `said` is what was proven, and from which trust roots, in words."""

    findings: Findings
    said: list[str]


Confirm = Callable[[Checked], Confirmed]


def confirmation(rpc_url: str, pins: Pins) -> Confirm:
    """The chain part of the audit, for an import: on this server's chain, its contract pinned."""
    rpc = Rpc(rpc_url)

    def confirm(checked: Checked) -> Confirmed:
        try:
            found = check_chain(checked, rpc, pins)
        except RpcError as e:
            raise ChainUnavailable(f"the chain cannot confirm the export: {e}") from e
        said = [str(t) for t in found.trust] + [text for key, _, text in found.checks if key == "complete"]
        return Confirmed(found.findings, said + [f"note: {n}" for n in found.notes])

    return confirm


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
        findings = checked.findings
        header = checked.header
        if header is not None and graph is not None and graph != header.graph:
            findings.add(
                1,
                "graph",
                f"the export is of graph {header.graph!r}, not {graph!r}: a "
                "memory's graph is in its hash, so a graph keeps its name",
            )
        if header is not None and checked.batches and self._chain_id is not None:  # noqa: SIM102
            if (header.chainId, (header.contract or "").lower()) != (
                self._chain_id,
                (self._contract or "").lower(),
            ):
                findings.add(
                    1,
                    "chain",
                    f"the export was anchored on chain {header.chainId} contract "
                    f"{header.contract}; this server anchors on chain {self._chain_id} contract {self._contract}",
                )
        if findings:
            raise ExportRejected(findings)
        return checked

    async def run(
        self, source: Iterable[bytes], graph: str | None = None, progress: Progress | None = None
    ) -> Imported:
        """Check `source` (the file's lines, read once: lines.bounded_lines of a file), then
        write what was checked. Raises:
        ExportRejected: the file breaks a rule; nothing was written.
        ExportRejected: the store refused a page the file's rules allow (rule `write`): the import
            was taken back, nothing of the file is left.
        Conflict: the graph is not empty (and is not an import of this file cut short), or a batch
            root of the export belongs to another graph of this server.
        Unavailable, OSError: an outage; run the import again with the same file to resume it.
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
        """The second pass; a failure that is not an outage takes the import back (exports/undo.py).

        Raises:
            ExportRejected: the store refused a page (rule `write`, naming its lines): taken back.
            Unavailable, OSError: an outage; run the import again to resume it.
        """
        header, trailer = checked.header, checked.trailer
        assert header is not None and trailer is not None
        resumed = await self._begin(header, trailer.sha256, list(checked.batches))
        status = "FINALIZED" if confirmed is not None else "INCLUDED"
        writer = Writer(self._store, header.graph, self._page, trailer.counts.memories, progress, status)
        try:
            for number, raw in enumerate(bounded_lines(spool), 1):
                await writer.add(number, LINE.validate_python(parse(raw)))
            await writer.flush()
            top = max((s.batch.seq for s in checked.batches.values()), default=0)
            await self._store.run("import/finish", graph=header.graph, digest=trailer.sha256, batchSeq=top)
        except Exception as e:
            if _outage(e):
                raise
            log.warning("import of graph %r refused by the store (%s): taking it back", header.graph, e)
            kept = await undo(self._store, header, trailer.sha256, spool, list(checked.batches))
            self._folded(header.graph)
            raise ExportRejected(_refused(writer.at, e, kept)) from e
        self._folded(header.graph)
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

    def _folded(self, graph: str) -> None:
        if self._written is not None:  # the term folder folds the graph's new statistics
            self._written(graph)

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


def _outage(error: Exception) -> bool:
    """A failure that may pass (Neo4j unreachable, the disk): the import resumes when run again. Neo4j
    refusing a statement, or not writing what a page held, is not one: it would fail the same again."""
    return isinstance(error, (OSError, TimeoutError)) or (
        isinstance(error, Unavailable) and not isinstance(error, Refused)
    )


def _refused(at: tuple[int, int, str] | None, error: Exception, kept: bool) -> Findings:
    """The `write` finding of a page the store refused, by its lines."""
    first, last, kind = at or (1, 1, "the import's start")
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    why = error.message if isinstance(error, GraphsvcError) else type(error).__name__
    found = Findings()
    found.add(
        first,
        "write",
        f"the store refused the {kind} of {lines} ({why}), which every rule of the file allows; the import "
        "was taken back"
        + (": memories remembered into the graph meanwhile were kept" if kept else ": nothing of it is left"),
    )
    return found
