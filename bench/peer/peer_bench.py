"""Peer benchmark: mcp-neo4j-memory (PyPI 0.4.5) driven in-process through its own API.

Run with the peer's venv (bench/peer/setup makes it):

    .venv-peer/bin/python bench/peer/peer_bench.py --uri bolt://127.0.0.1:27687 --user neo4j \
        --password ... --sizes 10000,100000 --queries 200 --ingest-items 1000 --json out.json

Per size N, on a Neo4j holding none of the peer's nodes (graphsvc's own data may be there: only
`:Memory` nodes without a `graph` property are treated as the peer's):
1. the peer's startup step `Neo4jMemory.create_fulltext_index()` (its only index: FULLTEXT `search`
   on :Memory [name, type, observations]);
2. ingest: memories 0..I-1 of bench/dataset.py written as an agent would, one
   `create_entities` + one `create_relations` call per memory (memory -> entity `m000001`, type
   `memory`, observations [text]; each mentioned entity -> entity (name, type = label,
   observations []); one `MENTIONS` relation memory -> entity per mention). Tags are not mapped
   (the peer has no such concept);
3. bulk load of memories I..N-1 with the raw driver (UNWIND, batches) into exactly the peer's model:
   nodes `:Memory:<type>` {name, type, observations}, relationships `[:MENTIONS]`. The peer has no
   index on `name`, so this loader CREATEs nodes and links them by elementId instead of MERGE by name;
4. search: warm-up queries, then `--queries` queries from dataset.queries(k, N), each one
   `Neo4jMemory.search_memories(q)` call, timed per call, with the entities/relations it returns;
5. ingest at size: `--ingest-at-size-items` more memories (N, N+1, ...) through the peer's API on
   the full graph (the peer's writes MERGE/MATCH by name without an index, so this cost grows with N);
6. cleanup: DETACH DELETE of the peer's nodes in batches, then DROP of the peer's `search` index.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import statistics
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import neo4j
from neo4j import AsyncGraphDatabase

with warnings.catch_warnings(record=True):  # the package imports fastmcp -> authlib deprecation noise
    from mcp_neo4j_memory.neo4j_memory import Entity, Neo4jMemory, Relation

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import dataset

PEER_PACKAGE = "mcp-neo4j-memory"
REL = "MENTIONS"
ITEM = (
    "one dataset memory = 1 create_entities call (the memory entity + its 1-3 mentioned entities, "
    "MERGEd by name) + 1 create_relations call (1-3 MENTIONS relations), sequential, awaited"
)
PEER_NODES = (
    "MATCH (n:Memory) WHERE n.graph IS NULL"  # the peer's nodes; graphsvc's Memory nodes have `graph`
)


def mem_name(i: int) -> str:
    return f"m{i:06d}"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summary_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(pct(values, 50) * 1e3, 2),
        "p95_ms": round(pct(values, 95) * 1e3, 2),
        "mean_ms": round(statistics.fmean(values) * 1e3, 2),
        "max_ms": round(max(values) * 1e3, 2),
    }


async def peer_ingest(memory: Neo4jMemory, start: int, stop: int, seed: int) -> dict[str, Any]:
    """Memories start..stop-1 through the peer's own create_entities / create_relations."""
    lat: list[float] = []
    t0 = time.perf_counter()
    for i, m in enumerate(dataset.memories(stop, seed, start=start), start):
        t = time.perf_counter()
        name = mem_name(i)
        entities = [Entity(name=name, type="memory", observations=[m["text"]])]
        entities += [Entity(name=e["name"], type=e["label"], observations=[]) for e in m["entities"]]
        await memory.create_entities(entities)
        await memory.create_relations(
            [Relation(source=name, target=e["name"], relationType=REL) for e in m["entities"]]
        )
        lat.append(time.perf_counter() - t)
    wall = time.perf_counter() - t0
    return {
        "items": stop - start,
        "first_memory": start,
        "wall_s": round(wall, 2),
        "items_per_s": round((stop - start) / wall, 1),
        "per_item": summary_ms(lat),
    }


CREATE_ENTITIES = {
    label: f"""
UNWIND $rows AS row
CREATE (e:Memory:`{label}` {{name: row, type: '{label}', observations: []}})
RETURN row AS name, elementId(e) AS id"""
    for label in ("Person", "Topic")
}
CREATE_MEMORIES = f"""
UNWIND $rows AS row
CREATE (m:Memory:memory {{name: row.name, type: 'memory', observations: [row.text]}})
WITH m, row
UNWIND row.targets AS target
MATCH (e) WHERE elementId(e) = target
CREATE (m)-[:{REL}]->(e)"""


async def bulk_load(
    driver: neo4j.AsyncDriver, db: str, start: int, stop: int, seed: int, batch: int
) -> dict[str, Any]:
    """Memories start..stop-1 with the raw driver, in the peer's data model (see module doc)."""
    t0 = time.perf_counter()
    ids: dict[str, str] = {}
    records, _, _ = await driver.execute_query(
        PEER_NODES + " AND n.type <> 'memory' RETURN n.name AS name, elementId(n) AS id", database_=db
    )
    ids.update((r["name"], r["id"]) for r in records)

    async def flush(rows: list[dict[str, Any]], new: dict[str, str]) -> None:
        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            for label in ("Person", "Topic"):
                names = [n for n, lab in new.items() if lab == label]
                if names:
                    res = await tx.run(CREATE_ENTITIES[label], rows=names)
                    ids.update([(r["name"], r["id"]) async for r in res])
            params = [
                {"name": r["name"], "text": r["text"], "targets": [ids[n] for n in r["names"]]} for r in rows
            ]
            await (await tx.run(CREATE_MEMORIES, rows=params)).consume()

        async with driver.session(database=db) as session:
            await session.execute_write(work)

    rows: list[dict[str, Any]] = []
    new: dict[str, str] = {}
    for i, m in enumerate(dataset.memories(stop, seed, start=start), start):
        for e in m["entities"]:
            if e["name"] not in ids:
                new.setdefault(e["name"], e["label"])
        rows.append({"name": mem_name(i), "text": m["text"], "names": [e["name"] for e in m["entities"]]})
        if len(rows) >= batch:
            await flush(rows, new)
            rows, new = [], {}
    if rows:
        await flush(rows, new)
    t1 = time.perf_counter()
    await driver.execute_query("CALL db.awaitIndexes(600)", database_=db)
    return {
        "memories": stop - start,
        "first_memory": start,
        "batch": batch,
        "wall_s": round(time.perf_counter() - t0, 2),
        "load_s": round(t1 - t0, 2),
        "method": (
            "raw neo4j driver, UNWIND batches in one write transaction each: CREATE (:Memory:Person|Topic "
            "{name,type,observations:[]}) for entities not yet present, CREATE (:Memory:memory {name,type:'memory',"
            "observations:[text]}) and CREATE (m)-[:MENTIONS]->(e) matched by elementId; same labels, properties "
            "and relationship type as the peer's create_entities/create_relations; the peer's own fulltext index "
            "(created by its create_fulltext_index) is maintained during the load and awaited after it"
        ),
    }


async def graph_counts(driver: neo4j.AsyncDriver, db: str) -> dict[str, int]:
    records, _, _ = await driver.execute_query(
        PEER_NODES + " RETURN n.type AS type, count(*) AS c", database_=db
    )
    counts = {f"nodes_{r['type']}": r["c"] for r in records}
    records, _, _ = await driver.execute_query(
        PEER_NODES + f" MATCH (n)-[r:{REL}]->() RETURN count(r) AS c", database_=db
    )
    counts["relations_MENTIONS"] = records[0]["c"]
    return counts


async def search(memory: Neo4jMemory, n: int, k: int, warmup: int, seed: int) -> dict[str, Any]:
    for q in dataset.queries(warmup, n, seed=seed + 1000):
        await memory.search_memories(q)
    lat: list[float] = []
    ents: list[int] = []
    rels: list[int] = []
    t0 = time.perf_counter()
    for q in dataset.queries(k, n, seed=seed):
        t = time.perf_counter()
        kg = await memory.search_memories(q)
        lat.append(time.perf_counter() - t)
        ents.append(len(kg.entities))
        rels.append(len(kg.relations))
    return {
        "queries": k,
        "warmup_queries": warmup,
        "query_seed": seed,
        "call": "Neo4jMemory.search_memories(query) -> KnowledgeGraph (all fulltext hits, no limit, + all their relations)",
        "wall_s": round(time.perf_counter() - t0, 2),
        **summary_ms(lat),
        "entities_mean": round(statistics.fmean(ents), 1),
        "entities_p50": pct(ents, 50),
        "entities_max": max(ents),
        "relations_mean": round(statistics.fmean(rels), 1),
        "relations_p50": pct(rels, 50),
        "relations_max": max(rels),
    }


async def cleanup(driver: neo4j.AsyncDriver, db: str, drop_index: bool) -> dict[str, Any]:
    """Delete the peer's nodes (and so its relations) in batches; drop its `search` index."""
    t0 = time.perf_counter()
    async with driver.session(database=db) as session:
        res = await session.run(PEER_NODES + " CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS")
        summary = await res.consume()
    dropped = False
    if drop_index:
        records, _, _ = await driver.execute_query(
            "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes, properties WHERE name = 'search' "
            "RETURN labelsOrTypes, properties",
            database_=db,
        )
        # Only the peer's definition; an unrelated index that happens to be called `search` is left alone.
        if (
            records
            and records[0]["labelsOrTypes"] == ["Memory"]
            and records[0]["properties"] == ["name", "type", "observations"]
        ):
            await driver.execute_query("DROP INDEX search IF EXISTS", database_=db)
            dropped = True
    return {
        "nodes_deleted": summary.counters.nodes_deleted,
        "relations_deleted": summary.counters.relationships_deleted,
        "dropped_peer_index": dropped,
        "wall_s": round(time.perf_counter() - t0, 2),
    }


async def run_size(args: argparse.Namespace, n: int) -> dict[str, Any]:
    # The driver exactly as the peer's server.main builds it.
    driver = AsyncGraphDatabase.driver(args.uri, auth=(args.user, args.password), database=args.database)
    db = args.database
    try:
        await driver.verify_connectivity()
        out: dict[str, Any] = {"size": n}
        t_all = time.perf_counter()
        pre = await graph_counts(driver, db)
        if sum(pre.values()):
            print(f"  [{n}] found leftover peer data {pre}; cleaning first", flush=True)
            await cleanup(driver, db, drop_index=False)
        memory = Neo4jMemory(driver)
        await memory.create_fulltext_index()  # what the peer's server does on startup
        await driver.execute_query("CALL db.awaitIndexes(300)", database_=db)
        records, _, _ = await driver.execute_query(
            "SHOW INDEXES YIELD name, type, labelsOrTypes, properties WHERE 'Memory' IN labelsOrTypes "
            "RETURN name, type, labelsOrTypes, properties ORDER BY name",
            database_=db,
        )
        out["memory_label_indexes"] = [dict(r) for r in records]

        items = min(args.ingest_items, n)
        print(f"  [{n}] ingest {items} items through the peer API…", flush=True)
        out["ingest"] = await peer_ingest(memory, 0, items, args.seed)
        out["ingest"]["graph_before"] = "empty"
        if n > items:
            print(f"  [{n}] bulk load memories {items}..{n - 1}…", flush=True)
            out["bulk_load"] = await bulk_load(driver, db, items, n, args.seed, args.batch)
        out["graph"] = await graph_counts(driver, db)
        print(f"  [{n}] graph {out['graph']}; search {args.queries} queries…", flush=True)
        out["search"] = await search(memory, n, args.queries, args.warmup, args.query_seed)
        if args.ingest_at_size_items:
            k = args.ingest_at_size_items
            print(f"  [{n}] ingest {k} more items on the full graph…", flush=True)
            out["ingest_at_size"] = await peer_ingest(memory, n, n + k, args.seed)
            out["ingest_at_size"]["graph_before"] = f"{n} memories"
        if args.keep:
            out["cleanup"] = "skipped (--keep)"
        else:
            print(f"  [{n}] cleanup…", flush=True)
            out["cleanup"] = await cleanup(driver, db, drop_index=True)
        out["wall_s"] = round(time.perf_counter() - t_all, 2)
        return out
    finally:
        await driver.close()


async def server_version(args: argparse.Namespace) -> str:
    async with AsyncGraphDatabase.driver(args.uri, auth=(args.user, args.password)) as driver:
        records, _, _ = await driver.execute_query(
            "CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS v, edition",
            database_=args.database,
        )
        return " ".join(f"{r['name']} {r['v']} {r['edition']}" for r in records)


def table(results: list[dict[str, Any]]) -> str:
    head = f"{'N':>8} {'ingest it/s':>11} {'@N it/s':>8} {'bulk s':>7} {'search p50':>10} {'p95':>8} {'mean':>8} {'ents':>8} {'rels':>8} {'total s':>8}"
    lines = [head, "-" * len(head)]
    for r in results:
        s = r["search"]
        at = r.get("ingest_at_size", {}).get("items_per_s", "-")
        bulk = r.get("bulk_load", {}).get("wall_s", 0)
        lines.append(
            f"{r['size']:>8} {r['ingest']['items_per_s']:>11} {at:>8} {bulk:>7} {s['p50_ms']:>8}ms "
            f"{s['p95_ms']:>6}ms {s['mean_ms']:>6}ms {s['entities_mean']:>8} {s['relations_mean']:>8} {r['wall_s']:>8}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--uri", required=True)
    ap.add_argument("--user", default="neo4j")
    ap.add_argument("--password", required=True)
    ap.add_argument("--database", default="neo4j")
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument(
        "--ingest-items", type=int, default=1000, help="memories written through the peer API first"
    )
    ap.add_argument(
        "--ingest-at-size-items",
        type=int,
        default=100,
        help="memories written through the peer API on the full graph (0: skip)",
    )
    ap.add_argument("--batch", type=int, default=5000, help="bulk-load memories per transaction")
    ap.add_argument("--seed", type=int, default=7, help="dataset.memories seed")
    ap.add_argument("--query-seed", type=int, default=11, help="dataset.queries seed")
    ap.add_argument(
        "--keep", action="store_true", help="leave the peer's graph in place after the last phase"
    )
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    report: dict[str, Any] = {
        "peer": {
            "package": PEER_PACKAGE,
            "version": metadata.version(PEER_PACKAGE),
            "api": "mcp_neo4j_memory.neo4j_memory.Neo4jMemory, in-process, on neo4j.AsyncDriver (no MCP transport)",
        },
        "neo4j_driver": neo4j.__version__,
        "neo4j_server": asyncio.run(server_version(args)),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cpus",
        "dataset": {"module": "bench/dataset.py", "memory_seed": args.seed, "query_seed": args.query_seed},
        "item": ITEM,
        "mapping": (
            "memory i -> peer entity {name: 'm%06d' % i, type: 'memory', observations: [text]}; each mentioned "
            "entity -> peer entity {name, type: label (Person|Topic), observations: []}; memory -[:MENTIONS]-> entity; "
            "tags not mapped"
        ),
        "graph_build": (
            "per size: first --ingest-items memories through the peer API (timed), the rest bulk-loaded with the raw "
            "driver in the peer's exact data model; the peer's fulltext index created by its own create_fulltext_index"
        ),
        "results": [],
    }
    print(
        f"peer {PEER_PACKAGE} {report['peer']['version']}, driver {report['neo4j_driver']}, {report['neo4j_server']}"
    )
    for n in sizes:
        t = time.perf_counter()
        print(f"size {n}", flush=True)
        report["results"].append(asyncio.run(run_size(args, n)))
        print(f"size {n} done in {time.perf_counter() - t:.1f}s", flush=True)
        if args.json:  # keep partial results if a later size fails
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(table(report["results"]))
    if args.json:
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
