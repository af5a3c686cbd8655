"""The chain part of an audit (`graphsvc audit`, and `graphsvc import-export` before it writes): what
the export says of its batches, held to the chain at its `finalized` block, and its completeness bound
to a trust root the auditor brings, never to the file alone.

    chain     the RPC serves the export's chain id; the contract has code
    anchored  every batch's root is anchored with the export's block, leaf count and batch number
    link      a batch's place in its graph's list on chain is the export's (graph tag, previous root); a
              batch the file says predates chained roots names no tag on chain
    receipt   every batch's transaction succeeded in its block and logged RootAnchored for its root
    pin       a trust root you brought disagrees with the file or with another (a graph tag pinned, a
              root or bundle you hold, the bundle's contract or graph)
    missing-batch  a batch of the graph's list on chain is not in the export, or one of the export is
              not in that list, or a root you hold is not in the export

Trust roots. The contract: pinned (`--contract`), else your bundle's, else the file's. The graph tag
(whose list on chain names every batch the operator anchored for the graph): pinned (`--graph-tag`,
published by the operator: `graphsvc graph-tag`, or `graphTag` in anchor_now's answer), else read from
the chain for a root you hold (`--known-root`, or a proof bundle's root: `linkOf(root).graphTag`), else
the file's. Completeness is claimed only for a tag you bound; with the file's own tag the list is
walked all the same (a file that leaves out batches of its own tag fails), but nothing is claimed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from eth_abi.abi import decode, encode
from eth_utils.crypto import keccak

from graphsvc.domain.proof import ProofBundle
from graphsvc.domain.render import plural
from graphsvc.exports.checks import BatchSeen, Checked, inert
from graphsvc.exports.findings import Findings
from graphsvc.verifier import RpcCall, RpcError, inclusion

LINK_OF = keccak(text="linkOf(bytes32)")[:4]
LAST_ROOT_OF = keccak(text="lastRootOf(bytes32)")[:4]
ZERO = "0x" + "00" * 32
MAX_WALK = 10_000_000  # roots walked before giving up on a list that never ends
Source = Literal["pinned", "bundle", "chain", "file"]


@dataclass(frozen=True)
class Pins:
    """What the auditor brings, from outside the file."""

    contract: str | None = None
    graph_tag: str | None = None
    roots: tuple[str, ...] = ()
    bundles: tuple[ProofBundle, ...] = ()

    @property
    def held(self) -> list[tuple[str, str]]:
        """(root, where it came from) of every root the auditor holds."""
        return [(r, "--known-root") for r in self.roots] + [
            (b.root, f"your bundle of {b.id}") for b in self.bundles
        ]


@dataclass(frozen=True)
class TrustRoot:
    name: Literal["contract", "graph tag"]
    value: str
    source: Source
    via: str = ""  # e.g. the root the tag was read for

    def __str__(self) -> str:
        said = {
            "pinned": "pinned by you",
            "bundle": f"from {self.via}",
            "chain": f"read from the chain for {self.via}",
            "file": "from the file only: compare it with the operator's out of band",
        }
        return f"{self.name} {self.value} ({said[self.source]})"


@dataclass
class ChainAudit:
    findings: Findings = field(default_factory=Findings)
    checks: list[tuple[str, bool | None, str]] = field(default_factory=list[tuple[str, bool | None, str]])
    notes: list[str] = field(default_factory=list[str])
    trust: list[TrustRoot] = field(default_factory=list[TrustRoot])
    roots_ok: bool = False  # every batch on chain as the export says (and its receipt)
    later: int = 0  # batches of the walked list anchored after the file was made
    complete: bool | None = None  # None: not bound to a trust root of yours

    def find(self, line: int | None, rule: str, text: str) -> None:
        self.findings.add(line, rule, text)


@dataclass(frozen=True)
class Link:
    graph_tag: str
    prev_root: str
    position: int
    anchored_at: int  # seconds; 0: not anchored at that block
    block: int
    leaf_count: int
    batch_seq: int


class Chain:
    """The contract's views at the `finalized` block."""

    def __init__(self, rpc: RpcCall, address: str):
        self.call, self.address = rpc, address

    def _eth_call(self, selector: bytes, word: str) -> bytes:
        data = "0x" + (selector + encode(["bytes32"], [bytes.fromhex(word[2:])])).hex()
        result = self.call("eth_call", {"to": self.address, "data": data}, "finalized")
        try:
            return bytes.fromhex(str(result)[2:])
        except ValueError as e:
            raise RpcError("the RPC answered eth_call with data that is not hex") from e

    def link_of(self, root: str) -> Link:
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
        return Link("0x" + tag.hex(), "0x" + prev.hex(), position, at, block, leaves, seq)

    def last_root_of(self, tag: str) -> str:
        data = self._eth_call(LAST_ROOT_OF, tag)
        if len(data) != 32:
            raise RpcError(f"the contract at {self.address} does not answer lastRootOf")
        return "0x" + data.hex()


def _millis(instant: str) -> int:
    return int(datetime.fromisoformat(instant).timestamp() * 1000)


def check_chain(checked: Checked, rpc: RpcCall, pins: Pins) -> ChainAudit:
    """Every chain check of an export whose file rules were run (`checked`).

    Raises:
        RpcError: the RPC could not be asked (unreachable, or not answering as the contract does).
    """
    out = ChainAudit()
    chain = _connect(out, checked, rpc, pins)
    if chain is not None:
        links = _roots(out, checked, chain)
        _bind(out, checked, chain, pins, links)
    return out


def _contract(checked: Checked, pins: Pins) -> TrustRoot | None:
    header = checked.header
    assert header is not None
    if pins.contract:
        return TrustRoot("contract", pins.contract.lower(), "pinned")
    if pins.bundles:
        first = pins.bundles[0]
        return TrustRoot(
            "contract", first.anchor.contract.lower(), "bundle", f"your bundle of {inert(first.id)}"
        )
    if header.contract:
        return TrustRoot("contract", header.contract.lower(), "file")
    return None


def _connect(out: ChainAudit, checked: Checked, rpc: RpcCall, pins: Pins) -> Chain | None:
    header = checked.header
    assert header is not None
    contract = _contract(checked, pins)
    if contract is None:
        if checked.batches:
            out.find(1, "chain", "the header names no chain or contract, yet the export has batches")
        out.checks.append(("chain", None, "no contract: the file names none and you pinned none"))
        return None
    try:
        served = int(str(rpc("eth_chainId")), 16)
    except ValueError as e:
        raise RpcError("the RPC answered a chain id that is not a quantity") from e
    problem = _problem(checked, rpc, pins, contract, served)
    if problem is not None:
        rule, text = problem
        out.find(1, rule, text)
        out.checks.append(("chain", False, text))
        return None
    out.trust.append(contract)
    out.checks.append(("chain", True, f"the RPC serves chain {served}; contract {contract.value} has code"))
    return Chain(rpc, contract.value)


def _problem(
    checked: Checked, rpc: RpcCall, pins: Pins, contract: TrustRoot, served: int
) -> tuple[str, str] | None:
    """(rule, text) of the first thing that keeps the chain from being read for this export."""
    header = checked.header
    assert header is not None
    chains = {header.chainId} if header.chainId is not None else {b.anchor.chainId for b in pins.bundles}
    if chains and chains != {served}:
        return "chain", f"the RPC serves chain {served}; the export is of chain {min(chains)}"
    if header.contract and contract.value != header.contract.lower():
        return "pin", f"the export names contract {header.contract}; {contract}"
    if any(b.anchor.contract.lower() != contract.value for b in pins.bundles):
        return "pin", f"a bundle you hold names another contract than {contract}"
    if rpc("eth_getCode", contract.value, "finalized") in ("0x", "0x0", None):
        return "chain", f"no contract code at {contract.value} on chain {served}"
    return None


def _roots(out: ChainAudit, checked: Checked, chain: Chain) -> dict[str, Link]:
    """Every batch on chain as the export says, with its receipt."""
    links: dict[str, Link] = {}
    before = out.findings.count
    for root, seen in checked.batches.items():
        link = links[root] = chain.link_of(root)
        _root(out, chain, seen, link)
    out.roots_ok = out.findings.count == before
    n = len(checked.batches)
    out.checks.append(
        (
            "roots",
            out.roots_ok,
            f"{plural(n, 'batch root', 'batch roots')} anchored at the finalized block with the export's "
            "blocks, leaf counts and batch numbers; each transaction's receipt logs its root"
            if out.roots_ok
            else "a batch is not on chain as the export says",
        )
    )
    return links


def _root(out: ChainAudit, chain: Chain, seen: BatchSeen, link: Link) -> None:
    b = seen.batch
    if link.anchored_at == 0:
        out.find(seen.line, "anchored", f"batch {b.root} is not anchored at the finalized block")
        return
    said = (b.blockNumber, b.count, b.seq, b.anchoredAt)
    if (link.block, link.leaf_count, link.batch_seq, link.anchored_at * 1000) != said:
        out.find(
            seen.line,
            "anchored",
            f"on chain batch {b.root} is batch {link.batch_seq} of {plural(link.leaf_count, 'leaf', 'leaves')} "
            f"in block {link.block}; the export says batch {b.seq} of {plural(b.count, 'leaf', 'leaves')} "
            f"in block {b.blockNumber}",
        )
    elif (link.graph_tag, link.prev_root) != (b.graphTag or ZERO, b.prevRoot or ZERO):
        said = f"tag {b.graphTag} after {b.prevRoot}" if b.graphTag else "it predates chained roots"
        out.find(
            seen.line,
            "link",
            f"on chain batch {b.root} is on tag {link.graph_tag} after {link.prev_root}; the export says {said}",
        )
    else:
        found = inclusion(chain.call, b.txHash, chain.address, b.root, b.blockNumber)
        if found is None or not found.logged_root:
            why = (
                "is not on this chain"
                if found is None
                else f"logs no RootAnchored for it in block {b.blockNumber}"
            )
            out.find(seen.line, "receipt", f"batch {b.root}: its transaction {b.txHash} {why}")


def _tag(
    out: ChainAudit, checked: Checked, chain: Chain, pins: Pins, links: dict[str, Link]
) -> TrustRoot | None:
    """The graph tag bound to a trust root of yours (None: only the file's), each root you hold checked."""
    header = checked.header
    assert header is not None
    bound: list[TrustRoot] = (
        [TrustRoot("graph tag", pins.graph_tag.lower(), "pinned")] if pins.graph_tag else []
    )
    for bundle in pins.bundles:
        graph = (bundle.envelope or {}).get("graph")
        if graph is not None and graph != header.graph:
            out.find(
                1,
                "pin",
                f"your bundle of {inert(bundle.id)} is of graph {inert(graph)!r}, not {inert(header.graph)!r}",
            )
    for root, where in pins.held:
        link = links.get(root) or chain.link_of(root)
        if link.anchored_at == 0:
            out.find(None, "pin", f"the root {root} ({where}) is not anchored on {chain.address}")
        elif link.graph_tag == ZERO:
            out.notes.append(
                f"the root {root} ({where}) was anchored before chained roots: it names no graph tag"
            )
        else:
            bound.append(TrustRoot("graph tag", link.graph_tag, "chain", f"{where} ({root[:10]}…)"))
            if root not in checked.batches and link.anchored_at * 1000 <= _millis(header.exportedAt):
                out.find(None, "missing-batch", f"the root {root} ({where}) is not in the export")
    values = {t.value for t in bound}
    if len(values) > 1:
        out.find(
            None,
            "pin",
            "the trust roots you brought name different graph tags: " + ", ".join(map(str, bound)),
        )
        return None
    if bound and bound[0].value != (header.graphTag or "").lower():
        out.find(1, "pin", f"the file names graph tag {header.graphTag}; {bound[0]}")
    return bound[0] if bound else None


def _bind(out: ChainAudit, checked: Checked, chain: Chain, pins: Pins, links: dict[str, Link]) -> None:
    header = checked.header
    assert header is not None
    legacy = sum(1 for s in checked.batches.values() if s.batch.graphTag is None)
    if legacy:
        out.notes.append(
            f"{plural(legacy, 'batch was', 'batches were')} anchored before chained roots: on chain, but the "
            "chain cannot list them"
        )
    before = out.findings.count
    tag = _tag(out, checked, chain, pins, links)
    walked_tag = tag.value if tag else header.graphTag
    if walked_tag is None:
        out.checks.append(("complete", None, "not proven: the file names no graph tag and you pinned none"))
        return
    out.trust.append(tag or TrustRoot("graph tag", walked_tag, "file"))
    walked = _walk(chain, walked_tag, links)
    _compare(out, checked, walked)
    ok = out.findings.count == before
    listed = f"the chain lists {plural(len(walked), 'batch', 'batches')} for graph tag {walked_tag[:10]}…"
    if tag is None:
        out.checks.append(
            (
                "complete",
                None if ok else False,
                f"{listed} (the file's own tag); "
                + (
                    "the export holds them, but nothing binds the tag: pin it (--graph-tag, --bundle)"
                    if ok
                    else "the export does not hold exactly those"
                ),
            )
        )
        return
    out.complete = ok
    out.checks.append(
        (
            "complete",
            ok,
            f"{listed} ({tag.source}); "
            + (
                "the export holds every one anchored before it was made"
                if ok
                else "the export does not hold exactly those"
            ),
        )
    )


def _walk(chain: Chain, tag: str, links: dict[str, Link]) -> list[tuple[str, Link]]:
    """The tag's list on chain, oldest first."""
    walked: list[tuple[str, Link]] = []
    at = chain.last_root_of(tag)
    while at != ZERO and len(walked) < MAX_WALK:
        link = links.get(at) or chain.link_of(at)
        walked.append((at, link))
        at = link.prev_root
    walked.reverse()
    return walked


def _compare(out: ChainAudit, checked: Checked, walked: Iterable[tuple[str, Link]]) -> None:
    header = checked.header
    assert header is not None
    exported_at = _millis(header.exportedAt)
    on_chain: set[str] = set()
    for root, link in walked:
        on_chain.add(root)
        if root in checked.batches:
            continue
        if link.anchored_at * 1000 > exported_at:
            out.later += 1
            out.notes.append(
                f"batch {root} (position {link.position} of the graph on chain) was anchored after the export was made"
            )
        else:
            out.find(
                None,
                "missing-batch",
                f"batch {root} (position {link.position} of the graph on chain, block {link.block}, "
                f"{plural(link.leaf_count, 'leaf', 'leaves')}) is not in the export",
            )
    for seen in checked.batches.values():
        if seen.batch.graphTag is not None and seen.batch.root not in on_chain:
            out.find(
                seen.line, "missing-batch", f"batch {seen.batch.root} is not in the graph's list on chain"
            )
