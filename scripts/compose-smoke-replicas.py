"""compose.yaml's `replicas` profile for real, run by scripts/compose-smoke once it is up: two graphsvc
replicas behind nginx. Through the proxy: its own health and graphsvc's; the Host check; writers over
REST and MCP (a 2025-protocol streamable HTTP session, whose requests the proxy spreads over both
replicas; SSE, which it keeps on one; the 2026 protocol); a recall through either replica sees every
acknowledged write; anchor_now through both at once puts each memory in one batch and each root on
chain once. Which replica served what is read from the proxy's log by the caller.

usage: compose-smoke-replicas.py TOKEN (a read+write token of graph `replicas`)
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from typing import Any

import httpx
from eth_utils import keccak
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PROXY = "http://127.0.0.1:8000"
NEO4J_HTTP = "http://127.0.0.1:7474/db/neo4j/tx/commit"
CHAIN = "http://127.0.0.1:8545"
CONTRACT = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
ROOT_ANCHORED = "0x" + keccak(text="RootAnchored(bytes32,uint64,address,uint32,uint64)").hex()
TEAM = {"label": "Team", "name": "replicas"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "0"},
    },
}


class Failed(Exception):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise Failed(what)


async def mcp_writes(kind: str, headers: dict[str, str], n: int) -> list[str]:
    """Two remembers and a recall in one MCP connection through the proxy."""
    if kind == "sse":
        connection = Client(sse_client(f"{PROXY}/sse", headers=headers))
    else:
        http = create_mcp_http_client(headers=headers)
        connection = Client(streamable_http_client(f"{PROXY}/mcp", http_client=http), mode=kind)
    ids = []
    async with connection as client:
        for k in range(2):
            result = await client.call_tool("remember", {"text": f"{kind} note {n}.{k}", "entities": [TEAM]})
            check(not result.is_error and result.structured_content is not None, f"{kind} remember: {result}")
            ids.append(result.structured_content["id"])
        recalled = await client.call_tool("recall", {"entity": "replicas", "hops": 0, "limit": 50})
        found = {m["id"] for m in (recalled.structured_content or {}).get("memories", [])}
        check(set(ids) <= found, f"{kind} recall in the same connection misses its writes")
    return ids


async def main(token: str) -> None:
    auth = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=PROXY, headers=auth, timeout=120) as rest:
        check((await rest.get("/proxy-health")).status_code == 200, "the proxy's own health check fails")
        health = await rest.get("/health")
        check(
            health.status_code == 200 and health.json()["neo4j"], f"/health through the proxy: {health.text}"
        )

        # DNS-rebinding protection sees the client's Host: a listed one passes, any other is refused.
        mcp_headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        for host, expected in (("proxy:8080", 200), ("elsewhere.example", 421)):
            answer = await rest.post("/mcp", json=INITIALIZE, headers={**mcp_headers, "host": host})
            check(
                answer.status_code == expected, f"MCP with Host {host}: {answer.status_code}, not {expected}"
            )

        async def remember(n: int) -> str:
            answer = await rest.post("/v1/memories", json={"text": f"rest note {n}", "entities": [TEAM]})
            check(answer.status_code == 201, f"remember: {answer.status_code} {answer.text}")
            return answer.json()["id"]

        async def anchor() -> dict[str, Any] | None:
            answer = await rest.post("/v1/anchor", json={})
            if answer.status_code == 409:  # the other replica holds the anchoring lease
                return None
            check(answer.status_code == 200, f"anchor_now: {answer.status_code} {answer.text}")
            return answer.json()

        written = list(await asyncio.gather(*(remember(n) for n in range(8))))
        for kind, n in (("legacy", 0), ("sse", 1), ("auto", 2)):
            written += await mcp_writes(kind, auth, n)
        for _ in range(4):  # round robin: each replica answers twice
            answer = await rest.post("/v1/recall", json={"entity": "replicas", "hops": 0, "limit": 50})
            check({m["id"] for m in answer.json()["memories"]} == set(written), "a recall misses writes")

        # Anchoring from both replicas at once, while writers go on.
        for turn in range(3):
            *ids, _, _ = await asyncio.gather(
                *(remember(100 + 4 * turn + k) for k in range(4)), anchor(), anchor()
            )
            written += ids
        for _ in range(200):
            result = await anchor()
            if result is not None and result["status"] == "nothing_pending":
                break
            await asyncio.sleep(0.1)
        else:
            check(False, "memories still pending")
    # The calls above may all have reached one replica: each nginx worker keeps a round robin of its
    # own, and concurrent connections land on different workers. Sequential calls on one connection
    # alternate, so both replicas answer anchor_now at least once.
    one = httpx.Limits(max_connections=1)
    async with httpx.AsyncClient(base_url=PROXY, headers=auth, timeout=120, limits=one) as single:
        for _ in range(4):
            answer = await single.post("/v1/anchor", json={})
            check(answer.status_code in (200, 409), f"anchor_now: {answer.status_code} {answer.text}")

    neo4j_auth = ("neo4j", os.environ.get("GRAPHSVC_NEO4J_PASSWORD", "graphsvc-dev"))
    query = (
        "MATCH (m:Memory {graph: 'replicas'}) OPTIONAL MATCH (m)-[:IN_BATCH]->(b:Batch) "
        "RETURN m.id, collect(b.root), collect(b.status)"
    )
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(NEO4J_HTTP, auth=neo4j_auth, json={"statements": [{"statement": query}]})
        rows = [row["row"] for row in answer.json()["results"][0]["data"]]
        logs = await http.post(
            CHAIN,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "eth_getLogs",
                "params": [{"address": CONTRACT, "fromBlock": "0x0", "topics": [ROOT_ANCHORED]}],
            },
        )
    check({row[0] for row in rows} == set(written), "the graph holds other memories than those written")
    check(
        all(len(row[1]) == 1 and row[2] == ["FINALIZED"] for row in rows), "a memory not in exactly one batch"
    )
    roots = {row[1][0] for row in rows}
    on_chain = Counter(log["topics"][1] for log in logs.json()["result"])
    check(all(on_chain[root] == 1 for root in roots), f"a root not anchored exactly once: {on_chain}")
    print(
        f"replicas: {len(written)} memories written through the proxy, recalled through both replicas, {len(roots)} batches anchored once each"
    )


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1]))
    except Failed as e:
        sys.exit(f"replicas smoke: {e}")
