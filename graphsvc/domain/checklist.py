"""The checks of a memory's proof, pure: one checklist for `verify_memory` and `graphsvc verify-bundle`.

Each check compares what the memory's record claims (its hash, proof, root and anchor, read from
Neo4j by services/anchoring/proofs.py or from a bundle by graphsvc/verifier.py) with a value
recomputed here or a fact read from the chain by the caller (through the chain port, or plain
JSON-RPC). It answers a Finding: which check, and why it passed or failed, with what it found. Each
caller words the findings its own way (a VerifyResult's problem, the CLI's checklist lines); the
page at /verify (graphsvc/web/verify.html) keeps its own JavaScript copy, held to the same cases by
tests/anchoring/test_verify_page.py.

    hash      the envelope hashes (RFC 8785, keccak256) to `hash`, and is the memory `id`
    proof     the leaf of (id, hash) folds with `proof` to `root`
    chain     the chain read serves the anchor's chain id
    contract  the contract read is the anchor's (where the reader pins one), and has code
    root      anchorOf(root) at the finalized block is set, with the anchor's batch, size and block
    event     the transaction succeeded in the anchor's block and logged RootAnchored(root)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from graphsvc.domain.anchor import Inclusion, OnChainAnchor
from graphsvc.domain.hashing import envelope_hash
from graphsvc.domain.merkle import memory_leaf, verify
from graphsvc.domain.proof import AnchorRecord

Key = Literal["hash", "proof", "chain", "contract", "root", "event"]
CHECKS: tuple[Key, ...] = ("hash", "proof", "chain", "contract", "root", "event")  # the order, once
Why = Literal[
    "ok",
    "forgotten",  # hash: no envelope, the memory was forgotten
    "other_memory",  # hash: the envelope is of another id
    "not_canonical",  # hash: RFC 8785 cannot canonicalise the envelope
    "changed",  # hash: the envelope hashes to another value
    "does_not_fold",  # proof
    "other_chain",  # chain
    "other_contract",  # contract: the pinned contract is not the anchor's
    "no_code",  # contract
    "not_final",  # root: anchored at the latest block, not yet at the finalized one
    "not_anchored",  # root
    "differs",  # root: anchored with another batch, size, block or time than the anchor says
    "no_receipt",  # event
    "failed_or_moved",  # event: the transaction failed or is in another block
    "no_event",  # event
]


T = TypeVar("T")


def in_order(steps: Mapping[Key, T]) -> list[tuple[Key, T]]:
    """The steps a caller has for some of the checks, in the checklist's order (CHECKS): verify_memory
    and `graphsvc verify-bundle` both run theirs through here, so neither spells the order."""
    return [(key, steps[key]) for key in CHECKS if key in steps]


@dataclass(frozen=True)
class Finding:
    key: Key
    why: Why
    detail: object = None  # what the check found: a hash, an id, a reason, a leaf, a chain id
    found: OnChainAnchor | None = None  # root: the anchor the chain holds

    @property
    def ok(self) -> bool:
        return self.why == "ok"


def check_hash(
    memory_id: str, claimed: str, envelope: Mapping[str, object] | None, forgotten_at: str | None
) -> Finding:
    """The envelope (None when the memory was forgotten at `forgotten_at`) recomputed to `claimed`."""
    if envelope is None:
        return Finding("hash", "forgotten", forgotten_at)
    if envelope.get("id") != memory_id:
        return Finding("hash", "other_memory", envelope.get("id"))
    try:
        recomputed = envelope_hash(envelope)
    except ValueError as e:
        return Finding("hash", "not_canonical", str(e))
    return Finding("hash", "ok" if recomputed == claimed else "changed", recomputed)


def check_proof(memory_id: str, claimed: str, proof: Sequence[str], root: str) -> Finding:
    """The leaf of (id, hash) folded with `proof` to `root`; the detail is the leaf."""
    leaf = memory_leaf(memory_id, bytes.fromhex(claimed[2:]))
    folds = verify(bytes.fromhex(root[2:]), leaf, [bytes.fromhex(p[2:]) for p in proof])
    return Finding("proof", "ok" if folds else "does_not_fold", leaf)


def check_chain(served: int, anchor: AnchorRecord) -> Finding:
    return Finding("chain", "ok" if served == anchor.chainId else "other_chain", served)


def check_contract(address: str, anchor: AnchorRecord, *, pinned: bool, has_code: bool) -> Finding:
    """`address`: the contract the reader asks (pinned by it, else the anchor's own)."""
    if pinned and address.lower() != anchor.contract.lower():
        return Finding("contract", "other_contract", address)
    return Finding("contract", "ok" if has_code else "no_code", address)


def check_root(final: OnChainAnchor | None, anchor: AnchorRecord, *, anchored_later: bool = False) -> Finding:
    """`final`: anchorOf(root) at the finalized block; `anchored_later`: set at the latest block."""
    if final is None:
        return Finding("root", "not_final" if anchored_later else "not_anchored")
    said = (anchor.blockNumber, anchor.leafCount, anchor.batchSeq, anchor.anchoredAt)
    held = (final.block_number, final.leaf_count, final.batch_seq, final.anchored_at * 1000)
    return Finding("root", "ok" if held == said else "differs", found=final)


def check_event(inclusion: Inclusion | None, anchor: AnchorRecord) -> Finding:
    """The receipt of the anchor's transaction (None: not on this chain)."""
    if inclusion is None:
        return Finding("event", "no_receipt")
    if not inclusion.success or inclusion.block_number != anchor.blockNumber:
        return Finding("event", "failed_or_moved")
    return Finding("event", "ok" if inclusion.logged_root else "no_event")
