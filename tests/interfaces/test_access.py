"""Scoped tokens bound to one graph, enforced alike over MCP (SSE, streamable HTTP) and REST.

Every refusal is checked in the database afterwards: nothing leaks, nothing is written.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from mcp import Client

from graphsvc.domain.models import RememberInput
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.transports import TRANSPORTS, ToolFailure, connect

pytestmark = pytest.mark.neo4j

POOL = {"label": "Pool", "name": "Intruder"}
TOOLS: dict[str, tuple[str, Any]] = {
    "remember": ("write", lambda m: {"text": "intruder was here"}),
    "recall": ("read", lambda m: {"query": "secret"}),
    "link": ("write", lambda m: {"from": POOL, "type": "OWNS", "to": {"label": "Token", "name": "X"}}),
    "explore": ("read", lambda m: {"start": m}),
    "forget": ("write", lambda m: {"id": m}),
    "anchor_now": ("write", lambda m: {}),
    "verify_memory": ("read", lambda m: {"id": m}),
    "store_event": (
        "write",
        lambda m: {"event_kind": "fact", "payload": "intruder", "context_id": "skill:x"},
    ),
    "retrieve_memories": ("read", lambda m: {"query": "secret"}),
    "list_contexts": ("read", lambda m: {}),
    "generate_insights": ("write", lambda m: {"task": "find secrets"}),
}


async def _snapshot(store: GraphStore, *graphs: str) -> list[Any]:
    records, _, _ = await store._driver.execute_query(
        "UNWIND $graphs AS g OPTIONAL MATCH (n {graph: g}) WITH g, n ORDER BY n.id "
        "RETURN g, collect([labels(n), properties(n), COUNT { (n)--() }]) AS nodes",
        graphs=list(graphs),
    )
    return [r.data() for r in records]


@pytest.fixture
async def tenants(store: GraphStore, memory: MemoryService) -> dict[str, Any]:
    mine, theirs = "g-" + secrets.token_hex(4), "h-" + secrets.token_hex(4)
    access = AccessService(store, required=True)
    mine_memory = await memory.remember(RememberInput(text="secret plan of mine", graph=mine))
    their_memory = await memory.remember(RememberInput(text="secret plan of theirs", graph=theirs))
    tokens = {
        "rw": (await access.create(mine, [READ, WRITE]))[0],
        "ro": (await access.create(mine, [READ]))[0],
        "theirs": (await access.create(theirs, [READ, WRITE]))[0],
        "expired": (await access.create(mine, [READ, WRITE], datetime.now(UTC) - timedelta(seconds=1)))[0],
        "revoked": (await access.create(mine, [READ, WRITE]))[0],
    }
    await access.revoke(tokens["revoked"].split("_")[1])
    return {
        "mine": mine,
        "theirs": theirs,
        "memory": mine_memory.id,
        "their_memory": their_memory.id,
        **tokens,
    }


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


BAD_TOKENS = [
    # (name, headers from tenants): presented, but not a valid token
    ("malformed token", lambda t: {"authorization": "Bearer not-a-token"}),
    ("not bearer", lambda t: {"authorization": f"Basic {t['rw']}"}),
    ("expired token", lambda t: _bearer(t["expired"])),
    ("revoked token", lambda t: _bearer(t["revoked"])),
]
REFUSALS = [
    # (name, headers from tenants, extra args from tenants, expected code)
    ("missing token", lambda t: {}, lambda t: {}, "unauthorized"),
    *[(name, headers, lambda t: {}, "unauthorized") for name, headers in BAD_TOKENS],
    (
        "X-Graph-Id of another graph",
        lambda t: _bearer(t["rw"]) | {"x-graph-id": t["theirs"]},
        lambda t: {},
        "forbidden",
    ),
    (
        "graph argument of another graph",
        lambda t: _bearer(t["rw"]),
        lambda t: {"graph": t["theirs"]},
        "forbidden",
    ),
]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_refuses_what_the_token_does_not_allow_and_changes_nothing(
    transport: str, secured_url: str, tenants: dict[str, Any], store: GraphStore
) -> None:
    before = await _snapshot(store, tenants["mine"], tenants["theirs"])
    for case, headers, extra, code in REFUSALS:
        if transport != "rest" and code == "unauthorized":
            continue  # refused over HTTP before any tool call (below)
        async with connect(transport, secured_url, headers(tenants)) as call:
            for tool, (_, args) in TOOLS.items():
                with pytest.raises(ToolFailure) as refused:
                    await call(tool, args(tenants["memory"]) | extra(tenants))
                assert refused.value.code == code, (case, tool, str(refused.value))
                if transport == "rest":
                    assert refused.value.status == (401 if code == "unauthorized" else 403)
    async with connect(transport, secured_url, _bearer(tenants["ro"])) as call:
        for tool, (need, args) in TOOLS.items():
            if need == "write":
                with pytest.raises(ToolFailure) as refused:
                    await call(tool, args(tenants["memory"]))
                assert refused.value.code == "forbidden", tool
    async with connect(transport, secured_url, _bearer(tenants["theirs"])) as call:
        with pytest.raises(ToolFailure) as hidden:  # another tenant's id does not exist for this token
            await call("explore", {"start": tenants["memory"]})
        assert hidden.value.code == "not_found"
        recalled = await call("recall", {"query": "secret plan"})
        assert [m["id"] for m in recalled.data["memories"]] == [tenants["their_memory"]]
    assert await _snapshot(store, tenants["mine"], tenants["theirs"]) == before


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_token_works_in_its_own_graph_without_naming_it(
    transport: str, secured_url: str, tenants: dict[str, Any]
) -> None:
    async with connect(transport, secured_url, _bearer(tenants["ro"])) as call:
        found = await call("recall", {"query": "secret plan"})
        assert [m["id"] for m in found.data["memories"]] == [tenants["memory"]]
        assert (await call("verify_memory", {"id": tenants["memory"]})).data["anchored"] is False
    headers = _bearer(tenants["rw"]) | {"x-graph-id": tenants["mine"]}
    async with connect(transport, secured_url, headers) as call:
        stored = await call("remember", {"text": "written with a token", "graph": tenants["mine"]})
        found = await call("recall", {"query": "written token"})
        assert found.data["memories"][0]["id"] == stored.data["id"]
        await call("forget", {"id": stored.data["id"]})


async def test_a_missing_or_invalid_token_gets_401_with_a_bearer_challenge_on_every_transport(
    secured_url: str, tenants: dict[str, Any]
) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with httpx.AsyncClient(base_url=secured_url, timeout=30) as http:
        for case, header in [("no token", lambda t: {}), *BAD_TOKENS]:
            headers = header(tenants)
            for response in (
                await http.post("/mcp", json=initialize, headers=headers),
                await http.get("/sse", headers=headers),
                await http.post("/messages/?session_id=0", json=initialize, headers=headers),
                await http.post("/v1/recall", json={"query": "secret"}, headers=headers),
            ):
                assert response.status_code == 401, (case, response.request.url)
                assert response.headers["www-authenticate"].startswith("Bearer"), case
                assert response.json()["error"]["code"] == "unauthorized"


async def test_tools_are_listed_without_a_token_only_while_auth_is_off(
    server_url: str, secured_url: str
) -> None:
    async with Client(f"{server_url}/mcp") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"remember", "recall", "anchor_now", "verify_memory"} <= names
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    refused = httpx.post(f"{secured_url}/mcp", json=listing, headers={"accept": "application/json"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{secured_url}/openapi.json").status_code == 200


async def test_tokens_are_stored_only_as_hashes_and_listed_without_secrets(store: GraphStore) -> None:
    access = AccessService(store, required=True)
    token, info = await access.create("lister", [WRITE])
    assert info.scopes == [READ, WRITE]  # write implies read, as the seed's table has it
    secret = token.split("_", 2)[2]
    records, _, _ = await store._driver.execute_query(
        "MATCH (t:ApiToken {id: $id}) RETURN properties(t) AS p", id=info.id
    )
    assert secret not in str(records[0]["p"]) and token not in str(records[0]["p"])
    assert any(t.id == info.id for t in await access.list())
    assert all(secret not in t.model_dump_json() for t in await access.list())
