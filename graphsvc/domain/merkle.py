"""Merkle trees in OpenZeppelin's "standard-v1" format, so proofs verify with `MerkleProof.verify`.

Leaf = keccak256(keccak256(abi.encode(values))); leaves sorted ascending; the tree is an array of
2n-1 nodes with leaf i (in sorted order) at index len-1-i; parent = keccak256(sorted pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from eth_abi.abi import encode
from eth_utils.crypto import keccak

MEMORY_LEAF_TYPES = ("string", "bytes32")  # (memory id, memory hash)


def leaf_hash(types: Sequence[str], values: Sequence[object]) -> bytes:
    return keccak(keccak(encode(list(types), list(values))))


def memory_leaf(memory_id: str, memory_hash: bytes) -> bytes:
    """`leaf_hash(MEMORY_LEAF_TYPES, [memory_id, memory_hash])`, encoded by hand: the hot path of sealing.

    abi.encode(string, bytes32) = offset 64 | hash | byte length | the bytes, zero-padded to 32.
    """
    data = memory_id.encode()
    padded = data + bytes(-len(data) % 32)
    return keccak(keccak((64).to_bytes(32, "big") + memory_hash + len(data).to_bytes(32, "big") + padded))


def pack_proof(proof: Sequence[bytes]) -> bytes:
    """A proof as one byte string (32 bytes a step): compact to store and fast to send."""
    return b"".join(proof)


def unpack_proof(packed: bytes) -> list[bytes]:
    return [bytes(packed[i : i + 32]) for i in range(0, len(packed), 32)]


def _pair(a: bytes, b: bytes) -> bytes:
    return keccak(min(a, b) + max(a, b))


@dataclass(frozen=True)
class MerkleTree:
    nodes: tuple[bytes, ...]
    positions: dict[bytes, int] = field(compare=False, repr=False)

    @classmethod
    def build(cls, leaves: Sequence[bytes]) -> MerkleTree:
        if not leaves:
            raise ValueError("a Merkle tree needs at least one leaf")
        ordered = sorted(leaves)
        size = 2 * len(ordered) - 1
        nodes: list[bytes] = [b""] * size
        for i, leaf in enumerate(ordered):
            nodes[size - 1 - i] = leaf
        for i in range(size - 1 - len(ordered), -1, -1):
            nodes[i] = _pair(nodes[2 * i + 1], nodes[2 * i + 2])
        return cls(tuple(nodes), {leaf: size - 1 - i for i, leaf in enumerate(ordered)})

    @property
    def root(self) -> bytes:
        return self.nodes[0]

    def proof(self, leaf: bytes) -> list[bytes]:
        """Sibling hashes from `leaf` up to the root (empty for a one-leaf tree)."""
        index = self.positions[leaf]
        proof: list[bytes] = []
        while index > 0:
            proof.append(self.nodes[index + 1 if index % 2 else index - 1])
            index = (index - 1) // 2
        return proof


def verify(root: bytes, leaf: bytes, proof: Sequence[bytes]) -> bool:
    folded = leaf
    for sibling in proof:
        folded = _pair(folded, sibling)
    return folded == root
