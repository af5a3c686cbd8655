"""Export, audit and import rates of one graph of N anchored memories (in batches of --batch).

Builds the graph directly in Neo4j (memories with hashes and positions, no entities), anchors it batch
by batch with the real AnchoringService on a local anvil (chained roots), then times:
export (to a file), audit (the file against the chain: one linkOf per batch), and import-export into
the same graph after wiping it (the server's Batch roots are unique, so the graph must be gone first).
Runs its own Neo4j (the local server) and chain unless GRAPHSVC_NEO4J_URI is set.

    .venv/bin/python bench/export_bench.py [--memories 100000] [--batch 10000]
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
from graphsvc.exports import audit
from graphsvc.exports import render as audit_render
from graphsvc.exports.chain_reads import Pins
from graphsvc.exports.export import Exporter
from graphsvc.exports.importer import ExportImporter, confirmation
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver
from graphsvc.verifier import Rpc

PASSWORD = "graphsvc-bench"
CHUNK = 5000


async def build(store: GraphStore, chain: AnchorContract, graph: str, count: int, batch: int) -> None:
    created = format_timestamp(datetime.now(UTC))
    anchoring = AnchoringService(store, chain, receipt_timeout_s=60)
    for start in range(0, count, batch):
        for lo in range(start, min(start + batch, count), CHUNK):
            rows = []
            for n in range(lo, min(lo + CHUNK, start + batch, count)):
                text = f"benchmark memory number {n} about gas, pools and swaps"
                h = memory_hash(
                    id=f"mem_{n:016x}",
                    graph=graph,
                    text=text,
                    tags=["bench"],
                    entities=[],
                    created_at=created,
                )
                rows.append(
                    {
                        "id": f"mem_{n:016x}",
                        "text": text,
                        "tags": ["bench"],
                        "createdAt": created,
                        "hash": h,
                        "seq": n + 1,
                        "window": text,
                    }
                )
            await store._driver.execute_query(
                "UNWIND $rows AS row CREATE (m:Memory:Pending {graph: $graph}) SET m += row "
                "WITH count(*) AS n MERGE (s:GraphState {name: $graph}) SET s.seq = $last",
                rows=rows,
                graph=graph,
                last=min(start + batch, count),
            )
        fence = await anchoring.lease.acquire()
        sealed = await anchoring.batches.seal(graph, fence)
        assert sealed is not None
        await anchoring.batches.advance(sealed, fence)
        await anchoring.lease.release()
    await chain.w3.provider.make_request("anvil_mine", ["0x3"])  # type: ignore[arg-type]


async def run(count: int, batch: int, neo4j_uri: str, password: str, rpc_url: str, home: Path) -> None:
    store = GraphStore(create_driver(neo4j_uri, "neo4j", password, deadline_s=600), "neo4j", deadline_s=600)
    await store.apply_schema()
    deployer = AnchorContract(rpc_url, None, local_chain.DEV_PRIVATE_KEY)
    address = await deployer.deploy()
    await deployer.close()
    chain = AnchorContract(rpc_url, address, local_chain.DEV_PRIVATE_KEY)
    graph = f"bench-{time.time_ns()}"
    started = time.perf_counter()
    await build(store, chain, graph, count, batch)
    print(
        f"built and anchored {count:,} memories in {-(-count // batch)} batches: {time.perf_counter() - started:.1f} s"
    )
    path = home / "export.jsonl"
    started = time.perf_counter()
    with path.open("wb") as out:
        async for line in Exporter(store, graph, chain_id=31337, contract=address).lines():
            out.write(line)
    export_s = time.perf_counter() - started
    size = path.stat().st_size
    started = time.perf_counter()
    with path.open("rb") as lines:
        report = audit.audit(lines, Rpc(rpc_url))
    audit_s = time.perf_counter() - started
    assert report.exit_code == 0, audit_render.render(report)
    print(f"export file          {size / 1e6:9.1f} MB")
    print(f"export               {export_s:9.1f} s   {count / export_s:9,.0f} memories/s")
    print(
        f"audit ({report.rpc_calls} RPC calls)  {audit_s:9.1f} s   {count / audit_s:9,.0f} memories/s",
        flush=True,
    )
    while True:  # the graph goes, in chunks (its batch roots are unique on this server)
        records, _, _ = await store._driver.execute_query(
            "MATCH (n) WHERE n.graph = $g OR (n:GraphState AND n.name = $g) "
            "WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS gone",
            g=graph,
        )
        if records[0]["gone"] == 0:
            break
    memory = MemoryService(store)
    importer = ExportImporter(
        store,
        chain_id=31337,
        contract=address,
        confirm=confirmation(rpc_url, Pins(contract=address)),
        written=lambda g: memory.folder.written([g]),
    )

    started = time.perf_counter()
    with path.open("rb") as source:
        done = await importer.run(source)
    import_s = time.perf_counter() - started
    assert done.memories == count
    print(f"import-export        {import_s:9.1f} s   {count / import_s:9,.0f} memories/s")
    await chain.close()
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        chain_node = local_chain.start(home / "chain", port=18745)
        try:
            if os.environ.get("GRAPHSVC_NEO4J_URI"):
                uri, password = (
                    os.environ["GRAPHSVC_NEO4J_URI"],
                    os.environ.get("GRAPHSVC_NEO4J_PASSWORD", "graphsvc-dev"),
                )
                asyncio.run(run(args.memories, args.batch, uri, password, chain_node.rpc_url, home))
            else:
                server = local_neo4j.start(
                    home / "neo4j", bolt_port=17887, http_port=17674, password=PASSWORD
                )
                try:
                    asyncio.run(
                        run(args.memories, args.batch, server.bolt_uri, PASSWORD, chain_node.rpc_url, home)
                    )
                finally:
                    local_neo4j.stop(home / "neo4j")
        finally:
            local_chain.stop(home / "chain")


if __name__ == "__main__":
    main()
