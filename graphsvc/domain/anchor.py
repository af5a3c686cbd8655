"""Anchoring's values: a batch in each state of its machine (services/anchoring/batches.py), with the
properties of its Batch node that anchoring reads, and what the chain answers.

A state adds the properties that its step wrote (a batch sent back to SEALED keeps them, unused), so
pyright knows from a batch's status which of its properties it may read: `batch["txHash"]` on a
sealed batch, or a misspelt key, is a type error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

Status = Literal["SEALED", "SIGNED", "SUBMITTED", "INCLUDED", "FINALIZED"]
UNFINISHED: tuple[Status, ...] = ("SEALED", "SIGNED", "SUBMITTED", "INCLUDED")


class _Members(TypedDict):
    graph: str
    root: str  # 0x-hex Merkle root
    seq: int  # the batch's number across every graph, as anchored
    count: int  # leaves: its memories, the forget records it holds and its manifest
    memories: NotRequired[int]  # its memories (absent on batches sealed before manifests: all of count)
    # Chained roots (services/anchoring/links.py): absent on batches sealed before them.
    graphTag: NotRequired[str]  # 0x-hex, 32 random bytes of the graph, never its name
    prevRoot: NotRequired[str]  # the graph's root before this one (zero root for its first)


class Sealed(_Members):
    status: Literal["SEALED"]


class _Signed(_Members):
    nonce: int
    rawTx: str  # 0x-hex of the signed transaction, stored before it is sent
    txHash: str
    chainId: int
    contract: str


class Sent(_Signed):
    status: Literal["SIGNED", "SUBMITTED"]


class OnChain(_Signed):
    status: Literal["INCLUDED", "FINALIZED"]
    blockNumber: int
    anchoredAt: int  # unix milliseconds of the including block


Batch = Sealed | Sent | OnChain


@dataclass(frozen=True)
class SignedAnchor:
    nonce: int
    raw: str  # 0x-hex of the signed type-2 transaction
    tx_hash: str


@dataclass(frozen=True)
class Inclusion:
    block_number: int
    success: bool
    logged_root: bool  # the receipt holds RootAnchored for our root


@dataclass(frozen=True)
class OnChainAnchor:
    anchored_at: int  # seconds
    block_number: int
    leaf_count: int
    batch_seq: int


@dataclass(frozen=True)
class ChainLink:
    """linkOf(root): the root's place in its graph's list on chain (position 0: not anchored)."""

    graph_tag: str
    prev_root: str
    position: int
    anchor: OnChainAnchor


def included(batch: Batch | None) -> OnChain | None:
    """The batch if its root is on chain (INCLUDED or FINALIZED), else None."""
    if batch is not None and (batch["status"] == "INCLUDED" or batch["status"] == "FINALIZED"):
        return batch
    return None
