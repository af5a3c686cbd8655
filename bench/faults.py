"""Faults, for real: a local Neo4j and anvil of their own, graphsvc as separate `graphsvc serve`
processes, and REST clients that retry as a careful client does (same content, backoff). Each
scenario ends in one summary line:

- load:       W writers x N remembers plus 2 recallers on one graph: exact count, errors, latency;
- neo4j:      Neo4j stopped gracefully, then killed (-9), mid-load: acknowledged writes lost, errors
              answered for writes that had landed, time to recover, with no graphsvc restart;
- chain:      the chain RPC stopped and started again: memories stay pending or sealed, no 500,
              time to the first anchor after;
- crash:      graphsvc killed (-9) at several points of anchor_now (the batch state it left is shown):
              no root anchored twice, every memory verifies, time until anchoring works again;
- replicas:   two replicas auto-anchoring one graph while writers write to both: every memory in
              exactly one batch.

    .venv/bin/python bench/faults.py [--writers 8] [--per-writer 500] [--only load,neo4j,...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import neo4j

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, spawn

from graphsvc.chain.anchor import AnchorContract
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack import neo4j as local_neo4j

PASSWORD = "graphsvc-faults"
GRAPH = "faults"
RESULTS = Path(__file__).resolve().parent / "results"


class Stack:
    """Neo4j and anvil in a temporary home, and graphsvc processes on them."""

    def __init__(self, home: Path):
        self.home = home
        self.bolt, self.http, self.rpc_port = free_port(), free_port(), free_port()
        self.neo4j_uri = f"bolt://127.0.0.1:{self.bolt}"
        self.rpc = f"http://127.0.0.1:{self.rpc_port}"
        self.contract = ""
        self.servers: list[subprocess.Popen[bytes]] = []

    def start_neo4j(self) -> float:
        started = time.monotonic()
        local_neo4j.start(self.home / "neo4j", bolt_port=self.bolt, http_port=self.http, password=PASSWORD)
        return time.monotonic() - started

    def stop_neo4j(self, *, kill: bool) -> None:
        if not kill:
            local_neo4j.stop(self.home / "neo4j")
            return
        pid_file = self.home / "neo4j" / "neo4j.pid"
        os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        pid_file.unlink()
        time.sleep(1)  # the kernel closes its sockets

    def start_chain(self) -> None:
        # interval mining only: a transaction waits for the next block, so anchor_now spends time in
        # each state and the crash scenario can stop it in any of them
        local_chain.start(self.home / "chain", port=self.rpc_port, block_time=1, mixed_mining=False)

    def stop_chain(self) -> None:
        local_chain.stop(self.home / "chain")

    async def deploy(self) -> None:
        contract = AnchorContract(self.rpc, None, local_chain.DEV_PRIVATE_KEY)
        try:
            self.contract = await contract.deploy()
        finally:
            await contract.close()

    def serve(self, **env: str) -> str:
        # The servers' request log (JSON lines, INFO as deployed) goes to a file, not between the summaries.
        server, url = spawn(
            {
                "GRAPHSVC_NEO4J_URI": self.neo4j_uri,
                "GRAPHSVC_NEO4J_PASSWORD": PASSWORD,
                "GRAPHSVC_AUTH_REQUIRED": "false",
                "MONAD_RPC_URL": self.rpc,
                "ANCHOR_CONTRACT": self.contract,
                "GRAPHSVC_CHAIN_NETWORK": "local",
                "GRAPHSVC_CHAIN_PRIVATE_KEY": local_chain.DEV_PRIVATE_KEY,
                **env,
            },
            self.home / "serve.log",
        )
        self.servers.append(server)
        return url

    def kill_servers(self) -> None:
        for server in self.servers:
            server.kill()
            server.wait()
        self.servers.clear()

    def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        with neo4j.GraphDatabase.driver(self.neo4j_uri, auth=("neo4j", PASSWORD)) as driver:
            records, _, _ = driver.execute_query(query, params)
            return [r.data() for r in records]


@dataclass
class Writes:
    acknowledged: dict[str, str] = field(default_factory=dict)  # text -> id
    answered: Counter[int] = field(default_factory=Counter)  # error status -> count
    latencies: list[float] = field(default_factory=list)
    longest: float = 0.0  # the longest wait for any answer, an error's included (s)
    # texts whose acknowledged attempt started after an attempt that was answered with an error
    retried_at: dict[str, float] = field(default_factory=dict)  # text -> epoch ms the last try began


async def write(urls: list[str], writers: int, per_writer: int, tag: str, graph: str = GRAPH) -> Writes:
    """`writers` clients, each remembering `per_writer` memories one at a time, retrying an error or
    a dropped connection with the same content until it is acknowledged."""
    log = Writes()

    async def writer(w: int, http: httpx.AsyncClient) -> None:
        for i in range(per_writer):
            text = f"{tag} writer {w} note {i} about the thin MON/USDC pool"
            delay, errored = 0.1, False
            while True:
                began = time.time() * 1000
                started = time.perf_counter()
                try:
                    response = await http.post(
                        f"{urls[w % len(urls)]}/v1/memories", json={"text": text, "graph": graph}
                    )
                    status = response.status_code
                except httpx.HTTPError:
                    status = 0  # no answer at all
                log.longest = max(log.longest, time.perf_counter() - started)
                if status == 201:
                    log.acknowledged[text] = response.json()["id"]
                    log.latencies.append(time.perf_counter() - started)
                    if errored:
                        log.retried_at[text] = began
                    break
                log.answered[status] += 1
                errored = True
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)

    async with httpx.AsyncClient(timeout=60) as http:
        await asyncio.gather(*(writer(w, http) for w in range(writers)))
    return log


def lost_and_phantom(stack: Stack, log: Writes, graph: str = GRAPH) -> tuple[int, int]:
    """(acknowledged writes not stored, errors answered for writes that had landed: an acknowledged
    memory created before its acknowledged attempt began)."""
    rows = stack.cypher("MATCH (m:Memory {graph: $g}) RETURN m.id AS id, m.createdAt AS at", g=graph)
    stored = {r["id"]: r["at"] for r in rows}
    lost = sum(1 for memory_id in log.acknowledged.values() if memory_id not in stored)
    phantom = 0
    for text, began in log.retried_at.items():
        at = stored.get(log.acknowledged[text])
        if at and datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000 < began:
            phantom += 1
    return lost, phantom


def p(seconds: list[float], q: float) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def scenario_load(stack: Stack, writers: int, per_writer: int) -> str:
    url = stack.serve()
    graph = f"load-{secrets.token_hex(3)}"
    recalls: list[float] = []
    errors: Counter[int] = Counter()
    done = asyncio.Event()

    async def recaller(http: httpx.AsyncClient) -> None:
        while not done.is_set():
            started = time.perf_counter()
            response = await http.post(f"{url}/v1/recall", json={"query": "thin pool", "graph": graph})
            if response.status_code == 200:
                recalls.append(time.perf_counter() - started)
            else:
                errors[response.status_code] += 1

    async with httpx.AsyncClient(timeout=60) as http:
        readers = [asyncio.create_task(recaller(http)) for _ in range(2)]
        started = time.perf_counter()
        log = await write([url], writers, per_writer, "load", graph)
        elapsed = time.perf_counter() - started
        done.set()
        await asyncio.gather(*readers)
    [count] = stack.cypher("MATCH (m:Memory {graph: $g}) RETURN count(m) AS n", g=graph)
    stack.kill_servers()
    return (
        f"load: {count['n']:,} stored of {writers * per_writer:,} acknowledged, "
        f"errors {dict(log.answered + errors) or 0}, {writers * per_writer / elapsed:,.0f} remembers/s; "
        f"remember p50 {p(log.latencies, 0.5):.0f} / p95 {p(log.latencies, 0.95):.0f} ms, "
        f"recall p50 {p(recalls, 0.5):.0f} / p95 {p(recalls, 0.95):.0f} ms ({len(recalls)} recalls)"
    )


async def scenario_neo4j(stack: Stack, writers: int, per_writer: int) -> str:
    url = stack.serve()
    recovered: list[float] = []

    async def outages() -> None:
        for kill in (False, True):
            await asyncio.sleep(3)
            await asyncio.to_thread(stack.stop_neo4j, kill=kill)
            await asyncio.sleep(3)
            await asyncio.to_thread(stack.start_neo4j)
            back = time.monotonic()
            async with httpx.AsyncClient(timeout=60) as http:
                while (await http.get(f"{url}/health")).status_code != 200:
                    await asyncio.sleep(0.1)
            recovered.append(time.monotonic() - back)

    log, _ = await asyncio.gather(write([url], writers, per_writer, "neo4j"), outages())
    lost, phantom = lost_and_phantom(stack, log)
    statuses = ", ".join(f"{n} x {s or 'no answer'}" for s, n in sorted(log.answered.items()))
    stack.kill_servers()
    return (
        f"neo4j stop + kill -9 mid-load: {len(log.acknowledged):,} acknowledged, {lost} lost; errors answered: "
        f"{statuses or 'none'}; {phantom} for writes that had landed (the retry got the stored receipt); "
        f"longest wait for an answer {log.longest:.1f} s; "
        f"healthy {' and '.join(f'{s:.1f} s' for s in recovered)} after Neo4j was back, no graphsvc restart"
    )


async def scenario_chain(stack: Stack) -> str:
    url = stack.serve()
    graph = f"chain-{secrets.token_hex(3)}"
    async with httpx.AsyncClient(timeout=60) as http:
        ids = [
            (
                await http.post(
                    f"{url}/v1/memories", json={"text": f"before the chain outage {n}", "graph": graph}
                )
            ).json()["id"]
            for n in range(20)
        ]
        stack.stop_chain()
        answers: Counter[int] = Counter()
        for _ in range(3):
            answers[(await http.post(f"{url}/v1/anchor", json={"graph": graph})).status_code] += 1
        [state] = stack.cypher(
            "MATCH (m:Memory {graph: $g}) OPTIONAL MATCH (m)-[:IN_BATCH]->(b) "
            "RETURN sum(CASE WHEN m:Pending THEN 1 ELSE 0 END) AS pending, collect(DISTINCT b.status) AS batches",
            g=graph,
        )
        stack.start_chain()
        back = time.monotonic()
        while (await http.post(f"{url}/v1/anchor", json={"graph": graph})).status_code != 200:
            await asyncio.sleep(0.2)
        took = time.monotonic() - back
        verified = await _verified(http, url, graph, ids)
    stack.kill_servers()
    return (
        f"chain down: anchor_now answered {dict(answers)} (no 500), memories left pending {state['pending']} "
        f"/ in batches {state['batches']}; first anchor {took:.1f} s after the chain was back; "
        f"{verified}/{len(ids)} verify"
    )


async def _verified(http: httpx.AsyncClient, url: str, graph: str, ids: list[str]) -> int:
    answers = [await http.get(f"{url}/v1/memories/{i}/verify", params={"graph": graph}) for i in ids]
    return sum(1 for answer in answers if answer.json()["verified"])


def _anchor_in_background(url: str, graph: str) -> None:
    def call() -> None:
        with contextlib.suppress(httpx.HTTPError):  # killed under it
            httpx.post(f"{url}/v1/anchor", json={"graph": graph}, timeout=60)

    threading.Thread(target=call, daemon=True).start()


async def scenario_crash(stack: Stack, trials: int) -> str:
    graph = f"crash-{secrets.token_hex(3)}"
    states: Counter[str] = Counter()
    resumed: list[float] = []
    ids: list[str] = []
    rng = random.Random(5)
    for trial in range(trials):
        url = stack.serve()
        async with httpx.AsyncClient(timeout=60) as http:
            for n in range(50):
                response = await http.post(
                    f"{url}/v1/memories", json={"text": f"crash {trial}.{n}", "graph": graph}
                )
                ids.append(response.json()["id"])
        _anchor_in_background(url, graph)
        await asyncio.sleep(rng.uniform(0.05, 1.2))
        stack.kill_servers()
        left = stack.cypher(
            "MATCH (b:Batch {graph: $g}) RETURN b.status AS s ORDER BY b.seq DESC LIMIT 1", g=graph
        )
        states[left[0]["s"] if left else "none sealed"] += 1
        restarted = time.monotonic()
        url = stack.serve()
        async with httpx.AsyncClient(timeout=60) as http:
            while (await http.post(f"{url}/v1/anchor", json={"graph": graph})).status_code != 200:
                await asyncio.sleep(0.5)
        resumed.append(time.monotonic() - restarted)
        stack.kill_servers()
    url = stack.serve()
    async with httpx.AsyncClient(timeout=60) as http:
        verified = await _verified(http, url, graph, ids)
    stack.kill_servers()
    roots = [r["root"] for r in stack.cypher("MATCH (b:Batch {graph: $g}) RETURN b.root AS root", g=graph)]
    contract = AnchorContract(stack.rpc, stack.contract, None)
    try:
        logs = await contract.w3.eth.get_logs({"address": contract.address, "fromBlock": 0})
    finally:
        await contract.close()
    per_root = Counter("0x" + log["topics"][1].hex() for log in logs)
    twice = sum(1 for root in roots if per_root[root] > 1)
    return (
        f"graphsvc kill -9 during anchor_now x{trials} (batch left {dict(states)}): {twice} roots anchored twice, "
        f"{verified}/{len(ids)} memories verify, anchoring worked again {min(resumed):.1f}-{max(resumed):.1f} s "
        "after the restart (a dead anchorer's lease lapses within 15 s)"
    )


async def scenario_replicas(stack: Stack, writers: int, per_writer: int) -> str:
    auto = {"GRAPHSVC_CHAIN_AUTO_INTERVAL_S": "0.5"}
    urls = [stack.serve(**auto), stack.serve(**auto)]
    graph = f"replicas-{secrets.token_hex(3)}"
    log = await write(urls, writers, per_writer, "replicas", graph)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        [left] = stack.cypher(
            "MATCH (m:Memory {graph: $g}) WHERE m:Pending OR EXISTS { (m)-[:IN_BATCH]->(b) "
            "WHERE NOT b.status IN ['INCLUDED', 'FINALIZED'] } RETURN count(m) AS n",
            g=graph,
        )
        if left["n"] == 0:
            break
        await asyncio.sleep(0.5)
    [check] = stack.cypher(
        "MATCH (m:Memory {graph: $g}) OPTIONAL MATCH (m)-[r:IN_BATCH]->() WITH m, count(r) AS batches "
        "RETURN count(m) AS memories, sum(CASE WHEN batches = 1 THEN 1 ELSE 0 END) AS once",
        g=graph,
    )
    [batches] = stack.cypher("MATCH (b:Batch {graph: $g}) RETURN count(b) AS n", g=graph)
    stack.kill_servers()
    return (
        f"two replicas auto-anchoring while {writers} writers write to both: {check['memories']:,} memories "
        f"({len(log.acknowledged):,} acknowledged), {check['once']:,} in exactly one batch, {batches['n']} batches"
    )


async def main(args: argparse.Namespace) -> None:
    only = set(args.only.split(",")) if args.only else None
    with tempfile.TemporaryDirectory() as home:
        stack = Stack(Path(home))
        stack.start_neo4j()
        stack.start_chain()
        await stack.deploy()
        lines = []
        try:
            scenarios = {
                "load": lambda: scenario_load(stack, args.writers, args.per_writer),
                "neo4j": lambda: scenario_neo4j(stack, args.writers, args.per_writer),
                "chain": lambda: scenario_chain(stack),
                "crash": lambda: scenario_crash(stack, args.crashes),
                "replicas": lambda: scenario_replicas(stack, args.writers, args.per_writer // 5),
            }
            for name, scenario in scenarios.items():
                if only is None or name in only:
                    line = await scenario()
                    print(line, flush=True)
                    lines.append(line)
        finally:
            stack.kill_servers()
            stack.stop_chain()
            local_neo4j.stop(stack.home / "neo4j")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "faults.json").write_text(json.dumps(lines, indent=2) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--per-writer", type=int, default=500)
    parser.add_argument("--crashes", type=int, default=6)
    parser.add_argument("--only", help="comma-separated scenarios: load, neo4j, chain, crash, replicas")
    asyncio.run(main(parser.parse_args()))
