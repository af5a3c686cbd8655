"""The one checklist of a proof (graphsvc.domain.checklist), pure: what each check answers for a good
claim and for each way a claim can be wrong. verify_memory and verify-bundle word these findings."""

from __future__ import annotations

from typing import Any

from graphsvc.domain.anchor import Inclusion, OnChainAnchor
from graphsvc.domain.checklist import (
    check_chain,
    check_contract,
    check_event,
    check_hash,
    check_proof,
    check_root,
)
from graphsvc.domain.hashing import envelope_hash, memory_envelope
from graphsvc.domain.merkle import MerkleTree, memory_leaf
from graphsvc.domain.proof import AnchorRecord

ENVELOPE = memory_envelope(
    id="mem_1",
    graph="g",
    text="USDC is the quote token",
    tags=["b", "a"],
    entities=[],
    created_at="2026-12-05T00:00:00.000Z",
)
HASH = envelope_hash(ENVELOPE)
CONTRACT = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
ANCHOR = AnchorRecord(
    chainId=31337,
    contract=CONTRACT,
    txHash="0x" + "ab" * 32,
    blockNumber=812,
    batchSeq=3,
    leafCount=2,
    anchoredAt=1_700_000_000_000,
)
ON_CHAIN = OnChainAnchor(anchored_at=1_700_000_000, block_number=812, leaf_count=2, batch_seq=3)


def _tree() -> tuple[str, list[str]]:
    leaves = [memory_leaf("mem_1", bytes.fromhex(HASH[2:])), memory_leaf("mem_2", b"\x01" * 32)]
    tree = MerkleTree.build(leaves)
    return "0x" + tree.root.hex(), ["0x" + p.hex() for p in tree.proof(leaves[0])]


def test_the_hash_of_the_envelope_as_remembered_passes_and_names_the_hash() -> None:
    found = check_hash("mem_1", HASH, ENVELOPE, None)
    assert (found.key, found.why, found.detail) == ("hash", "ok", HASH)


def test_one_changed_character_of_the_text_fails_the_hash_with_what_it_hashes_to() -> None:
    changed = {**ENVELOPE, "text": "USDT is the quote token"}
    found = check_hash("mem_1", HASH, changed, None)
    assert (found.why, found.detail) == ("changed", envelope_hash(changed))


def test_a_forgotten_memory_fails_the_hash_saying_when_it_was_forgotten() -> None:
    found = check_hash("mem_1", HASH, None, "2026-12-05T01:00:00.000Z")
    assert (found.ok, found.why, found.detail) == (False, "forgotten", "2026-12-05T01:00:00.000Z")


def test_an_envelope_of_another_memory_fails_the_hash_naming_its_id() -> None:
    assert check_hash("mem_2", HASH, ENVELOPE, None).why == "other_memory"


def test_an_envelope_rfc_8785_cannot_canonicalise_fails_the_hash() -> None:
    assert check_hash("mem_1", HASH, {**ENVELOPE, "text": 2**80}, None).why == "not_canonical"


def test_the_proof_folds_to_its_root_and_not_to_another() -> None:
    root, proof = _tree()
    good = check_proof("mem_1", HASH, proof, root)
    assert good.ok and good.detail == memory_leaf("mem_1", bytes.fromhex(HASH[2:]))
    assert check_proof("mem_1", HASH, proof, "0x" + "00" * 32).why == "does_not_fold"
    assert check_proof("mem_2", HASH, proof, root).why == "does_not_fold"


def test_another_chain_fails_the_chain_check() -> None:
    assert check_chain(31337, ANCHOR).ok
    assert (check_chain(10143, ANCHOR).why, check_chain(10143, ANCHOR).detail) == ("other_chain", 10143)


def test_a_pinned_contract_must_be_the_anchors_and_any_contract_must_have_code() -> None:
    assert check_contract(CONTRACT.lower(), ANCHOR, pinned=True, has_code=True).ok
    assert check_contract("0x" + "12" * 20, ANCHOR, pinned=True, has_code=True).why == "other_contract"
    assert check_contract("0x" + "12" * 20, ANCHOR, pinned=False, has_code=True).ok
    assert check_contract(CONTRACT, ANCHOR, pinned=False, has_code=False).why == "no_code"


def test_the_root_must_be_final_with_the_anchors_batch_size_block_and_time() -> None:
    assert check_root(ON_CHAIN, ANCHOR).ok
    assert check_root(None, ANCHOR).why == "not_anchored"
    assert check_root(None, ANCHOR, anchored_later=True).why == "not_final"
    for change in (
        {"block_number": 813},
        {"leaf_count": 3},
        {"batch_seq": 4},
        {"anchored_at": 1_700_000_001},
    ):
        moved: dict[str, Any] = {**ON_CHAIN.__dict__, **change}
        found = check_root(OnChainAnchor(**moved), ANCHOR)
        assert (found.why, found.found) == ("differs", OnChainAnchor(**moved))


def test_the_event_needs_a_successful_transaction_in_the_anchors_block_that_logged_the_root() -> None:
    assert check_event(Inclusion(812, True, True), ANCHOR).ok
    assert check_event(None, ANCHOR).why == "no_receipt"
    assert check_event(Inclusion(812, False, True), ANCHOR).why == "failed_or_moved"
    assert check_event(Inclusion(813, True, True), ANCHOR).why == "failed_or_moved"
    assert check_event(Inclusion(812, True, False), ANCHOR).why == "no_event"
