"""The framework adapters agent builders load MCP tools with list and call every tool, over streamable
HTTP (with a token, auth on) and over stdio (`graphsvc mcp`), no model needed:

- langchain-mcp-adapters 0.3.2 (`MultiServerMCPClient`, LangChain tools called as a model's tool
  calls), in its own venv: it needs the MCP SDK 1.x (tests/clients/langchain_client.py);
- the OpenAI Agents SDK 0.24 (`MCPServerStreamableHttp`, `MCPServerStdio`), in this one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from agents.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp

from graphsvc.config import Settings
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.services.operations import TOOLS
from graphsvc.store.graph import GraphStore
from tests import stdio
from tests.every_tool import check_every_tool, every_tool
from tests.transports import Caller, Reply, ToolFailure, tool_failure

pytestmark = pytest.mark.neo4j
LANGCHAIN = stdio.REPO / "tests" / "clients"
NAMES = [op.name for op in TOOLS]


async def _token(store: GraphStore, graph: str) -> str:
    return (await AccessService(store, required=True).create(graph, [READ, WRITE]))[0]


def _stdio_process(settings: Settings) -> dict[str, Any]:
    return {"command": stdio.GRAPHSVC, "args": ["mcp"], "env": stdio.environment(settings)}


async def _check(tools: list[str], call: Caller, graph: str) -> None:
    assert tools == NAMES
    check_every_tool(await every_tool(call, graph))
    with pytest.raises(ToolFailure) as refused:
        await call("recall", {"query": "tea", "hops": 9, "graph": graph})
    assert refused.value.code == "invalid_input"


@pytest.mark.parametrize("transport", ["streamable_http", "stdio"])
async def test_langchain_mcp_adapters_list_and_call_every_tool(
    transport: str, settings: Settings, secured_url: str, store: GraphStore, graph: str
) -> None:
    if transport == "stdio":
        connection = {"transport": "stdio", **_stdio_process(settings)}
    else:
        headers = {"Authorization": f"Bearer {await _token(store, graph)}"}
        connection = {"transport": "streamable_http", "url": f"{secured_url}/mcp", "headers": headers}
    python = str(LANGCHAIN / ".venv-langchain" / "bin" / "python")
    argv = [python, str(LANGCHAIN / "langchain_client.py"), json.dumps(connection)]
    async with stdio.driven(argv, stdio.environment(settings)) as (tools, call):
        await _check(tools, call, graph)


def _agents_caller(server: MCPServer) -> Caller:
    async def call(tool: str, args: dict[str, Any]) -> Reply:
        result = await server.call_tool(tool, args)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise tool_failure(text)
        assert result.structured_content is not None
        return Reply(result.structured_content, text)

    return call


@asynccontextmanager
async def _agents_server(
    transport: str, settings: Settings, url: str, token: str
) -> AsyncIterator[MCPServer]:
    server: MCPServer
    if transport == "stdio":
        server = MCPServerStdio(params=_stdio_process(settings), client_session_timeout_seconds=stdio.WAIT_S)  # type: ignore[arg-type]
    else:
        params = {"url": f"{url}/mcp", "headers": {"Authorization": f"Bearer {token}"}}
        server = MCPServerStreamableHttp(params=params, client_session_timeout_seconds=stdio.WAIT_S)  # type: ignore[arg-type]
    async with server:
        yield server


@pytest.mark.parametrize("transport", ["streamable_http", "stdio"])
async def test_the_openai_agents_sdk_lists_and_calls_every_tool(
    transport: str, settings: Settings, secured_url: str, store: GraphStore, graph: str
) -> None:
    token = await _token(store, graph)
    async with _agents_server(transport, settings, secured_url, token) as server:
        tools = [tool.name for tool in await server.list_tools()]
        await _check(tools, _agents_caller(server), graph)
