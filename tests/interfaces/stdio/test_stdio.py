"""`graphsvc mcp`: the tools over stdio, in process on the test session's Neo4j and chain, or bridged to
a running graphsvc; bad lines, oversized lines, stdin closing and a missing Neo4j never hang it."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from typing import Any

import pytest
from mcp import Client

from graphsvc.config import Settings
from tests import stdio
from tests.conftest import free_port
from tests.every_tool import check_every_tool, every_tool
from tests.transports import ToolFailure, mcp_caller

pytestmark = pytest.mark.neo4j
WAIT_S = 120  # a cold process on a loaded machine: imports, schema check, chain check


async def test_every_tool_answers_over_stdio_in_process_as_listed_over_http(
    settings: Settings, server_url: str, graph: str
) -> None:
    async with Client(f"{server_url}/mcp") as http:
        over_http = (await http.list_tools()).tools
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio.client(settings, errlog) as client:
            over_stdio = (await client.list_tools()).tools
            assert [t.model_dump() for t in over_stdio] == [t.model_dump() for t in over_http]
            check_every_tool(await every_tool(mcp_caller(client), graph))
            with pytest.raises(ToolFailure) as refused:
                await mcp_caller(client)("recall", {"query": "tea", "hops": 9, "graph": graph})
            assert refused.value.code == "invalid_input"


async def test_stdio_bridged_to_a_secured_server_calls_as_its_token(
    settings: Settings, secured_url: str, graph: str
) -> None:
    token = _token(settings, graph)
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio.client(
            settings, errlog, "--url", f"{secured_url}/mcp", GRAPHSVC_TOKEN=token
        ) as client:
            call = mcp_caller(client)
            check_every_tool(await every_tool(call, graph))
            with pytest.raises(ToolFailure) as refused:
                await call("recall", {"query": "tea", "graph": graph + "-other"})
            assert refused.value.code == "forbidden"


async def test_stdio_in_process_with_a_token_is_bound_to_its_graph(settings: Settings, graph: str) -> None:
    token = _token(settings, graph)
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio.client(settings, errlog, GRAPHSVC_TOKEN=token) as client:
            call = mcp_caller(client)
            stored = (await call("remember", {"text": "bound to its graph"})).data
            assert (await call("recall", {"query": "bound", "graph": graph})).data["memories"][0][
                "id"
            ] == stored["id"]
            with pytest.raises(ToolFailure) as refused:
                await call("recall", {"query": "bound", "graph": "default"})
            assert refused.value.code == "forbidden"


def _token(settings: Settings, graph: str) -> str:
    done = subprocess.run(
        [stdio.GRAPHSVC, "token", "create", "--graph", graph, "--scopes", "memory.read,memory.write"],
        env=stdio.environment(settings),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        cwd=stdio.REPO,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--url", "http://127.0.0.1:{port}/mcp"), id="bridge-to-nothing"),
        pytest.param((), id="neo4j-down"),
    ],
)
def test_graphsvc_mcp_that_cannot_start_exits_1_with_one_line_and_nothing_on_stdout(
    settings: Settings, args: tuple[str, ...]
) -> None:
    port = free_port()
    argv = [a.format(port=port) for a in args]
    env = {"GRAPHSVC_NEO4J_URI": f"bolt://127.0.0.1:{port}", "GRAPHSVC_DEADLINE_S": "2"}
    process = stdio.spawn(settings, *argv, **env)
    out, err = process.communicate(stdio.INITIALIZE, timeout=WAIT_S)
    assert process.returncode == 1
    assert out == b""
    assert b"Traceback" not in err
    assert err.decode().strip().splitlines()[-1].startswith("graphsvc: ")


def _answers(out: bytes) -> dict[Any, dict[str, Any]]:
    """Every line of stdout is one JSON-RPC message; the answers by id."""
    messages = [json.loads(line) for line in out.splitlines()]
    return {m.get("id"): m for m in messages if "result" in m or "error" in m}


def test_bad_lines_get_json_rpc_errors_and_the_session_goes_on(settings: Settings, graph: str) -> None:
    huge = (
        b'{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": "remember", '
        b'"arguments": {"text": "' + b"x" * (10 * 1024 * 1024) + b'"}}}\n'
    )
    lines = [
        stdio.INITIALIZE,
        stdio.INITIALIZED,
        b"this is not json\n",
        b'{"id": 5, "hello": "world"}\n',
        huge,
        stdio.request("tools/call", {"name": "recall", "arguments": {"query": "x", "graph": graph}}, 8),
    ]
    process = stdio.spawn(settings)
    out, err = process.communicate(b"".join(lines), timeout=WAIT_S)
    assert process.returncode == 0, err.decode()[-2000:]
    answers = _answers(out)
    assert answers[None]["error"]["code"] == -32700  # not JSON: parse error, id null
    assert answers[5]["error"]["code"] == -32600  # JSON, not JSON-RPC: invalid request, its id
    assert answers[77]["error"]["code"] == -32600  # over 4 MB: refused, its leading id kept
    assert "result" in answers[8], answers[8]
    assert answers[8]["result"]["structuredContent"]["memories"] == []  # the session went on


def test_stdin_closed_mid_call_answers_the_call_then_exits_0(settings: Settings, graph: str) -> None:
    remember = {"name": "remember", "arguments": {"text": "written as stdin closed", "graph": graph}}
    process = stdio.spawn(settings)
    out, err = process.communicate(
        stdio.INITIALIZE + stdio.INITIALIZED + stdio.request("tools/call", remember, 2), timeout=WAIT_S
    )
    assert process.returncode == 0, err.decode()[-2000:]
    assert _answers(out)[2]["result"]["structuredContent"]["id"].startswith("mem_")


def test_sigterm_closes_the_services_and_exits_0(settings: Settings, graph: str) -> None:
    process = stdio.spawn(settings)
    assert process.stdin and process.stdout
    process.stdin.write(stdio.INITIALIZE)
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1  # serving: the services are up
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, err.decode()[-2000:]
    assert b"Traceback" not in err


def test_stdout_closed_by_the_client_ends_with_one_line_not_a_traceback(
    settings: Settings, graph: str
) -> None:
    remember = {"name": "remember", "arguments": {"text": "its answer has nowhere to go", "graph": graph}}
    process = stdio.spawn(settings)
    assert process.stdin and process.stdout
    process.stdin.write(stdio.INITIALIZE)
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    process.stdout.close()  # the client stops reading; the next answer meets a broken pipe
    process.stdin.write(stdio.INITIALIZED + stdio.request("tools/call", remember, 2))
    process.stdin.flush()
    _, err = process.communicate(timeout=WAIT_S)
    assert b"Traceback" not in err, err.decode()[-3000:]
    assert process.returncode == 1, err.decode()[-2000:]
    assert err.decode().strip().splitlines()[-1] == "graphsvc: the client closed stdout; stopping"
