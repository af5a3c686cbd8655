"""Merkle batches as a state machine persisted in Neo4j.

    SEALED ──sign──▶ SIGNED ──broadcast──▶ SUBMITTED ──receipt──▶ INCLUDED ──finalized──▶ FINALIZED

Each state is written before the external step that follows it (the signed transaction is stored
before it is broadcast), so a crash at any point leaves a batch that `finish` can complete: a signed
transaction is simply sent again (harmless), and a root is never anchored twice (the contract refuses
a duplicate root as the last backstop). Chain calls never run inside a Neo4j transaction. Every write
names the lease's fence (lease.py): a replica that lost the lease writes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from graphsvc.domain.anchor import UNFINISHED, Batch, OnChain, Sealed, Sent, Status
from graphsvc.domain.hashing import format_timestamp
from graphsvc.domain.manifest import forget_leaf, manifest_leaf
from graphsvc.domain.merkle import MerkleTree, memory_leaf, pack_proof
from graphsvc.errors import ChainUnavailable, Conflict
from graphsvc.services.anchoring.links import link_of
from graphsvc.services.anchoring.ports import Chain, Clock
from graphsvc.services.ports import Store

log = logging.getLogger(__name__)
MAX_BATCH = 100_000
POLL_S = 0.25  # between two reads of a receipt or of the finalized block


def _leaves(graph: str, pending: dict[str, Any]) -> tuple[list[bytes], str]:
    """The batch's leaves in the seal's order (its memories, its forget records, its manifest last),
    and the manifest's hash."""
    ids, forgets = pending["ids"], pending["forgets"]
    memories = [memory_leaf(i, bytes.fromhex(h[2:])) for i, h in zip(ids, pending["hashes"], strict=True)]
    records = [forget_leaf(graph, f["id"], f["hash"], f["forgottenAt"])[1] for f in forgets]
    before = None if pending["manifested"] else pending["before"]
    digest, manifest = manifest_leaf(
        graph, zip(pending["seqs"], ids, strict=True), [f["id"] for f in forgets], before
    )
    return [*memories, *records, manifest], digest


class Batches:
    """Seals a graph's pending memories and drives each batch to the chain; every write under a fence."""

    def __init__(
        self,
        store: Store,
        chain: Chain,
        owner: str,
        *,
        receipt_timeout_s: float,
        finality_timeout_s: float,
        clock: Clock,
    ):
        self._store = store
        self._chain = chain
        self._owner = owner
        self._receipt_timeout_s = receipt_timeout_s
        self.finality_timeout_s = finality_timeout_s
        self._clock = clock

    async def finish(self, fence: int, graph: str | None = None) -> list[OnChain]:
        """Advance unfinished batches (of one graph, or all) and return them as advanced; one that cannot
        move does not block the rest.

        Raises:
            ChainUnavailable: a batch of `graph` could not be finished (with `graph` only).
        """
        rows = await self._store.run("anchor/unfinished", statuses=UNFINISHED)
        finished: list[OnChain] = []
        stuck: list[ChainUnavailable] = []
        for row in rows:
            batch: Batch = row["batch"]
            if (graph is not None and batch["graph"] != graph) or not self._ours(batch):
                continue
            try:
                finished.append(await self.advance(batch, fence))
            except ChainUnavailable as e:
                log.warning("batch %s not finished yet: %s", batch["root"], e)
                stuck.append(e)
        if graph is not None and stuck:
            raise stuck[0]
        return finished

    def _ours(self, batch: Batch) -> bool:
        contract: str | None = batch.get("contract")
        if contract and contract.lower() != (self._chain.address or "").lower():
            log.warning(
                "batch %s was signed for contract %s, not this one: left alone", batch["root"], contract
            )
            return False
        return True

    async def await_finality(self, root: str) -> bool:
        """Poll until the root is anchored at the `finalized` block (then mark the batch FINALIZED:
        a fact read from the chain, so it needs no lease); False when the timeout passes first."""
        deadline = self._clock.monotonic() + self.finality_timeout_s
        while await self._chain.anchor_of(root, "finalized") is None:
            if self._clock.monotonic() >= deadline:
                return False
            await self._clock.sleep(POLL_S)
        await self._store.run("anchor/finalized", root=root)
        return True

    async def seal(self, graph: str, fence: int) -> Sealed | None:
        """SEALED: pending members, their proofs and the root, written in one transaction. The leaves
        are the pending memories, the forget records waiting, and the batch's manifest
        (domain/manifest.py)."""

        async def work(tx: Any) -> Sealed | None:
            [pending] = await tx.run("anchor/pending", graph=graph, limit=MAX_BATCH)
            ids, forgets = pending["ids"], pending["forgets"]
            if not ids and not forgets:
                return None
            link = await link_of(tx, graph, self._chain.address)
            leaves, manifest_hash = _leaves(graph, pending)
            tree = MerkleTree.build(leaves)
            root = "0x" + tree.root.hex()
            proofs = [pack_proof(tree.proof(leaf)) for leaf in leaves]
            rows = await tx.run(
                "anchor/seal",
                owner=self._owner,
                fence=fence,
                graph=graph,
                root=root,
                ids=ids,
                proofs=proofs[: len(ids)],
                forgets=[f["id"] for f in forgets],
                forgetProofs=proofs[len(ids) : -1],
                count=len(leaves),
                manifestHash=manifest_hash,
                manifestProof=proofs[-1],
                now=format_timestamp(self._clock.now()),
                **link,
            )
            if not rows or (rows[0]["sealed"], rows[0]["recorded"]) != (len(ids), len(forgets)):
                raise Conflict("the anchoring lease was lost or the pending set changed; nothing was sealed")
            return {
                "graph": graph,
                "root": root,
                "seq": rows[0]["seq"],
                "count": len(leaves),
                "memories": len(ids),
                "status": "SEALED",
                **link,
            }

        return await self._store.write_transaction(work, bounded=False)  # up to MAX_BATCH members

    async def advance(self, batch: Batch, fence: int) -> OnChain:
        """Drive one batch to INCLUDED (or FINALIZED when already final), persisting every step.

        Raises:
            ChainUnavailable: the chain could not take it yet; it stays where it got to.
            Conflict: the lease was lost, or the contract refuses the batch.
        """
        for _ in range(3):
            if batch["status"] == "SEALED":
                batch = await self._sign(batch, fence)
            if batch["status"] == "SIGNED" or batch["status"] == "SUBMITTED":
                batch = await self._send(batch, fence)
            if batch["status"] == "INCLUDED":
                return await self._finalize_if_final(batch, fence)
            if batch["status"] == "FINALIZED":
                return batch
        raise ChainUnavailable(f"batch {batch['root']} could not be anchored yet; it will be retried")

    async def _update(self, batch: Batch, fence: int, status: Status, **changes: Any) -> Any:
        """Move `batch` to `status` with what that step wrote; returns the batch as Neo4j holds it now
        (of `status`: the caller names its type)."""
        rows = await self._store.run(
            "anchor/update",
            owner=self._owner,
            fence=fence,
            root=batch["root"],
            changes={"status": status, **changes},
        )
        if not rows:
            raise Conflict("the anchoring lease was lost to another replica")
        return rows[0]["batch"]

    async def _sign(self, batch: Sealed, fence: int) -> Sent:
        chain = self._chain
        if "graphTag" not in batch or "prevRoot" not in batch:  # sealed before chained roots
            link = await self._store.write_transaction(lambda tx: link_of(tx, batch["graph"], chain.address))
            batch = await self._update(batch, fence, "SEALED", **link)
        signed = await chain.sign_anchor(
            batch["root"],
            batch["seq"],
            batch["count"],
            await chain.pending_nonce(),
            graph_tag=batch.get("graphTag", ""),
            prev_root=batch.get("prevRoot", ""),
        )
        return await self._update(
            batch,
            fence,
            "SIGNED",
            nonce=signed.nonce,
            rawTx=signed.raw,
            txHash=signed.tx_hash,
            chainId=await chain.chain_id(),
            contract=chain.address,
        )

    async def _send(self, batch: Sent, fence: int) -> Batch:
        """Broadcast (again, harmlessly, after a crash) and wait for the receipt."""
        await self._chain.broadcast(batch["rawTx"])
        if batch["status"] == "SIGNED":
            batch = await self._update(batch, fence, "SUBMITTED")
        return await self._await_inclusion(batch, fence)

    async def _await_inclusion(self, batch: Sent, fence: int) -> OnChain | Sealed:
        chain = self._chain
        deadline = self._clock.monotonic() + self._receipt_timeout_s
        while self._clock.monotonic() < deadline:
            inclusion = await chain.inclusion(batch["txHash"], batch["root"])
            if inclusion is not None:
                if inclusion.success and inclusion.logged_root:
                    return await self._included(batch, fence)
                break
            await self._clock.sleep(POLL_S)
        # No good receipt: the root may have been anchored by an earlier transaction, or our nonce
        # may have gone to another transaction (then sign again), or the tx is still waiting.
        if await chain.anchor_of(batch["root"], "latest") is not None:
            return await self._included(batch, fence)
        if await chain.mined_nonce() > batch["nonce"]:
            return await self._update(batch, fence, "SEALED")
        raise ChainUnavailable(
            f"transaction {batch['txHash']} is not mined yet; the batch will be reconciled"
        )

    async def _included(self, batch: Sent, fence: int) -> OnChain:
        record = await self._chain.anchor_of(batch["root"], "latest")
        if record is None:
            raise ChainUnavailable("the chain does not show the anchor yet")
        return await self._update(
            batch, fence, "INCLUDED", blockNumber=record.block_number, anchoredAt=record.anchored_at * 1000
        )

    async def _finalize_if_final(self, batch: OnChain, fence: int) -> OnChain:
        if await self._chain.anchor_of(batch["root"], "finalized") is not None:
            return await self._update(batch, fence, "FINALIZED")
        return batch
