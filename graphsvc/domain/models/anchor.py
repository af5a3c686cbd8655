"""anchor_now and verify_memory: the chain's side of the contract."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    PrivateAttr,
)

from graphsvc.domain.models.base import ContractOutput


class AnchorResult(ContractOutput):
    """anchor_now. `status` says which envelope this is: "anchored" (final on chain: verify_memory
    passes) and "not_final" (on chain, not final within the finality timeout; `reason` says so) set
    every field; "nothing_pending" and "not_configured" set only `reason`."""

    status: Literal["anchored", "not_final", "nothing_pending", "not_configured"]
    root: str | None = None
    count: int = 0
    txHash: str | None = None
    blockNumber: int | None = None
    anchoredAt: int | None = Field(default=None, description="Block time, milliseconds since the epoch")
    explorerUrl: str | None = None
    graphTag: str | None = Field(
        default=None,
        description="The graph's tag on chain: publish it, so that auditors pin it (graphsvc audit --graph-tag)",
    )
    reason: str | None = None


class VerifyResult(ContractOutput):
    id: str
    verified: bool
    hashValid: bool
    anchored: bool
    proofValid: bool
    onChain: bool
    root: str | None
    txHash: str | None
    explorerUrl: str | None
    problem: str | None
    # Proof length, for the text rendering (not serialised).
    _steps: int = PrivateAttr(default=0)

    def with_steps(self, steps: int) -> VerifyResult:
        """Note the proof's length (for the text rendering)."""
        self._steps = steps
        return self

    @property
    def steps(self) -> int:
        return self._steps
