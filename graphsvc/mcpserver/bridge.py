"""`graphsvc mcp --url`: a running graphsvc's tools, served over stdio.

One MCP client session (the SDK's, over streamable HTTP with the bearer token) is opened at start,
which checks the address and the token before stdio serves anything; each `tools/call` is that
session's, its result passed on as it came (content, structured content, error flag). The tool list
is the server's own, read once. A call that cannot reach the server is answered as graphsvc answers
an outage: a tool error with the code `unavailable`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    Implementation,
    ListToolsResult,
    PaginatedRequestParams,
)

from graphsvc.errors import Unavailable
from graphsvc.mcpserver.server import failed

log = logging.getLogger("graphsvc")
TIMEOUT_S = 120.0  # a call's longest wait: anchor_now waits for finality (30 s by default) and more


@asynccontextmanager
async def remote(url: str, token: str | None, version: str) -> AsyncGenerator[Client]:
    """A session with the graphsvc at `url`.

    Raises:
        Unavailable: it cannot be reached, refuses the token, or does not speak MCP there.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    info = Implementation(name="graphsvc-mcp-bridge", version=version)
    try:
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(
                streamable_http_client(url, http_client=http),
                client_info=info,
                read_timeout_seconds=TIMEOUT_S,
            ) as client,
        ):
            yield client
    except Exception as e:  # connect errors, an HTTP status, a protocol error: all of them mean "not there"
        raise Unavailable(f"graphsvc at {url} cannot be used: {_reason(e)}") from e


def _reason(error: BaseException) -> str:
    """The innermost cause worth showing (a task group wraps what its tasks raised)."""
    while isinstance(error, BaseExceptionGroup):
        error = cast(BaseExceptionGroup[BaseException], error).exceptions[0]
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class _Bridge:
    def __init__(self, client: Client, listed: ListToolsResult) -> None:
        self.client = client
        self.listed = listed
        self.schemas: Mapping[str, Mapping[str, Any]] = {t.name: t.input_schema for t in listed.tools}

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self.listed

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        try:
            return await self.client.call_tool(params.name, params.arguments or {})
        except Exception as e:
            log.warning("tool %s: the server did not answer: %s", params.name, _reason(e))
            return failed(
                f"Error executing tool {params.name}: unavailable: graphsvc did not answer ({_reason(e)})"
            )


async def create_bridge(client: Client, version: str) -> Server[Any]:
    """A stdio-servable Server whose tools are those `client`'s server lists."""
    bridge = _Bridge(client, await client.list_tools())
    return Server(
        "graphsvc",
        version=version,
        instructions=client.instructions,
        get_tool_input_schema=bridge.schemas.get,
        on_list_tools=bridge.list_tools,
        on_call_tool=bridge.call_tool,
    )
