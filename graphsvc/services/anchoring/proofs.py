"""verify_memory and the proof bundle: a memory's proof as Neo4j holds it, checked by
graphsvc.domain.checklist (the checklist `graphsvc verify-bundle` runs too) with the chain read
through the chain port, and the bundle that lets anyone check it without graphsvc."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphsvc.domain.anchor import Batch, OnChain, included
from graphsvc.domain.checklist import (
    Finding,
    Key,
    check_chain,
    check_contract,
    check_event,
    check_hash,
    check_proof,
    check_root,
    in_order,
)
from graphsvc.domain.hashing import stored_envelope
from graphsvc.domain.merkle import unpack_proof
from graphsvc.domain.models import IdInput, VerifyResult
from graphsvc.domain.proof import BUNDLE_SCHEMA, AnchorRecord, Forgotten, ProofBundle
from graphsvc.errors import ChainUnavailable, NotFound
from graphsvc.services.anchoring.ports import Chain
from graphsvc.services.ports import Row, Store


class Proofs:
    def __init__(self, store: Store, chain: Chain | None, explorer_url: Callable[[str], str | None]):
        self._store = store
        self._chain = chain
        self._explorer_url = explorer_url

    async def evidence(self, req: IdInput) -> Row:
        """The memory (or its tombstone), its proof and its batch.

        Raises:
            NotFound: no such memory, alive or forgotten.
        """
        rows = await self._store.run("anchor/evidence", graph=req.graph, id=req.id)
        row = rows[0]
        if row["memory"] is None and row["tombstone"] is None:
            raise NotFound(f"no memory {req.id!r} in graph {req.graph!r}")
        return row

    async def verify(self, req: IdInput) -> VerifyResult:
        """The checklist's checks (graphsvc.domain.checklist): the hash and the proof, then, once the
        batch is on chain, its chain checks in the checklist's order and the contract's own verifyMemory.

        Raises:
            NotFound: no such memory, alive or forgotten.
        """
        row = await self.evidence(req)
        memory, tombstone, proof = row["memory"], row["tombstone"], _proof(row)
        batch: Batch | None = row["batch"]
        landed = included(batch)
        stored_hash = (memory or tombstone)["hash"]
        problems: list[str] = []
        hashed = check_hash(
            req.id,
            stored_hash,
            stored_envelope(memory) if memory else None,
            None if memory else tombstone["forgottenAt"],
        )
        if hashed.why == "forgotten":
            problems.append(
                f"memory was forgotten at {hashed.detail}; its tombstone keeps id, hash and proof"
            )
        elif not hashed.ok:
            problems.append("stored content no longer matches its hash (changed since it was remembered)")
        root = batch["root"] if batch else None
        proof_valid = bool(root) and check_proof(req.id, stored_hash, proof, root or "").ok
        if batch is None:
            problems.append("not anchored yet: run anchor_now")
        elif landed is None:
            problems.append(f"its batch is {batch['status']}, not yet on chain: run anchor_now to finish it")
        elif not proof_valid:
            problems.append("the Merkle proof does not fold to the batch root")
        on_chain = landed is not None and await self._on_chain(landed, req.id, stored_hash, proof, problems)
        tx_hash: str | None = batch.get("txHash") if batch else None
        result = VerifyResult(
            id=req.id,
            verified=hashed.ok and landed is not None and proof_valid and on_chain,
            hashValid=hashed.ok,
            anchored=landed is not None,
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
        """The checklist's chain checks, stopping at the first that fails (its problem appended). The
        contract is the configured one (pinned; start-up checked that it has code)."""
        chain = self._chain
        if chain is None:
            problems.append("no chain is configured, so the root cannot be checked on chain")
            return False
        anchor, root = _anchor_record(batch), batch["root"]

        async def served() -> Finding:
            return check_chain(await chain.chain_id(), anchor)

        async def contract() -> Finding:
            return check_contract(chain.address or "", anchor, pinned=True, has_code=True)

        async def anchored() -> Finding:
            return check_root(await chain.anchor_of(root, "finalized"), anchor)

        async def event() -> Finding:
            return check_event(await chain.inclusion(batch["txHash"], root), anchor)

        steps: dict[Key, Callable[[], Awaitable[Finding]]] = {
            "chain": served,
            "contract": contract,
            "root": anchored,
            "event": event,
        }
        try:
            for _, step in in_order(steps):
                if not (found := await step()).ok:
                    problems.append(_chain_problem(found))
                    return False
            if not await chain.verify_memory(root, memory_id, stored_hash, proof):
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
            schema=BUNDLE_SCHEMA,
            id=req.id,
            hash=(memory or tombstone)["hash"],
            envelope=stored_envelope(memory) if memory else None,
            forgotten=Forgotten(forgottenAt=tombstone["forgottenAt"]) if memory is None else None,
            proof=_proof(row),
            root=batch["root"],
            anchor=AnchorRecord(**_anchor_fields(batch), explorerUrl=self._explorer_url(batch["txHash"])),
        )


def _anchor_fields(batch: OnChain) -> dict[str, Any]:
    return {
        "chainId": batch["chainId"],
        "contract": batch["contract"],
        "txHash": batch["txHash"],
        "blockNumber": batch["blockNumber"],
        "batchSeq": batch["seq"],
        "leafCount": batch["count"],
        "anchoredAt": batch["anchoredAt"],
    }


def _chain_problem(found: Finding) -> str:
    """verify_memory's problem for the chain check that failed."""
    if found.key in ("chain", "contract"):
        return "the configured chain or contract is not the one this batch was anchored on"
    if found.key == "root" and found.found is None:
        return "the root is not on chain at the finalized block yet"
    if found.key == "root":
        return "on chain the root has another batch, size or block than this batch records"
    return "the anchoring transaction's receipt has no matching RootAnchored event"


def _anchor_record(batch: OnChain) -> AnchorRecord:
    """The batch's anchor as the checklist reads it (as Neo4j holds it: not validated again)."""
    return AnchorRecord.model_construct(**_anchor_fields(batch))


def _proof(row: Row) -> list[str]:
    return ["0x" + step.hex() for step in unpack_proof(row["proof"] or b"")]
