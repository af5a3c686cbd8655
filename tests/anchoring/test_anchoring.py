"""anchor_now and verify_memory on a real Neo4j and a real local chain: the round trip over every
transport, tampering and forgetting, outages, crashes between steps, and two replicas."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from graphsvc.app import Services
from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import Settings
from graphsvc.domain import render
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.errors import ChainUnavailable, Conflict
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import REPO, mine
from tests.transports import TRANSPORTS, ToolFailure, connect

pytestmark = pytest.mark.neo4j


async def _cypher(store: GraphStore, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await store._driver.execute_query(query, params, database_=store._database)  # type: ignore[arg-type]
    return [r.data() for r in records]


def _chain(settings: Settings) -> AnchorContract:
    c = settings.chain
    assert c.rpc_url and c.private_key
    return AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)


@pytest.fixture
async def anchoring(store: GraphStore, settings: Settings):
    chain = _chain(settings)
    yield AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
    await chain.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_remember_anchor_verify_tamper_forget(
    transport: str, server_url: str, graph: str, store, settings
) -> None:
    async with connect(transport, server_url) as call:
        ids = [
            (
                await call(
                    "remember",
                    {"text": text, "graph": graph, "entities": [{"label": "Token", "name": "MON"}]},
                )
            ).data["id"]
            for text in ("Swap of 10 MON failed", "MON staking yields 7%", "MON/USDC pool is thin")
        ]
        pending = await call("verify_memory", {"id": ids[0], "graph": graph})
        assert (pending.data["verified"], pending.data["anchored"], pending.data["hashValid"]) == (
            False,
            False,
            True,
        )

        anchored = await call("anchor_now", {"graph": graph})
        assert anchored.data["status"] == "anchored" and anchored.data["count"] == 3
        assert anchored.data["root"].startswith("0x") and anchored.data["txHash"].startswith("0x")
        assert anchored.data["blockNumber"] > 0 and anchored.data["anchoredAt"] > 1_700_000_000_000
        if anchored.text is not None:
            assert anchored.text.splitlines()[:2] == [
                "Anchored 3 memories.",
                f"Root: {anchored.data['root']}",
            ]
        nothing = await call("anchor_now", {"graph": graph})
        assert nothing.data["status"] == "nothing_pending"

        # anchor_now answered once the batch was final: every memory verifies at once
        for memory_id in ids:
            ok = await call("verify_memory", {"id": memory_id, "graph": graph})
            assert ok.data == {
                "id": memory_id,
                "verified": True,
                "hashValid": True,
                "anchored": True,
                "proofValid": True,
                "onChain": True,
                "root": anchored.data["root"],
                "txHash": anchored.data["txHash"],
                "explorerUrl": None,
                "problem": None,
            }
            if ok.text is not None:
                assert (
                    ok.text.splitlines()[0]
                    == "✓ Verified: memory is unchanged since it was anchored on Monad."
                )
                assert re.fullmatch(r"  ✓ Merkle proof valid \([12]-step\)", ok.text.splitlines()[3])

        recalled = await call("recall", {"query": "staking", "graph": graph})
        assert recalled.data["memories"][0]["anchorId"] == anchored.data["root"]

        # an attacker with database access edits the text: the hash no longer matches
        await _cypher(
            store,
            "MATCH (m:Memory {graph: $g, id: $id}) SET m.text = 'Swap of 10 MON succeeded'",
            g=graph,
            id=ids[0],
        )
        tampered = await call("verify_memory", {"id": ids[0], "graph": graph})
        assert (tampered.data["verified"], tampered.data["hashValid"], tampered.data["proofValid"]) == (
            False,
            False,
            True,
        )
        assert "no longer matches its hash" in tampered.data["problem"]

        await call("forget", {"id": ids[1], "graph": graph})
        forgotten = await call("verify_memory", {"id": ids[1], "graph": graph})
        assert (forgotten.data["verified"], forgotten.data["hashValid"], forgotten.data["onChain"]) == (
            False,
            False,
            True,
        )
        assert "forgotten" in forgotten.data["problem"] and "tombstone" in forgotten.data["problem"]

        still = await call("verify_memory", {"id": ids[2], "graph": graph})
        assert still.data["verified"] is True

        with pytest.raises(ToolFailure) as unknown:
            await call("verify_memory", {"id": "mem_0000000000000000", "graph": graph})
        assert unknown.value.code == "not_found"


async def test_without_a_chain_anchor_now_answers_not_configured(
    store: GraphStore, memory: MemoryService, graph: str
) -> None:
    await memory.remember(RememberInput(text="waiting for a chain", graph=graph))
    result = await AnchoringService(store, None).anchor_now(GraphInput(graph=graph))
    assert (result.status, result.count, result.root) == ("not_configured", 0, None)
    assert render.anchor_text(result).startswith("Anchoring is not configured")
    pending = await _cypher(store, "MATCH (m:Memory:Pending {graph: $g}) RETURN count(m) AS n", g=graph)
    assert pending[0]["n"] == 1


class _Outage:
    """The real chain, with its RPC endpoint taken away at one step (as a network outage would)."""

    def __init__(self, chain: AnchorContract, fail_on: str):
        self._chain, self.fail_on = chain, fail_on

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._chain, name)
        if name == self.fail_on:

            async def unreachable(*args: Any, **kwargs: Any) -> Any:
                raise ChainUnavailable("the chain RPC cannot be reached")

            return unreachable
        return attribute


@pytest.mark.parametrize("fail_on", ["pending_nonce", "broadcast", "inclusion"])
async def test_an_rpc_outage_mid_anchor_loses_nothing_and_the_next_call_finishes(
    fail_on: str, store: GraphStore, memory: MemoryService, settings, graph: str
) -> None:
    chain = _chain(settings)
    try:
        ids = [(await memory.remember(RememberInput(text=f"outage {n}", graph=graph))).id for n in range(3)]
        broken = AnchoringService(store, _Outage(chain, fail_on), receipt_timeout_s=1, lease_ttl_s=5)  # type: ignore[arg-type]
        with pytest.raises(ChainUnavailable):
            await broken.anchor_now(GraphInput(graph=graph))
        batches = await _cypher(
            store, "MATCH (b:Batch {graph: $g}) RETURN b.status AS status, b.memories AS n", g=graph
        )
        assert [b["n"] for b in batches] == [3]
        later = await memory.remember(RememberInput(text="after the outage", graph=graph))
        healthy = AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
        result = await healthy.anchor_now(GraphInput(graph=graph))
        assert (result.status, result.count) == ("anchored", 1)  # the new memory, in a second batch
        mine(settings.chain.rpc_url, 2)
        for memory_id in [*ids, later.id]:
            assert (await healthy.verify(IdInput(id=memory_id, graph=graph))).verified
    finally:
        await chain.close()


CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys
    from graphsvc.app import Services
    from graphsvc.config import Settings
    from graphsvc.domain.models import GraphInput

    where, graph = sys.argv[1], sys.argv[2]

    async def main():
        services = Services.build(Settings())
        chain = services.anchoring._chain
        broadcast = chain.broadcast

        async def crash(raw):
            if where == "after-broadcast":
                await broadcast(raw)
            os._exit(9)  # killed: nothing after this step is recorded

        chain.broadcast = crash
        await services.anchoring.anchor_now(GraphInput(graph=graph))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("where", ["before-broadcast", "after-broadcast"])
async def test_a_process_killed_between_steps_is_reconciled_and_anchors_once(
    where: str, store: GraphStore, memory: MemoryService, settings: Settings, graph: str
) -> None:
    ids = [(await memory.remember(RememberInput(text=f"crash {n}", graph=graph))).id for n in range(2)]
    c = settings.chain
    env = os.environ | {
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "MONAD_RPC_URL": c.rpc_url or "",
        "ANCHOR_CONTRACT": c.contract or "",
        "GRAPHSVC_CHAIN_NETWORK": "local",
        "GRAPHSVC_CHAIN_PRIVATE_KEY": c.private_key.get_secret_value() if c.private_key else "",
        "GRAPHSVC_CHAIN_LEASE_TTL_S": "1",
    }
    done = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, where, graph], env=env, cwd=REPO, timeout=120)
    assert done.returncode == 9
    [batch] = await _cypher(store, "MATCH (b:Batch {graph: $g}) RETURN b {.*} AS b", g=graph)
    assert batch["b"]["status"] == "SIGNED" and batch["b"]["rawTx"]

    chain = _chain(settings)
    try:
        nonce_before = await chain.mined_nonce()
        await asyncio.sleep(1.2)  # the dead process's lease expires
        restarted = AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
        assert batch["b"]["root"] in await restarted.reconcile()
        [after] = await _cypher(store, "MATCH (b:Batch {graph: $g}) RETURN b {.*} AS b", g=graph)
        assert after["b"]["status"] in ("INCLUDED", "FINALIZED")
        assert after["b"]["txHash"] == batch["b"]["txHash"]  # the very transaction signed before the crash
        expected = 0 if where == "after-broadcast" else 1
        assert await chain.mined_nonce() - nonce_before == expected
        logs = await chain.w3.eth.get_logs(
            {"address": chain.address, "fromBlock": 0, "topics": [None, after["b"]["root"]]}
        )
        assert len(logs) == 1
        mine(settings.chain.rpc_url, 2)
        for memory_id in ids:
            assert (await restarted.verify(IdInput(id=memory_id, graph=graph))).verified
    finally:
        await chain.close()


async def test_two_replicas_auto_anchoring_one_graph_seal_each_memory_once(
    store: GraphStore, settings: Settings, graph: str
) -> None:
    chain_settings = settings.chain.model_copy(update={"auto_interval_s": 0.2, "lease_ttl_s": 5})
    replicas = [Services.build(settings.model_copy(update={"chain": chain_settings})) for _ in range(2)]
    tasks = [asyncio.create_task(r.workers["anchoring"].run()) for r in replicas]
    try:
        for n in range(20):
            await replicas[n % 2].memory.remember(RememberInput(text=f"replica note {n}", graph=graph))
        for _ in range(600):  # replicas anchor every graph with pending memories, ours among them
            rows = await _cypher(
                store,
                "MATCH (m:Memory {graph: $g}) OPTIONAL MATCH (m)-[:IN_BATCH]->(b:Batch) "
                "RETURN count(m) - count(CASE WHEN b.status IN ['INCLUDED', 'FINALIZED'] THEN 1 END) AS n",
                g=graph,
            )
            if rows[0]["n"] == 0:
                break
            await asyncio.sleep(0.1)
        members = await _cypher(
            store,
            "MATCH (m:Memory {graph: $g})-[:IN_BATCH]->(b:Batch) RETURN m.id AS id, b.status AS status",
            g=graph,
        )
        assert len(members) == len({m["id"] for m in members}) == 20
        statuses = await _cypher(store, "MATCH (b:Batch {graph: $g}) RETURN collect(b.status) AS s", g=graph)
        assert set(statuses[0]["s"]) <= {"INCLUDED", "FINALIZED"}
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for replica in replicas:
            await replica.close()


async def test_start_up_refuses_a_contract_address_without_code(settings: Settings) -> None:
    from graphsvc.errors import NotConfigured

    wrong = settings.chain.model_copy(update={"contract": "0x" + "34" * 20})
    services = Services.build(settings.model_copy(update={"chain": wrong}))
    try:
        with pytest.raises(NotConfigured):
            await services.start()
    finally:
        await services.close()


async def _anchor_states(store: GraphStore) -> list[dict[str, Any]]:
    return await _cypher(store, "MATCH (s:AnchorState) RETURN s.seq AS seq, s.fence AS fence")


async def test_two_replicas_taking_the_first_lease_of_a_fresh_database_at_once_make_one_state(
    store: GraphStore,
) -> None:
    [before] = await _anchor_states(store) or [{"seq": 0}]
    replicas = [AnchoringService(store, None, owner=f"replica-{n}") for n in range(2)]
    try:
        for _ in range(15):
            await _cypher(store, "MATCH (s:AnchorState) DELETE s")
            taken = await asyncio.gather(*(r.lease.acquire() for r in replicas), return_exceptions=True)
            assert sorted(type(t).__name__ for t in taken) == ["Conflict", "int"]
            assert len(await _anchor_states(store)) == 1
            await asyncio.gather(*(r.lease.release() for r in replicas))
    finally:  # later batches keep counting from where the suite was
        await _cypher(store, "MERGE (s:AnchorState {id: 'anchoring'}) SET s.seq = $seq", seq=before["seq"])


async def test_a_held_lease_is_renewed_and_a_dead_holders_lapses_within_its_ttl(store: GraphStore) -> None:
    # A TTL of seconds, not tenths: a renewal every third of it must still come in time on a loaded machine.
    holder = AnchoringService(store, None, lease_ttl_s=2.0, owner="holder")
    other = AnchoringService(store, None, lease_ttl_s=2.0, owner="other")
    async with holder.lease.held():
        for _ in range(3):  # well past the TTL: renewed, so never lost
            await asyncio.sleep(1.2)
            with pytest.raises(Conflict):
                await other.lease.acquire()
    await other.lease.acquire()  # released on exit
    await other.lease.release()
    await holder.lease.acquire()  # then the holder dies: no renewal, no release
    with pytest.raises(Conflict):
        await other.lease.acquire()
    await asyncio.sleep(2.2)
    await other.lease.acquire()
    await other.lease.release()
