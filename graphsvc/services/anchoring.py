"""anchor_now and verify_memory: Merkle batches as a state machine persisted in Neo4j.

    SEALED ──sign──▶ SIGNED ──broadcast──▶ SUBMITTED ──receipt──▶ INCLUDED ──finalized──▶ FINALIZED

Each state is written before the external step that follows it (the signed transaction is stored
before it is broadcast), so a crash at any point leaves a batch that `reconcile` can finish: a
signed transaction is simply sent again (harmless), and a root is never anchored twice (the contract
refuses a duplicate root as the last backstop). Chain calls never run inside a Neo4j transaction.
One writer at a time across replicas: a lease node in Neo4j with a fencing token.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from graphsvc.domain.anchor import (
    UNFINISHED,
    Batch,
    Inclusion,
    OnChain,
    OnChainAnchor,
    Sealed,
    Sent,
    SignedAnchor,
    Status,
    included,
)
from graphsvc.domain.hashing import format_timestamp, memory_envelope, memory_hash
from graphsvc.domain.merkle import MerkleTree, memory_leaf, pack_proof, unpack_proof, verify
from graphsvc.domain.models import AnchorResult, GraphInput, IdInput, VerifyResult
from graphsvc.domain.proof import AnchorRecord, Forgotten, ProofBundle
from graphsvc.errors import ChainUnavailable, Conflict, GraphsvcError, NotFound
from graphsvc.services.ports import Row, Store

log = logging.getLogger(__name__)
MAX_BATCH = 100_000
RECEIPT_POLL_S = 0.25
LEASE_WAIT_S = 5.0  # anchor_now waits this long for another replica's batch before answering 409


class Chain(Protocol):
    """What anchoring needs of graphsvc.chain.anchor.AnchorContract."""

    @property
    def address(self) -> str | None: ...

    async def chain_id(self) -> int: ...
    async def pending_nonce(self) -> int: ...
    async def mined_nonce(self) -> int: ...
    async def sign_anchor(self, root: str, batch_seq: int, leaf_count: int, nonce: int) -> SignedAnchor: ...
    async def broadcast(self, raw: str) -> None: ...
    async def inclusion(self, tx_hash: str, root: str) -> Inclusion | None: ...
    async def anchor_of(self, root: str, block: str | int = "finalized") -> OnChainAnchor | None: ...
    async def verify_memory(self, root: str, memory_id: str, memory_hash: str, proof: list[str]) -> bool: ...


@dataclass(frozen=True)
class State:
    """Anchoring across every graph, for /metrics."""

    memories_pending: int
    batches: Mapping[str, int]  # per status
    last_finalized_at: float | None  # unix seconds of the newest finalized batch's block


def _hex(data: bytes) -> str:
    return "0x" + data.hex()


class AnchoringService:
    def __init__(
        self,
        store: Store,
        chain: Chain | None,
        *,
        explorer_url: Callable[[str], str | None] = lambda _: None,
        receipt_timeout_s: float = 60,
        finality_timeout_s: float = 30,
        lease_ttl_s: float = 120,
        owner: str | None = None,
    ):
        self._store = store
        self._chain = chain
        self._explorer_url = explorer_url
        self._receipt_timeout_s = receipt_timeout_s
        self._finality_timeout_s = finality_timeout_s
        self._lease_ttl_ms = int(lease_ttl_s * 1000)
        self.owner = owner or f"{os.uname().nodename}:{os.getpid()}:{secrets.token_hex(3)}"
        self._lock = asyncio.Lock()

    @property
    def configured(self) -> bool:
        return self._chain is not None

    # ---- anchor_now -----------------------------------------------------------------------------

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
        if self._chain is None:
            return AnchorResult(
                status="not_configured",
                reason="anchoring needs MONAD_RPC_URL and ANCHOR_CONTRACT (and a signer key)",
            )
        async with self._leased() as fence:
            batches = await self._finish(fence, graph=req.graph)
            sealed = await self.seal(req.graph, fence)
            if sealed is not None:
                batches.append(await self.advance(sealed, fence))
        if not batches:
            return AnchorResult(status="nothing_pending", reason="no memory of this graph is waiting")
        batch = batches[-1]
        final = [b["status"] == "FINALIZED" or await self._await_finality(b["root"]) for b in batches]
        if not all(final):
            return self._anchored(batch).model_copy(
                update={
                    "status": "not_final",
                    "reason": f"included in block {batch['blockNumber']} but not final after "
                    f"{self._finality_timeout_s:g} s; verify_memory passes once it is",
                }
            )
        return self._anchored(batch)

    async def _await_finality(self, root: str) -> bool:
        """Poll until the root is anchored at the `finalized` block (then mark the batch FINALIZED:
        a fact read from the chain, so it needs no lease); False when the timeout passes first."""
        chain = self._require_chain()
        deadline = time.monotonic() + self._finality_timeout_s
        while await chain.anchor_of(root, "finalized") is None:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(RECEIPT_POLL_S)
        await self._store.run("anchor/finalized", root=root)
        return True

    async def reconcile(self) -> list[str]:
        """Finish every unfinished batch (start-up, after a crash or an RPC outage); returns their roots."""
        if self._chain is None:
            return []
        async with self._leased() as fence:
            return [batch["root"] for batch in await self._finish(fence)]

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

    def _anchored(self, batch: OnChain) -> AnchorResult:
        return AnchorResult(
            status="anchored",
            root=batch["root"],
            count=batch["count"],
            txHash=batch["txHash"],
            blockNumber=batch["blockNumber"],
            anchoredAt=batch["anchoredAt"],
            explorerUrl=self._explorer_url(batch["txHash"]),
        )

    @asynccontextmanager
    async def _leased(self) -> AsyncGenerator[int]:
        """The anchoring lease (and this process's lock), renewed while held; yields its fence."""
        async with self._lock:
            fence = await self._acquire_within(LEASE_WAIT_S)
            renewing = asyncio.create_task(self.renew(fence))
            try:
                yield fence
            finally:
                renewing.cancel()
                await self.release()

    async def acquire(self) -> int:
        rows = await self._store.run("anchor/lease", owner=self.owner, ttlMs=self._lease_ttl_ms)
        if not rows:
            raise Conflict("another graphsvc replica is anchoring right now; try again shortly")
        return int(rows[0]["fence"])

    async def _acquire_within(self, seconds: float) -> int:
        """The lease, waiting up to `seconds` for another replica to finish (a batch takes a second or
        two) before answering Conflict."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                return await self.acquire()
            except Conflict:
                if time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(RECEIPT_POLL_S)

    async def renew(self, fence: int) -> None:
        """Keep the lease while working: every third of its time-to-live, until cancelled."""
        while True:
            await asyncio.sleep(self._lease_ttl_ms / 3000)
            try:
                if not await self._store.run(
                    "anchor/renew", owner=self.owner, fence=fence, ttlMs=self._lease_ttl_ms
                ):
                    return  # lost: the fenced writes will refuse, nothing more to keep
            except GraphsvcError as e:  # Neo4j away for a moment: the lease may still hold
                log.warning("could not renew the anchoring lease: %s", e)

    async def release(self) -> None:
        await self._store.run("anchor/release", owner=self.owner)

    async def _finish(self, fence: int, graph: str | None = None) -> list[OnChain]:
        """Advance unfinished batches (of one graph, or all) and return them as advanced; one that cannot
        move does not block the rest.

        Raises:
            ChainUnavailable: a batch of `graph` could not be finished (with `graph` only).
        """
        chain = self._require_chain()
        rows = await self._store.run("anchor/unfinished", statuses=UNFINISHED)
        finished: list[OnChain] = []
        stuck: list[ChainUnavailable] = []
        for row in rows:
            batch: Batch = row["batch"]
            if graph is not None and batch["graph"] != graph:
                continue
            contract: str | None = batch.get("contract")
            if contract and contract.lower() != (chain.address or "").lower():
                log.warning(
                    "batch %s was signed for contract %s, not this one: left alone",
                    batch["root"],
                    contract,
                )
                continue
            try:
                finished.append(await self.advance(batch, fence))
            except ChainUnavailable as e:
                log.warning("batch %s not finished yet: %s", batch["root"], e)
                stuck.append(e)
        if graph is not None and stuck:
            raise stuck[0]
        return finished

    # ---- the state machine ----------------------------------------------------------------------

    async def seal(self, graph: str, fence: int) -> Sealed | None:
        """SEALED: pending members, their proofs and the root, written in one transaction."""

        async def work(tx: Any) -> Sealed | None:
            [pending] = await tx.run("anchor/pending", graph=graph, limit=MAX_BATCH)
            ids = pending["ids"]
            if not ids:
                return None
            leaves = [
                memory_leaf(i, bytes.fromhex(h[2:])) for i, h in zip(ids, pending["hashes"], strict=True)
            ]
            tree = MerkleTree.build(leaves)
            root = _hex(tree.root)
            rows = await tx.run(
                "anchor/seal",
                owner=self.owner,
                fence=fence,
                graph=graph,
                root=root,
                ids=ids,
                proofs=[pack_proof(tree.proof(leaf)) for leaf in leaves],
                now=format_timestamp(datetime.now(UTC)),
            )
            if not rows or rows[0]["sealed"] != len(ids):
                raise Conflict("the anchoring lease was lost or the pending set changed; nothing was sealed")
            return {
                "graph": graph,
                "root": root,
                "seq": rows[0]["seq"],
                "count": len(ids),
                "status": "SEALED",
            }

        return await self._store.write_transaction(work, bounded=False)  # up to MAX_BATCH members

    async def _update(self, batch: Batch, fence: int, status: Status, **changes: Any) -> Any:
        """Move `batch` to `status` with what that step wrote; returns the batch as Neo4j holds it now
        (of `status`: the caller names its type)."""
        rows = await self._store.run(
            "anchor/update",
            owner=self.owner,
            fence=fence,
            root=batch["root"],
            changes={"status": status, **changes},
        )
        if not rows:
            raise Conflict("the anchoring lease was lost to another replica")
        return rows[0]["batch"]

    async def advance(self, batch: Batch, fence: int) -> OnChain:
        """Drive one batch to INCLUDED (or FINALIZED when already final), persisting every step."""
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

    async def _sign(self, batch: Sealed, fence: int) -> Sent:
        chain = self._require_chain()
        signed = await chain.sign_anchor(
            batch["root"], batch["seq"], batch["count"], await chain.pending_nonce()
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
        await self._require_chain().broadcast(batch["rawTx"])
        if batch["status"] == "SIGNED":
            batch = await self._update(batch, fence, "SUBMITTED")
        return await self._await_inclusion(batch, fence)

    async def _await_inclusion(self, batch: Sent, fence: int) -> OnChain | Sealed:
        chain = self._require_chain()
        deadline = time.monotonic() + self._receipt_timeout_s
        while time.monotonic() < deadline:
            inclusion = await chain.inclusion(batch["txHash"], batch["root"])
            if inclusion is not None:
                if inclusion.success and inclusion.logged_root:
                    return await self._included(batch, fence)
                break
            await asyncio.sleep(RECEIPT_POLL_S)
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
        record = await self._require_chain().anchor_of(batch["root"], "latest")
        if record is None:
            raise ChainUnavailable("the chain does not show the anchor yet")
        return await self._update(
            batch,
            fence,
            "INCLUDED",
            blockNumber=record.block_number,
            anchoredAt=record.anchored_at * 1000,
        )

    async def _finalize_if_final(self, batch: OnChain, fence: int) -> OnChain:
        if await self._require_chain().anchor_of(batch["root"], "finalized") is not None:
            return await self._update(batch, fence, "FINALIZED")
        return batch

    def _require_chain(self) -> Chain:
        assert self._chain is not None, "checked by the public entry points"
        return self._chain

    # ---- verify_memory --------------------------------------------------------------------------

    async def evidence(self, req: IdInput) -> Row:
        rows = await self._store.run("anchor/evidence", graph=req.graph, id=req.id)
        row = rows[0]
        if row["memory"] is None and row["tombstone"] is None:
            raise NotFound(f"no memory {req.id!r} in graph {req.graph!r}")
        return row

    async def verify(self, req: IdInput) -> VerifyResult:
        """The four checks of the seed: hash, batch, proof, root on chain at `finalized`."""
        row = await self.evidence(req)
        memory, tombstone, proof = row["memory"], row["tombstone"], _proof(row)
        batch: Batch | None = row["batch"]
        landed = included(batch)
        stored_hash = (memory or tombstone)["hash"]
        problems: list[str] = []
        if memory is None:
            hash_valid = False
            problems.append(
                f"memory was forgotten at {tombstone['forgottenAt']}; its tombstone keeps id, hash and proof"
            )
        else:
            hash_valid = _recomputed_hash(memory) == stored_hash
            if not hash_valid:
                problems.append("stored content no longer matches its hash (changed since it was remembered)")
        anchored = landed is not None
        root = batch["root"] if batch else None
        leaf = memory_leaf(req.id, bytes.fromhex(stored_hash[2:]))
        proof_valid = bool(root) and verify(
            bytes.fromhex(root[2:]), leaf, [bytes.fromhex(p[2:]) for p in proof]
        )
        if batch is None:
            problems.append("not anchored yet: run anchor_now")
        elif not anchored:
            problems.append(f"its batch is {batch['status']}, not yet on chain: run anchor_now to finish it")
        elif not proof_valid:
            problems.append("the Merkle proof does not fold to the batch root")
        on_chain = landed is not None and await self._on_chain(landed, req.id, stored_hash, proof, problems)
        tx_hash: str | None = batch.get("txHash") if batch else None
        result = VerifyResult(
            id=req.id,
            verified=hash_valid and anchored and proof_valid and on_chain,
            hashValid=hash_valid,
            anchored=anchored,
            proofValid=proof_valid,
            onChain=on_chain,
            root=root,
            txHash=tx_hash,
            explorerUrl=self._explorer_url(tx_hash) if tx_hash else None,
            problem="; ".join(problems) or None,
        )
        return result.with_steps(len(proof))

    async def _on_chain(
        self, batch: OnChain, memory_id: str, stored_hash: str, proof: list[str], problems: list[str]
    ) -> bool:
        chain = self._chain
        if chain is None:
            problems.append("no chain is configured, so the root cannot be checked on chain")
            return False
        try:
            if (
                await chain.chain_id() != batch["chainId"]
                or (chain.address or "").lower() != batch["contract"].lower()
            ):
                problems.append("the configured chain or contract is not the one this batch was anchored on")
                return False
            if await chain.anchor_of(batch["root"], "finalized") is None:
                problems.append("the root is not on chain at the finalized block yet")
                return False
            inclusion = await chain.inclusion(batch["txHash"], batch["root"])
            if inclusion is None or not inclusion.logged_root:
                problems.append("the anchoring transaction's receipt has no matching RootAnchored event")
                return False
            if not await chain.verify_memory(batch["root"], memory_id, stored_hash, proof):
                problems.append("the contract's verifyMemory rejects this proof")
                return False
        except ChainUnavailable:
            problems.append("the chain cannot be reached right now")
            return False
        return True

    async def bundle(self, req: IdInput) -> ProofBundle:
        """The memory's proof bundle (graphsvc.proof/v2), for anyone to verify without graphsvc.

        Raises:
            NotFound: no such memory, or its batch is not on chain yet.
        """
        row = await self.evidence(req)
        memory, tombstone, batch = row["memory"], row["tombstone"], included(row["batch"])
        if batch is None:
            raise NotFound(f"memory {req.id!r} is not anchored yet: run anchor_now")
        return ProofBundle(
            id=req.id,
            hash=(memory or tombstone)["hash"],
            envelope=_envelope(memory) if memory else None,
            forgotten=Forgotten(forgottenAt=tombstone["forgottenAt"]) if memory is None else None,
            proof=_proof(row),
            root=batch["root"],
            anchor=AnchorRecord(
                chainId=batch["chainId"],
                contract=batch["contract"],
                txHash=batch["txHash"],
                blockNumber=batch["blockNumber"],
                batchSeq=batch["seq"],
                leafCount=batch["count"],
                anchoredAt=batch["anchoredAt"],
                explorerUrl=self._explorer_url(batch["txHash"]),
            ),
        )


def _proof(row: Row) -> list[str]:
    return [_hex(step) for step in unpack_proof(row["proof"] or b"")]


def _envelope_fields(memory: Row) -> dict[str, Any]:
    return {
        "id": memory["id"],
        "graph": memory["graph"],
        "text": memory["text"],
        "tags": memory["tags"] or [],
        "entities": memory["entities"] or [],
        "created_at": memory["createdAt"],
        "supersedes": memory["supersedes"] or [],
        "valid_from": memory["validFrom"],
        "valid_to": memory["validTo"],
        "occurred_at": memory["occurredAt"],
    }


def _recomputed_hash(memory: Row) -> str:
    return memory_hash(**_envelope_fields(memory))


def _envelope(memory: Row) -> dict[str, Any]:
    return memory_envelope(**_envelope_fields(memory))
