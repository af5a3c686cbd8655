"""`graphsvc audit`: an export checked against the chain alone (no Neo4j, no graphsvc server).

From the file (domain/export_check.py, one streaming pass): every memory's envelope hashes to its
hash; every anchored memory's and tombstone's proof folds to its batch's root; records in order and
unique; every position of the remember order is a memory, a tombstone or a forget record; each
batch holds as many members as its leaf count; the trailer's digest matches.

From the chain, at its `finalized` block, one eth_call per batch (linkOf(root): the anchor record and
the root's place in its graph's list):

    chain     the RPC serves the export's chain id; the contract (pinned, else the export's) has code
    roots     every batch's root is anchored with the export's block, leaf count and batch number
    receipt   every batch's transaction succeeded in its block and logged RootAnchored for its root
    complete  walking the graph's list from lastRootOf(graphTag) back through each prevRoot gives
              exactly the export's chained batches: a batch left out of the export is named (one
              anchored after the export was made is reported, not counted as missing)

Exit status: 0 all holds, 1 something was changed or is missing (each problem named with its line
and rule), 2 the file cannot be read (it cannot be opened, or a line is not a record of the format:
each such line named), 3 could not check (the RPC cannot be reached or does not answer as the
contract does).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from eth_abi.abi import decode, encode
from eth_utils.crypto import keccak

from graphsvc.domain.export_check import BatchSeen, Checked, Finding, check_lines, inert
from graphsvc.domain.render import plural
from graphsvc.verifier import RpcCall, RpcError, inclusion

LINK_OF = keccak(text="linkOf(bytes32)")[:4]
LAST_ROOT_OF = keccak(text="lastRootOf(bytes32)")[:4]
ZERO = "0x" + "00" * 32
MAX_WALK = 10_000_000  # roots walked before giving up on a list that never ends
UNREADABLE = {"json", "schema"}  # a line that is not a record of the format: the file cannot be read


@dataclass(frozen=True)
class OnChain:
    graph_tag: str
    prev_root: str
    position: int
    anchored_at: int  # seconds; 0: not anchored at that block
    block: int
    leaf_count: int
    batch_seq: int


@dataclass
class AuditReport:
    checked: Checked
    chain_findings: list[Finding] = field(default_factory=list[Finding])
    notes: list[str] = field(default_factory=list[str])
    checks: list[tuple[str, bool | None, str]] = field(default_factory=list[tuple[str, bool | None, str]])
    unreachable: str | None = None  # why the chain could not be checked
    rpc_calls: int = 0
    seconds: float = 0.0

    @property
    def findings(self) -> list[Finding]:
        return self.checked.findings + self.chain_findings

    @property
    def exit_code(self) -> int:
        if self.checked.rules() & UNREADABLE:
            return 2
        if self.findings:
            return 1
        return 3 if self.unreachable else 0


class _Chain:
    def __init__(self, rpc: RpcCall, address: str):
        self.call, self.address = rpc, address

    def _eth_call(self, selector: bytes, word: str) -> bytes:
        data = "0x" + (selector + encode(["bytes32"], [bytes.fromhex(word[2:])])).hex()
        result = self.call("eth_call", {"to": self.address, "data": data}, "finalized")
        try:
            return bytes.fromhex(str(result)[2:])
        except ValueError as e:
            raise RpcError("the RPC answered eth_call with data that is not hex") from e

    def link_of(self, root: str) -> OnChain:
        try:
            tag, prev, position, at, block, leaves, seq = decode(
                ["bytes32", "bytes32", "uint64", "uint64", "uint64", "uint32", "uint64"],
                self._eth_call(LINK_OF, root),
            )
        except RpcError:
            raise
        except Exception as e:  # eth_abi raises several types for short data
            raise RpcError(
                f"the contract at {self.address} does not answer linkOf (not a chained-roots contract?)"
            ) from e
        return OnChain("0x" + tag.hex(), "0x" + prev.hex(), position, at, block, leaves, seq)

    def last_root_of(self, tag: str) -> str:
        data = self._eth_call(LAST_ROOT_OF, tag)
        if len(data) != 32:
            raise RpcError(f"the contract at {self.address} does not answer lastRootOf")
        return "0x" + data.hex()


def _millis(instant: str) -> int:
    return int(datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp() * 1000)


def audit(lines: Iterable[bytes], rpc: RpcCall | None, contract: str | None = None) -> AuditReport:
    """Check the export's lines, then (with an RPC) its batches on chain."""
    started = time.monotonic()
    report = AuditReport(check_lines(lines))
    header = report.checked.header
    if rpc is not None and header is not None and not report.checked.rules() & UNREADABLE:
        calls = 0

        def counted(method: str, *params: object) -> object:
            nonlocal calls
            calls += 1
            return rpc(method, *params)

        try:
            chain = _connect(report, counted, contract)
            if chain is not None:
                _roots(report, chain)
        except RpcError as e:
            report.unreachable = str(e)
        report.rpc_calls = calls
    report.seconds = time.monotonic() - started
    return report


def _connect(report: AuditReport, rpc: RpcCall, pinned: str | None) -> _Chain | None:
    chain = _connected(report, rpc, pinned)
    if chain is None and report.chain_findings:
        report.checks.append(("chain", False, report.chain_findings[-1].text))
    return chain


def _connected(report: AuditReport, rpc: RpcCall, pinned: str | None) -> _Chain | None:
    header = report.checked.header
    assert header is not None
    if header.chainId is None or header.contract is None:
        if report.checked.batches:
            report.chain_findings.append(
                Finding(1, "chain", "the header names no chain or contract, yet the export has batches")
            )
        return None
    answer = rpc("eth_chainId")
    try:
        served = int(str(answer), 16)
    except ValueError as e:
        raise RpcError("the RPC answered a chain id that is not a quantity") from e
    if served != header.chainId:
        report.chain_findings.append(
            Finding(1, "chain", f"the RPC serves chain {served}; the export is of chain {header.chainId}")
        )
        return None
    address = (pinned or header.contract).lower()
    if pinned and address != header.contract.lower():
        report.chain_findings.append(
            Finding(1, "chain", f"the export names contract {header.contract}; you pinned {pinned}")
        )
        return None
    if rpc("eth_getCode", address, "finalized") in ("0x", "0x0", None):
        report.chain_findings.append(Finding(1, "chain", f"no contract code at {address} on chain {served}"))
        return None
    source = "pinned by you" if pinned else "taken from the export"
    report.checks.append(
        ("chain", True, f"the RPC serves chain {served}; contract {address} has code ({source})")
    )
    return _Chain(rpc, address)


def _roots(report: AuditReport, chain: _Chain) -> None:
    """Every batch on chain as the export says, and the graph's list on chain equal to the export's."""
    header, batches = report.checked.header, report.checked.batches
    assert header is not None
    links: dict[str, OnChain] = {}
    bad_before = len(report.chain_findings)
    for root, seen in batches.items():
        link = links[root] = chain.link_of(root)
        b = seen.batch
        if link.anchored_at == 0:
            report.chain_findings.append(
                Finding(seen.line, "anchored", f"batch {root} is not anchored at the finalized block")
            )
            continue
        said = (b.blockNumber, b.count, b.seq, b.anchoredAt)
        if (link.block, link.leaf_count, link.batch_seq, link.anchored_at * 1000) != said:
            report.chain_findings.append(
                Finding(
                    seen.line,
                    "anchored",
                    f"on chain batch {root} is batch {link.batch_seq} of "
                    f"{plural(link.leaf_count, 'leaf', 'leaves')} in block {link.block}; the export says batch {b.seq} of "
                    f"{plural(b.count, 'leaf', 'leaves')} in block {b.blockNumber}",
                )
            )
        elif b.graphTag is not None and (link.graph_tag, link.prev_root) != (b.graphTag, b.prevRoot):
            report.chain_findings.append(
                Finding(
                    seen.line,
                    "link",
                    f"on chain batch {root} is on tag {link.graph_tag} after "
                    f"{link.prev_root}; the export says tag {b.graphTag} after {b.prevRoot}",
                )
            )
        else:
            _receipt(report, chain, seen)
    ok = len(report.chain_findings) == bad_before
    n = len(batches)
    report.checks.append(
        (
            "roots",
            ok,
            f"{plural(n, 'batch root', 'batch roots')} anchored at the finalized block with "
            "the export's blocks, leaf counts and batch numbers; each transaction's receipt logs its root"
            if ok
            else "a batch is not on chain as the export says",
        )
    )
    _complete(report, chain, links)


def _receipt(report: AuditReport, chain: _Chain, seen: BatchSeen) -> None:
    """The batch's transaction succeeded in its block and logged RootAnchored for its root (an import
    copies `txHash` into every proof bundle of the batch)."""
    b = seen.batch
    found = inclusion(chain.call, b.txHash, chain.address, b.root, b.blockNumber)
    if found is None or not found.logged_root:
        why = (
            "is not on this chain"
            if found is None
            else f"logs no RootAnchored for it in block {b.blockNumber}"
        )
        report.chain_findings.append(
            Finding(seen.line, "receipt", f"batch {b.root}: its transaction {b.txHash} {why}")
        )


def _complete(report: AuditReport, chain: _Chain, links: dict[str, OnChain]) -> None:
    header = report.checked.header
    assert header is not None
    chained = [s for s in report.checked.batches.values() if s.batch.graphTag is not None]
    legacy = len(report.checked.batches) - len(chained)
    if legacy:
        report.notes.append(
            f"{plural(legacy, 'batch was', 'batches were')} anchored before chained roots: "
            "on chain, but the chain cannot list them"
        )
    if header.graphTag is None:
        report.checks.append(("complete", None, "the graph has no tag (never anchored with chained roots)"))
        return
    walked: list[tuple[str, OnChain]] = []
    at = chain.last_root_of(header.graphTag)
    while at != ZERO and len(walked) < MAX_WALK:
        link = links.get(at) or chain.link_of(at)
        walked.append((at, link))
        at = link.prev_root
    walked.reverse()  # oldest first
    exported = {s.batch.root for s in chained}
    on_chain = {root for root, _ in walked}
    exported_at = _millis(header.exportedAt)
    before = len(report.chain_findings)
    for root, link in walked:
        if root in exported:
            continue
        if link.anchored_at * 1000 > exported_at:
            report.notes.append(
                f"batch {root} (position {link.position} of the graph on chain) was anchored after the export was made"
            )
        else:
            report.chain_findings.append(
                Finding(
                    None,
                    "missing-batch",
                    f"batch {root} (position {link.position} of the graph "
                    f"on chain, block {link.block}, {plural(link.leaf_count, 'leaf', 'leaves')}) is not in the export",
                )
            )
    for seen in chained:
        if seen.batch.root not in on_chain:
            report.chain_findings.append(
                Finding(
                    seen.line, "missing-batch", f"batch {seen.batch.root} is not in the graph's list on chain"
                )
            )
    ok = len(report.chain_findings) == before
    text = (
        f"the chain lists {plural(len(walked), 'batch', 'batches')} for graph tag {header.graphTag[:10]}…; "
        + (
            "the export holds every one anchored before it was made"
            if ok
            else "the export does not hold exactly those"
        )
    )
    report.checks.append(("complete", ok, text))


def _check(key: str, rules: set[str], failing: set[str], held: str, broken: str) -> tuple[str, bool, str]:
    ok = not rules & failing
    return key, ok, held if ok else broken


def render(report: AuditReport) -> str:
    """The checklist, ✓ / ✗ / · (not checked), the verdict first, then every problem by line."""
    c, header = report.checked, report.checked.header
    graph = inert(header.graph) if header else "?"
    rules = c.rules()
    last = header.lastSeq if header else 0
    file_checks = [
        _check(
            "lines",
            rules,
            {"json", "schema", "order", "duplicate", "truncated", "trailer", "graph", "chain"},
            f"{c.lines:,} lines read: records in order, unique, trailer digest and counts match",
            f"{c.lines:,} lines read: a record is unreadable, out of order, repeated or not counted",
        ),
        _check(
            "hashes",
            rules,
            {"hash"},
            f"{c.hashed:,} of {plural(c.memories, 'memory', 'memories')} hash to their envelopes",
            f"{c.memories - c.hashed:,} of {plural(c.memories, 'memory', 'memories')} do not hash to their envelopes",
        ),
        _check(
            "proofs",
            rules,
            {"proof", "batch", "members", "link"},
            f"{plural(c.proofs, 'proof', 'proofs')} (memories and tombstones) fold to their batch roots; "
            "each batch holds its leaf count",
            "a proof does not fold, or a batch does not hold its leaf count of members",
        ),
        _check(
            "positions",
            rules,
            {"position"},
            f"positions 1..{last:,}: each a memory, a tombstone or a forget record",
            f"{c.positions_missing:,} of positions 1..{last:,} hold no memory, tombstone or forget record",
        ),
    ]
    checks = file_checks + report.checks
    if report.unreachable:
        checks.append(("chain", None, f"not checked: {report.unreachable}"))
    if not report.findings and not report.unreachable:
        head = (
            f"✓ Audited: graph {graph!r}: {plural(c.memories, 'memory', 'memories')} unchanged, "
            f"{plural(len(c.batches), 'batch', 'batches')} on chain, none left out."
        )
    elif report.exit_code == 2:
        unreadable = [f for f in c.findings if f.rule in UNREADABLE]
        head = (
            f"✗ Cannot read the export: {plural(len(unreadable), 'line is not a record', 'lines are not records')} "
            "of graphsvc.export/v1 (nothing was checked against the chain)."
        )
    elif report.findings:
        head = f"✗ Not audited: {plural(len(report.findings), 'problem', 'problems')} in the export of graph {graph!r}."
    else:
        head = "? Could not check the chain: the file's own checks passed."
    marks = {True: "✓", False: "✗", None: "·"}
    lines = [head, *(f"  {marks[ok]} {key:<9} {text}" for key, ok, text in checks)]
    lines += [f"  note: {n}" for n in report.notes]
    lines += [f"  {f}" for f in report.findings[:50]]
    if len(report.findings) > 50:
        lines.append(f"  … {len(report.findings) - 50:,} more problems")
    if report.rpc_calls:
        lines.append(f"  {report.rpc_calls:,} RPC calls, {report.seconds:.1f} s")
    return "\n".join(lines)
