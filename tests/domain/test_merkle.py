"""The Merkle tree agrees with OpenZeppelin's standard-v1 format (its own test vector)."""

from __future__ import annotations

import pytest

from graphsvc.domain.merkle import (
    MEMORY_LEAF_TYPES,
    MerkleTree,
    leaf_hash,
    memory_leaf,
    pack_proof,
    unpack_proof,
    verify,
)

OZ_ROOT = "6deb52b5da8fd108f79fab00341f38d2587896634c646ee52e49f845680a70c8"


def test_openzeppelin_standard_v1_vector() -> None:
    # @openzeppelin/merkle-tree test/dumps/standard-v1.sorted.1_0_6.json: encoding ["string"], "a".."f"
    tree = MerkleTree.build([leaf_hash(["string"], [v]) for v in "abcdef"])
    assert tree.root.hex() == OZ_ROOT


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 1000])
def test_every_proof_folds_to_the_root_and_a_tampered_one_does_not(count: int) -> None:
    leaves = [leaf_hash(MEMORY_LEAF_TYPES, [f"mem_{i:04d}", bytes([i % 256]) * 32]) for i in range(count)]
    tree = MerkleTree.build(leaves)
    assert len(tree.nodes) == 2 * count - 1
    for leaf in leaves:
        proof = tree.proof(leaf)
        assert verify(tree.root, leaf, proof)
        assert len(proof) <= max(1, count - 1).bit_length()
    forged = leaf_hash(MEMORY_LEAF_TYPES, ["mem_0000", b"\xff" * 32])
    assert not verify(tree.root, forged, tree.proof(leaves[0]))


def test_a_one_leaf_tree_has_the_leaf_as_root_and_an_empty_proof() -> None:
    leaf = leaf_hash(MEMORY_LEAF_TYPES, ["mem_1", b"\x01" * 32])
    tree = MerkleTree.build([leaf])
    assert (tree.root, tree.proof(leaf)) == (leaf, [])


def test_an_empty_tree_is_refused() -> None:
    with pytest.raises(ValueError):
        MerkleTree.build([])


@pytest.mark.parametrize(
    "memory_id", ["mem_1", "mem_0123456789abcdef", "x" * 32, "x" * 33, "ünïcode:Label", ""]
)
def test_the_hand_encoded_memory_leaf_equals_the_abi_encoded_one(memory_id: str) -> None:
    digest = bytes(range(32))
    assert memory_leaf(memory_id, digest) == leaf_hash(MEMORY_LEAF_TYPES, [memory_id, digest])


def test_a_packed_proof_unpacks_to_itself() -> None:
    proof = [bytes([i]) * 32 for i in range(5)]
    assert unpack_proof(pack_proof(proof)) == proof
