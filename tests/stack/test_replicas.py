"""Replicas behind one address: two graphsvc apps on one Neo4j, reached through a `neo4j://` routing URI,
with clients spread over both (the compose profile `replicas` puts nginx in front; scripts/compose-smoke
checks that one), and the driver usage that lets the same code run on a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import neo4j
import pytest
from eth_utils import keccak
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from graphsvc.app import Services
from graphsvc.config import AuthSettings, Settings
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.services.remember import SPAN
from graphsvc.store.graph import GraphStore, create_driver
from tests.conftest import ChainTarget, _serve
from tests.transports import ToolFailure, connect

pytestmark = pytest.mark.neo4j

TEAM = {"label": "Team", "name": "replicas"}
ROOT_ANCHORED = "0x" + keccak(text="RootAnchored(bytes32,uint64,address,uint32,uint64)").hex()


def routing_uri(uri: str) -> str:
    """The same server through a routing URI: bolt:// becomes neo4j://, bolt+s:// neo4j+s://."""
    scheme, rest = uri.split("://", 1)
    return scheme.replace("bolt", "neo4j", 1) + "://" + rest


def routed(settings: Settings) -> Settings:
    neo = settings.neo4j.model_copy(update={"uri": routing_uri(settings.neo4j.uri)})
    return settings.model_copy(update={"neo4j": neo, "auth": AuthSettings(required=False)})


@pytest.fixture(scope="module")
def replicas(settings: Settings) -> Iterator[list[str]]:
    """Two graphsvc apps (each its own driver, lease owner and MCP session manager) on one Neo4j."""
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(contextlib.contextmanager(_serve)(routed(settings))) for _ in range(2)]
        # One request to each, one at a time: at an app's first request FastAPI builds its validators
        # under warnings.catch_warnings(), which is not thread-safe, so two apps of one process doing it
        # at once (each in its own thread) can let a pydantic warning out, an error in this suite.
        for url in urls:
            httpx.get(f"{url}/health", timeout=60).raise_for_status()
        yield urls


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer without stickiness, in the client: each request goes to the next replica."""

    def __init__(self, urls: list[str]):
        self._ports = [httpx2.URL(url).port for url in urls]
        self._turn = itertools.count()
        self._http = httpx2.AsyncHTTPTransport()
        self.served: Counter[int] = Counter()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self._ports[next(self._turn) % len(self._ports)]
        self.served[port] += 1
        request.url = request.url.copy_with(port=port)
        return await self._http.handle_async_request(request)

    async def aclose(self) -> None:
        await self._http.aclose()


async def test_the_service_reads_and_writes_through_a_routing_uri_on_a_single_server(
    settings: Settings, graph: str
) -> None:
    services = Services.build(routed(settings))
    try:
        await services.start()
        assert isinstance(services.store._driver, neo4j.AsyncNeo4jDriver)  # routing, not a direct Bolt driver
        stored = await services.memory.remember(
            RememberInput(text="routed note", entities=[TEAM], graph=graph)
        )
        recalled = await services.memory.recall(RecallInput(entity="replicas", graph=graph))
        assert [m.id for m in recalled.memories] == [stored.id]
    finally:
        await services.close()


async def test_writers_spread_over_two_replicas_are_all_recalled_through_either_one(
    replicas: list[str], graph: str
) -> None:
    async def writer(n: int) -> list[str]:
        transport = ("mcp-streamable-http", "mcp-sse", "rest")[n % 3]
        ids = []
        async with connect(transport, replicas[n % 2]) as call:  # each transport on each replica
            for k in range(4):
                args = {"text": f"writer {n} note {k}", "entities": [TEAM], "graph": graph}
                ids.append((await call("remember", args)).data["id"])
        return ids

    async with asyncio.TaskGroup() as writers:
        tasks = [writers.create_task(writer(n)) for n in range(6)]
    acknowledged = {i for task in tasks for i in task.result()}
    assert len(acknowledged) == 24
    for url in replicas:
        async with connect("rest", url) as call:
            recall = {"entity": "replicas", "hops": 0, "limit": 50, "graph": graph}
            assert {m["id"] for m in (await call("recall", recall)).data["memories"]} == acknowledged


async def test_a_legacy_mcp_session_whose_requests_alternate_between_replicas_keeps_working(
    replicas: list[str], graph: str
) -> None:
    """Clients of the 2025 protocol (the initialize handshake) keep an Mcp-Session-Id; graphsvc serves
    streamable HTTP stateless, so a replica that did not see the handshake still answers."""
    balancer = RoundRobin(replicas)
    async with (
        httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(f"{replicas[0]}/mcp", http_client=http), mode="legacy") as client,
    ):
        stored = await client.call_tool(
            "remember", {"text": "session note", "entities": [TEAM], "graph": graph}
        )
        recalled = await client.call_tool("recall", {"entity": "replicas", "graph": graph})
    assert not stored.is_error and not recalled.is_error, (stored.content, recalled.content)
    assert stored.structured_content is not None and recalled.structured_content is not None
    assert [m["id"] for m in recalled.structured_content["memories"]] == [stored.structured_content["id"]]
    assert len(balancer.served) == 2 and min(balancer.served.values()) >= 2


async def test_anchoring_through_both_replicas_puts_each_memory_in_one_batch_and_each_root_on_chain_once(
    replicas: list[str], graph: str, store: GraphStore, chain_target: ChainTarget
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        calls = [await stack.enter_async_context(connect("rest", url)) for url in replicas]

        async def remember(n: int) -> str:
            return (await calls[n % 2]("remember", {"text": f"anchored note {n}", "graph": graph})).data["id"]

        async def anchor(replica: int) -> dict[str, Any] | None:
            """anchor_now through one replica; None when another holds the anchoring lease."""
            try:
                return (await calls[replica]("anchor_now", {"graph": graph})).data
            except ToolFailure as e:
                if e.code != "conflict":
                    raise
                return None

        async def anchor_when_free(replica: int) -> dict[str, Any]:
            for _ in range(600):  # the lease is one for all graphs: other anchorers hold it for seconds
                if (result := await anchor(replica)) is not None:
                    return result
                await asyncio.sleep(0.05)
            raise AssertionError("the anchoring lease never came free")

        # Each replica anchors what the other stored...
        written = [await remember(0), await remember(2)]
        by_second = await anchor_when_free(1)
        written += [await remember(1), await remember(3)]
        by_first = await anchor_when_free(0)
        assert by_second["status"] == by_first["status"] == "anchored"
        assert by_second["count"] == by_first["count"] == 2
        # ...then both anchor at once while both store.
        for turn in range(4):
            numbers = range(10 + 6 * turn, 16 + 6 * turn)
            *ids, _, _ = await asyncio.gather(*(remember(n) for n in numbers), anchor(0), anchor(1))
            written += ids
        for replica in (0, 1):  # what is left (a batch each at most), until both find nothing
            statuses = [(await anchor_when_free(replica))["status"] for _ in range(2)]
            assert statuses[-1] == "nothing_pending", statuses

    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) OPTIONAL MATCH (m)-[:IN_BATCH]->(b:Batch) "
        "RETURN m.id AS id, collect(b.root) AS roots",
        graph=graph,
        database_=store._database,
    )
    assert {r["id"] for r in records} == set(written) and len(written) == 28
    assert [r["id"] for r in records if len(r["roots"]) != 1] == []
    records, _, _ = await store._driver.execute_query(
        "MATCH (b:Batch {graph: $graph}) RETURN b.root AS root, b.memories AS count, b.status AS status",
        graph=graph,
        database_=store._database,
    )
    batches = {r["root"]: r for r in records}
    assert len(batches) == len(records) >= 2
    assert {r["status"] for r in records} == {"FINALIZED"}
    assert sum(r["count"] for r in records) == len(written)
    async with httpx.AsyncClient(timeout=30) as http:
        logs = await http.post(
            chain_target.rpc_url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "eth_getLogs",
                "params": [{"address": chain_target.contract, "fromBlock": "0x0", "topics": [ROOT_ANCHORED]}],
            },
        )
    anchored = Counter(log["topics"][1] for log in logs.json()["result"])
    assert {root: anchored[root] for root in batches} == dict.fromkeys(batches, 1)


async def test_statements_of_mode_read_are_read_only_so_a_cluster_may_route_them_to_readers(
    store: GraphStore,
) -> None:
    """Neo4j's own verdict on each statement (EXPLAIN's query type): `read` files are routed READ (a
    follower or read replica on a cluster, which refuses writes), `write` files to the leader."""
    kinds = {}
    async with store._driver.session(database=store._database) as session:
        for name, statement in store.statements.items():
            if statement.mode in ("read", "write"):
                result = await session.run("EXPLAIN " + statement.text, dict.fromkeys(statement.params))  # type: ignore[arg-type]
                kinds[name] = (statement.mode, (await result.consume()).query_type)
    assert {name: kind for name, (mode, kind) in kinds.items() if mode == "read" and kind != "r"} == {}
    assert {name: kind for name, (mode, kind) in kinds.items() if mode == "write" and kind == "r"} == {}


async def test_a_read_after_a_write_transaction_carries_its_bookmark(settings: Settings, graph: str) -> None:
    """On a cluster a read may be served by a member that has not applied the last write yet; the
    driver makes it wait when the read carries the write's bookmark. `run` reads share one bookmark
    manager with `run` writes; transactions of several statements must feed it too."""
    neo = routed(settings).neo4j
    store = GraphStore(create_driver(neo.uri, neo.user, neo.password.get_secret_value()), neo.database)
    try:
        bookmarks = store._driver.execute_query_bookmark_manager
        before = await bookmarks.get_bookmarks()

        async def work(tx: Any) -> None:
            await tx.run("memory/begin", graphs=[graph], keys=[], since="", ids=[], span=SPAN)

        await store.write_transaction(work)
        after = await bookmarks.get_bookmarks()
        assert after and after != before
    finally:
        await store.close()
