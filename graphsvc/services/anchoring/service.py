"""anchor_now, reconcile and verify_memory: the anchoring service, made of three parts.

lease.py    one writer at a time across replicas (AnchorState: owner, expiry, fencing token)
batches.py  the batch state machine, SEALED → SIGNED → SUBMITTED → INCLUDED → FINALIZED
proofs.py   verify_memory and the proof bundle (checks: graphsvc.domain.checklist)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from graphsvc.config import FINALITY_TIMEOUT_S, LEASE_TTL_S, RECEIPT_TIMEOUT_S
from graphsvc.domain.anchor import UNFINISHED, OnChain
from graphsvc.domain.models import AnchorResult, GraphInput, IdInput, VerifyResult
from graphsvc.domain.proof import ProofBundle
from graphsvc.services.anchoring.batches import Batches
from graphsvc.services.anchoring.lease import Lease
from graphsvc.services.anchoring.ports import Chain, Clock
from graphsvc.services.anchoring.proofs import Proofs
from graphsvc.services.ports import Store


@dataclass(frozen=True)
class State:
    """Anchoring across every graph, for /metrics."""

    memories_pending: int
    batches: Mapping[str, int]  # per status
    last_finalized_at: float | None  # unix seconds of the newest finalized batch's block


class AnchoringService:
    def __init__(
        self,
        store: Store,
        chain: Chain | None,
        *,
        explorer_url: Callable[[str], str | None] = lambda _: None,
        receipt_timeout_s: float = RECEIPT_TIMEOUT_S,
        finality_timeout_s: float = FINALITY_TIMEOUT_S,
        lease_ttl_s: float = LEASE_TTL_S,
        owner: str | None = None,
        clock: Clock | None = None,
    ):
        self._store = store
        self._chain = chain
        self._explorer_url = explorer_url
        clock = clock or Clock()
        self.owner = owner or f"{os.uname().nodename}:{os.getpid()}:{secrets.token_hex(3)}"
        self.lease = Lease(store, self.owner, ttl_s=lease_ttl_s, clock=clock)
        self.proofs = Proofs(store, chain, explorer_url)
        self.batches = (
            None
            if chain is None
            else Batches(
                store,
                chain,
                self.owner,
                receipt_timeout_s=receipt_timeout_s,
                finality_timeout_s=finality_timeout_s,
                clock=clock,
            )
        )

    @property
    def configured(self) -> bool:
        return self._chain is not None

    async def anchor_now(self, req: GraphInput) -> AnchorResult:
        """Finish the graph's unfinished batches (an earlier call cut short), seal every pending
        memory into one batch, anchor its root and wait (bounded, outside the lease) until every one
        of these roots is final, so that verify_memory passes when this returns. The answer describes
        the new batch, else the last one finished. A batch not final within the finality timeout
        answers status "not_final" with the reason.

        Raises:
            Conflict: another replica holds the anchoring lease, or the contract refuses the batch.
            ChainUnavailable: the chain cannot be reached; the batch stays sealed and the next call
                (or start-up) finishes it.
        """
        if self.batches is None:
            return AnchorResult(
                status="not_configured",
                reason="anchoring needs MONAD_RPC_URL and ANCHOR_CONTRACT (and a signer key)",
            )
        batches = self.batches
        async with self.lease.held() as fence:
            done = await batches.finish(fence, graph=req.graph)
            sealed = await batches.seal(req.graph, fence)
            if sealed is not None:
                done.append(await batches.advance(sealed, fence))
        if not done:
            return AnchorResult(status="nothing_pending", reason="no memory of this graph is waiting")
        batch = done[-1]
        final = [b["status"] == "FINALIZED" or await batches.await_finality(b["root"]) for b in done]
        if not all(final):
            return self.anchored(batch).model_copy(
                update={
                    "status": "not_final",
                    "reason": f"included in block {batch['blockNumber']} but not final after "
                    f"{batches.finality_timeout_s:g} s; verify_memory passes once it is",
                }
            )
        return self.anchored(batch)

    async def reconcile(self) -> list[str]:
        """Finish every unfinished batch (start-up, after a crash or an RPC outage); returns their roots."""
        if self.batches is None:
            return []
        async with self.lease.held() as fence:
            return [batch["root"] for batch in await self.batches.finish(fence)]

    async def state(self) -> State:
        """Memories pending, batches per status and the newest finalized anchor, across every graph:
        label counts and index seeks, whatever the graph's size."""
        [row] = await self._store.run("anchor/state", unfinished=UNFINISHED)
        batches: dict[str, int] = dict(zip(UNFINISHED, row["counts"], strict=True))
        batches["FINALIZED"] = row["batches"] - sum(batches.values())
        last = row["lastFinalized"]
        return State(row["pending"], batches, None if last is None else last / 1000)

    async def unfinished(self) -> int:
        """The batches that reconciliation (or their graph's next anchor_now) has to finish."""
        [row] = await self._store.run("anchor/unfinished_count", statuses=UNFINISHED)
        return row["unfinished"]

    async def verify(self, req: IdInput) -> VerifyResult:
        """verify_memory: see Proofs.verify."""
        return await self.proofs.verify(req)

    async def bundle(self, req: IdInput) -> ProofBundle:
        """The memory's proof bundle: see Proofs.bundle."""
        return await self.proofs.bundle(req)

    def anchored(self, batch: OnChain) -> AnchorResult:
        """anchor_now's answer for a batch on chain."""
        return AnchorResult(
            status="anchored",
            root=batch["root"],
            count=batch.get("memories", batch["count"]),
            txHash=batch["txHash"],
            blockNumber=batch["blockNumber"],
            anchoredAt=batch["anchoredAt"],
            explorerUrl=self._explorer_url(batch["txHash"]),
            graphTag=batch.get("graphTag"),
        )
