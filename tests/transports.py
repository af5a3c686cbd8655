"""One way to call a tool per transport: MCP over streamable HTTP, MCP over SSE, and REST."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class ToolFailure(Exception):
    def __init__(self, code: str, detail: str, fields: list[str] | None = None):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail  # the message after the code
        self.fields = fields  # over REST
        self.status: int | None = None  # the HTTP status, over REST


@dataclass
class Reply:
    data: dict[str, Any]
    text: str | None  # the seed's text rendering (MCP only)


class Caller(Protocol):
    async def __call__(self, tool: str, args: dict[str, Any]) -> Reply: ...


_CODE = re.compile(r"^Error executing tool \w+: (\w+): (.*)$", re.S)


def tool_failure(text: str) -> ToolFailure:
    """A tool error's text (`Error executing tool <tool>: <code>: <message>`) as the failure it names."""
    match = _CODE.match(text)
    return ToolFailure(match.group(1), match.group(2)) if match else ToolFailure("error", text)


def mcp_caller(client: Client) -> Caller:
    async def call(tool: str, args: dict[str, Any]) -> Reply:
        result = await client.call_tool(tool, args)
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        if result.is_error:
            raise tool_failure(text)
        assert result.structured_content is not None
        return Reply(result.structured_content, text)

    return call


REST_ROUTES = {
    "remember": ("POST", "/v1/memories"),
    "remember_batch": ("POST", "/v1/memories/batch"),
    "recall": ("POST", "/v1/recall"),
    "link": ("POST", "/v1/links"),
    "explore": ("POST", "/v1/explore"),
    "anchor_now": ("POST", "/v1/anchor"),
    "store_event": ("POST", "/v1/locus/store_event"),
    "retrieve_memories": ("POST", "/v1/locus/retrieve_memories"),
    "list_contexts": ("POST", "/v1/locus/list_contexts"),
    "generate_insights": ("POST", "/v1/locus/generate_insights"),
}


def _rest_caller(http: httpx.AsyncClient) -> Caller:
    async def call(tool: str, args: dict[str, Any]) -> Reply:
        params = {"graph": args["graph"]} if "graph" in args else {}
        if tool == "forget":
            response = await http.delete(f"/v1/memories/{args['id']}", params=params)
        elif tool == "verify_memory":
            response = await http.get(f"/v1/memories/{args['id']}/verify", params=params)
        else:
            method, path = REST_ROUTES[tool]
            response = await http.request(method, path, json=args)
        body = response.json()
        if response.status_code >= 400:
            assert 400 <= response.status_code < 500, body
            error = body["error"]
            failure = ToolFailure(error["code"], error["message"], error["fields"])
            failure.status = response.status_code
            raise failure
        return Reply(body, None)

    return call


@asynccontextmanager
async def connect(
    transport: str, base_url: str, headers: dict[str, str] | None = None
) -> AsyncIterator[Caller]:
    headers = headers or {}
    if transport == "mcp-streamable-http":
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
        ):
            yield mcp_caller(client)
    elif transport == "mcp-sse":
        async with Client(sse_client(f"{base_url}/sse", headers=headers)) as client:
            yield mcp_caller(client)
    else:
        async with httpx.AsyncClient(base_url=base_url, timeout=30, headers=headers) as http:
            yield _rest_caller(http)


TRANSPORTS = ["mcp-streamable-http", "mcp-sse", "rest"]
