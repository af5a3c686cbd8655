"""`graphsvc mcp` as clients start it: a subprocess with the test session's Neo4j and chain in its
environment, talked to over its stdin and stdout."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from graphsvc.config import Settings
from tests.transports import Caller, Reply, tool_failure

GRAPHSVC = str(Path(sys.executable).parent / "graphsvc")
REPO = Path(__file__).resolve().parents[1]
WAIT_S = 120  # a cold process on a loaded machine: imports, schema check, chain check


def environment(settings: Settings, **extra: str) -> dict[str, str]:
    """The variables that make `graphsvc` reach the test session's Neo4j and chain."""
    chain, neo = settings.chain, settings.neo4j
    key = chain.private_key.get_secret_value() if chain.private_key else ""
    return {
        "GRAPHSVC_NEO4J_URI": neo.uri,
        "GRAPHSVC_NEO4J_USER": neo.user,
        "GRAPHSVC_NEO4J_PASSWORD": neo.password.get_secret_value(),
        "GRAPHSVC_DEADLINE_S": str(settings.deadline_s),
        "GRAPHSVC_EMBEDDINGS_ENABLED": "false",
        "GRAPHSVC_EXTRACTION_ENABLED": "false",  # its worker would read every test's memories
        "GRAPHSVC_CHAIN_NETWORK": "local",
        "MONAD_RPC_URL": chain.rpc_url or "",
        "ANCHOR_CONTRACT": chain.contract or "",
        "GRAPHSVC_CHAIN_PRIVATE_KEY": key,
        "GRAPHSVC_CHAIN_RECEIPT_TIMEOUT_S": "10",
        # The session's lease: a process a client kills while it anchors holds it no longer than
        # the session's own anchorers wait for it (tests/conftest.py).
        "GRAPHSVC_CHAIN_LEASE_TTL_S": str(settings.chain.lease_ttl_s),
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        **extra,
    }


def parameters(settings: Settings, *args: str, **extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=GRAPHSVC, args=["mcp", *args], env=environment(settings, **extra), cwd=REPO
    )


@asynccontextmanager
async def client(settings: Settings, errlog: IO[str], *args: str, **extra: str) -> AsyncIterator[Client]:
    """The Python SDK's stdio client on `graphsvc mcp`; its stderr goes to `errlog`."""
    async with Client(stdio_client(parameters(settings, *args, **extra), errlog=errlog)) as connected:
        yield connected


def spawn(settings: Settings, *args: str, **extra: str) -> subprocess.Popen[bytes]:
    """`graphsvc mcp` with pipes on all three streams, for speaking raw JSON-RPC to it."""
    return subprocess.Popen(
        [GRAPHSVC, "mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(settings, **extra),
        cwd=REPO,
    )


def request(method: str, params: dict[str, Any], id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode() + b"\n"


INITIALIZE = request(
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    1,
)
INITIALIZED = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'


@asynccontextmanager
async def driven(argv: list[str], env: dict[str, str]) -> AsyncIterator[tuple[list[str], Caller]]:
    """A client program of another SDK driven over its stdin and stdout, one JSON object a line (see
    tests/clients/ts_stdio.mjs): the tools it listed, and a Caller through it. It must exit 0 once
    its stdin closes."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=REPO, limit=2**24
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def line() -> Any:
        return json.loads(await asyncio.wait_for(stdout.readline(), WAIT_S))

    async def call(tool: str, args: dict[str, Any]) -> Reply:
        stdin.write(json.dumps({"tool": tool, "args": args}).encode() + b"\n")
        await stdin.drain()
        answer = await line()
        if answer["isError"]:
            raise tool_failure(answer["text"])
        return Reply(answer["structuredContent"], answer["text"])

    try:
        listed = (await line())["tools"]
        yield [t if isinstance(t, str) else t["name"] for t in listed], call
        stdin.close()
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
    finally:
        if process.returncode is None:
            process.kill()
