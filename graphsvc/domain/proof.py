"""The proof bundle (`graphsvc.proof/v2`): everything a third party needs to check a memory alone.

A bundle names how each value was made, so a verifier can be written from the bundle and the README:

    hash = keccak256(RFC 8785 canonical JSON of `envelope`)        (text NFC-normalised when stored)
    leaf = keccak256(keccak256(abi.encode(string id, bytes32 hash)))
    root = the leaf folded with each `proof` step: keccak256(min(a, b) ++ max(a, b))
    on chain: anchorOf(root) at the `finalized` block of `anchor.chainId`, in `anchor.contract`,
              and the RootAnchored(root, ...) event in the receipt of `anchor.txHash`

A forgotten memory's bundle has no envelope (its content is gone) and says when it was forgotten;
its id, hash and proof still show that a memory with that hash was anchored. The JSON Schema of this
model is committed as contracts/proof-bundle.schema.json (a test keeps the two equal).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BUNDLE_SCHEMA = "graphsvc.proof/v2"
Hex32 = Annotated[str, Field(pattern=r"^0x[0-9a-f]{64}$", description="32 bytes, 0x-prefixed lowercase hex")]
Address = Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{40}$", description="20-byte EVM address")]
# strict: a JSON integer only, as the JSON Schema says (lax mode took "31337", 12.0 and true)
Count = Annotated[int, Field(ge=0, le=2**64 - 1, strict=True)]

# The contract views and event a verifier uses, as in contracts/GraphsvcAnchor.json (a test checks).
VERIFIER_ABI: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "anchorOf",
        "stateMutability": "view",
        "inputs": [{"name": "root", "type": "bytes32", "internalType": "bytes32"}],
        "outputs": [
            {
                "name": "",
                "type": "tuple",
                "internalType": "struct GraphsvcAnchor.Anchor",
                "components": [
                    {"name": "anchoredAt", "type": "uint64", "internalType": "uint64"},
                    {"name": "blockNumber", "type": "uint64", "internalType": "uint64"},
                    {"name": "leafCount", "type": "uint32", "internalType": "uint32"},
                    {"name": "batchSeq", "type": "uint64", "internalType": "uint64"},
                ],
            }
        ],
    },
    {
        "type": "function",
        "name": "verifyMemory",
        "stateMutability": "view",
        "inputs": [
            {"name": "root", "type": "bytes32", "internalType": "bytes32"},
            {"name": "id", "type": "string", "internalType": "string"},
            {"name": "hash", "type": "bytes32", "internalType": "bytes32"},
            {"name": "proof", "type": "bytes32[]", "internalType": "bytes32[]"},
        ],
        "outputs": [{"name": "", "type": "bool", "internalType": "bool"}],
    },
    {
        "type": "event",
        "name": "RootAnchored",
        "anonymous": False,
        "inputs": [
            {"name": "root", "type": "bytes32", "indexed": True, "internalType": "bytes32"},
            {"name": "batchSeq", "type": "uint64", "indexed": True, "internalType": "uint64"},
            {"name": "submitter", "type": "address", "indexed": True, "internalType": "address"},
            {"name": "leafCount", "type": "uint32", "indexed": False, "internalType": "uint32"},
            {"name": "anchoredAt", "type": "uint64", "indexed": False, "internalType": "uint64"},
        ],
    },
]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HashRecipe(_Part):
    """How `hash` is made from `envelope`."""

    name: Literal["graphsvc.memory-hash/v1"] = "graphsvc.memory-hash/v1"
    canonicalization: Literal["RFC 8785"] = "RFC 8785"
    textNormalization: Literal["NFC"] = "NFC"
    digest: Literal["keccak256"] = "keccak256"


class LeafSpec(_Part):
    """How the Merkle leaf is made and the tree is built (OpenZeppelin StandardMerkleTree)."""

    tree: Literal["openzeppelin-standard-v1"] = "openzeppelin-standard-v1"
    encoding: tuple[Literal["string"], Literal["bytes32"]] = ("string", "bytes32")
    values: tuple[Literal["id"], Literal["hash"]] = ("id", "hash")


class Forgotten(_Part):
    forgottenAt: str = Field(max_length=64, description="When the memory was forgotten (UTC)")


class AnchorRecord(_Part):
    """Where the root was anchored: what a verifier checks on chain."""

    chainId: Count
    contract: Address
    txHash: Hex32
    blockNumber: Count
    batchSeq: Count
    leafCount: Annotated[int, Field(ge=1, le=2**32 - 1, strict=True)]
    anchoredAt: Count = Field(description="Block time, milliseconds since the epoch")
    explorerUrl: str | None = Field(default=None, max_length=512, description="Null where none exists")


class ProofBundle(BaseModel):
    """A memory, its hash and Merkle proof, and its on-chain anchor (see the module docstring)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        serialize_by_alias=True,
        title="graphsvc proof bundle v2",
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BUNDLE_SCHEMA},
    )

    # required, as both verifiers refuse a bundle without it (the schema says so too)
    schema_: Literal["graphsvc.proof/v2"] = Field(alias="schema")
    id: str = Field(min_length=1, max_length=300, description="The memory's id")
    hash: Hex32
    envelope: dict[str, Any] | None = Field(
        description="The hashed envelope (null when the memory was forgotten)"
    )
    forgotten: Forgotten | None = None
    hashRecipe: HashRecipe = HashRecipe()
    leaf: LeafSpec = LeafSpec()
    proof: list[Hex32] = Field(max_length=64, description="Sibling hashes from the leaf up")
    root: Hex32
    anchor: AnchorRecord
    abi: list[dict[str, Any]] = Field(
        default_factory=lambda: VERIFIER_ABI, description="The contract views and event a verifier uses"
    )

    @model_validator(mode="after")
    def _envelope_or_forgotten(self) -> ProofBundle:
        if (self.envelope is None) == (self.forgotten is None):
            raise ValueError("a bundle has an envelope, or is marked forgotten without one")
        return self


def json_schema() -> str:
    """The committed contracts/proof-bundle.schema.json: `python -m graphsvc.domain.proof > FILE`."""
    return json.dumps(ProofBundle.model_json_schema(by_alias=True), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(json_schema(), end="")
