"""anchor_now of N pending memories end to end, against hashing the same memories alone.

End to end = seal (Merkle tree, proofs, Batch + IN_BATCH writes in one transaction), sign, send,
receipt, and finality (`anchorOf(root)` set at the `finalized` block) on a local anvil chain.
Runs its own Neo4j (the local server) and chain unless GRAPHSVC_NEO4J_URI is set.

    .venv/bin/python bench/anchor_bench.py [--memories 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from graphsvc.chain.anchor import AnchorContract
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack import neo4j as local_neo4j
from graphsvc.domain.hashing import format_timestamp, memory_hash
from graphsvc.services.anchoring import AnchoringService
from graphsvc.store.graph import GraphStore, create_driver

PASSWORD = "graphsvc-bench"


def make_memories(count: int, graph: str) -> tuple[list[dict[str, object]], float]:
    created = format_timestamp(datetime.now(UTC))
    rows = [
        {
            "id": f"mem_{n:016x}",
            "text": f"benchmark memory number {n}",
            "tags": ["bench"],
            "createdAt": created,
        }
        for n in range(count)
    ]
    started = time.perf_counter()
    for row in rows:
        row["hash"] = memory_hash(
            id=row["id"],
            graph=graph,
            text=row["text"],
            tags=row["tags"],
            entities=[],
            created_at=row["createdAt"],
        )
    return rows, time.perf_counter() - started


async def measure(store: GraphStore, chain: AnchorContract, count: int) -> tuple[float, float, float]:
    """(hash alone, anchor_now, anchor_now + finality) in seconds, for `count` fresh memories."""
    graph = f"bench-{time.time_ns()}"
    rows, hash_s = make_memories(count, graph)
    await store._driver.execute_query(
        "UNWIND $rows AS row CREATE (m:Memory:Pending {graph: $graph}) SET m += row", rows=rows, graph=graph
    )
    anchoring = AnchoringService(store, chain, receipt_timeout_s=60)
    started = time.perf_counter()
    assert anchoring.batches is not None
    fence = await anchoring.lease.acquire()
    batch = await anchoring.batches.seal(graph, fence)
    sealed_s = time.perf_counter() - started
    result = anchoring.anchored(await anchoring.batches.advance(batch, fence))
    await anchoring.lease.release()
    anchored_s = time.perf_counter() - started
    print(f"  seal {sealed_s * 1000:.0f} ms, then chain {(anchored_s - sealed_s) * 1000:.0f} ms")
    await chain.w3.provider.make_request("anvil_mine", ["0x2"])  # type: ignore[arg-type]
    while await chain.anchor_of(result.root or "", "finalized") is None:
        await asyncio.sleep(0.01)
    return hash_s, anchored_s, time.perf_counter() - started


async def run(count: int, neo4j_uri: str, password: str, rpc_url: str) -> None:
    store = GraphStore(create_driver(neo4j_uri, "neo4j", password), "neo4j")
    await store.apply_schema()
    deployer = AnchorContract(rpc_url, None, local_chain.DEV_PRIVATE_KEY)
    address = await deployer.deploy()
    await deployer.close()
    chain = AnchorContract(rpc_url, address, local_chain.DEV_PRIVATE_KEY)
    cold = await measure(store, chain, count)
    await measure(store, chain, count)  # warm-up: the JVM compiles the hot queries
    hash_s, anchored_s, final_s = await measure(store, chain, count)
    print(f"memories                        {count}")
    print(f"first run, cold JVM             {cold[2] * 1000:9.1f} ms  ({cold[2] / cold[0]:.2f}x)")
    print(f"hash alone (keccak of JCS)      {hash_s * 1000:9.1f} ms")
    print(f"anchor_now (seal..receipt)      {anchored_s * 1000:9.1f} ms")
    print(f"anchor_now + finality           {final_s * 1000:9.1f} ms")
    print(f"ratio end-to-end / hash alone   {final_s / hash_s:9.2f}x   (target <= 5x, warm)")
    await chain.close()
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        chain_node = local_chain.start(Path(home) / "chain", port=18645)
        try:
            if os.environ.get("GRAPHSVC_NEO4J_URI"):
                asyncio.run(
                    run(
                        args.memories,
                        os.environ["GRAPHSVC_NEO4J_URI"],
                        os.environ.get("GRAPHSVC_NEO4J_PASSWORD", "graphsvc-dev"),
                        chain_node.rpc_url,
                    )
                )
            else:
                server = local_neo4j.start(
                    Path(home) / "neo4j", bolt_port=17787, http_port=17574, password=PASSWORD
                )
                try:
                    asyncio.run(run(args.memories, server.bolt_uri, PASSWORD, chain_node.rpc_url))
                finally:
                    local_neo4j.stop(Path(home) / "neo4j")
        finally:
            local_chain.stop(Path(home) / "chain")


if __name__ == "__main__":
    main()
