"""`graphsvc audit`: an export checked against the chain alone (no Neo4j, no graphsvc server).

From the file (exports/checks.py, one streaming pass): every memory's envelope hashes to its
hash; every anchored memory's and tombstone's proof folds to its batch's root; each batch holds as many
members as its leaf count; records in order and unique; every position of the remember order is
accounted for; edges agree with the envelopes; the trailer's digest and counts match.

From the chain (exports/chain_reads.py), at its `finalized` block: every batch anchored as the export
says, with its receipt; and completeness, bound to a trust root you bring (a pinned graph tag, a root
or proof bundle you hold). The verdict (render.py) says what was proven and what is only
self-consistent, and names every trust root and where it came from.

Exit status: 0 every check that could be made holds (the verdict says which: completeness only when
bound), 1 something was changed or is missing (each problem named with its line and rule), 2 the file
cannot be read (it cannot be opened, or a line is not a record of the format: each such line named),
3 could not check (the RPC cannot be reached or does not answer as the contract does).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphsvc.domain.proof import ProofBundle
from graphsvc.exports.chain_reads import ChainAudit, Pins, check_chain
from graphsvc.exports.checks import UNREADABLE, Checked, check_lines
from graphsvc.exports.extracted import Extract
from graphsvc.exports.findings import Findings
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.verifier import RpcCall, RpcError, read_bundle


@dataclass
class AuditReport:
    checked: Checked
    pins: Pins = field(default_factory=Pins)
    chain: ChainAudit | None = None  # None: not asked (no RPC, or the file cannot be read)
    unreachable: str | None = None  # why the chain could not be checked
    rpc_calls: int = 0
    seconds: float = 0.0
    audited_at: float = field(default_factory=time.time)  # this audit's clock: the file's age is from it

    @property
    def findings(self) -> Findings:
        """Every problem, the file's then the chain's (the first of each kept, the rest counted)."""
        return self.checked.findings + (self.chain.findings if self.chain else Findings())

    @property
    def unreadable(self) -> bool:
        return bool(self.checked.rules() & UNREADABLE)

    @property
    def complete(self) -> bool | None:
        """Completeness, bound to a trust root of yours: None when not proven either way."""
        return self.chain.complete if self.chain else None

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return 2
        if self.findings:
            return 1
        return 3 if self.unreachable else 0


def audit(lines: Iterable[bytes], rpc: RpcCall | None, pins: Pins | None = None) -> AuditReport:
    """Check the export's lines, then (with an RPC, when the file can be read) its batches on chain and
    its completeness against `pins`."""
    started = time.monotonic()
    report = AuditReport(check_lines(lines, extractors=extractors()), pins or Pins())
    if rpc is not None and report.checked.header is not None and not report.unreadable:
        calls = 0

        def counted(method: str, *params: object) -> object:
            nonlocal calls
            calls += 1
            return rpc(method, *params)

        try:
            report.chain = check_chain(report.checked, counted, report.pins)
        except RpcError as e:
            report.unreachable = str(e)
        report.rpc_calls = calls
    report.seconds = time.monotonic() - started
    return report


def extractors() -> dict[str, Extract]:
    """The extractors this audit runs again, by `<name>/<version>`: the rules (graphsvc/extractor/
    rules.py: no model). A memory read by another (spaCy's, or another version) is said not derived."""
    rules = RulesExtractor()
    return {rules.name: rules.extract_one}


def pins_of(
    contract: str | None, graph_tag: str | None, roots: Sequence[str], bundles: Sequence[Path]
) -> Pins:
    """The trust roots an auditor brings, the proof bundles read and checked from their files.

    Raises:
        OSError, verifier.BundleError: a bundle cannot be read.
    """
    held: list[ProofBundle] = []
    for path in bundles:
        with path.open("rb") as source:
            held.append(read_bundle(source))
    return Pins(contract, graph_tag, tuple(roots), tuple(held))
