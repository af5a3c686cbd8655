"""`graphsvc mcp` under the TypeScript SDK's stdio client and the MCP Inspector's CLI (npm packages
in tests/clients/, installed by scripts/bootstrap): every tool, a bad input, portable schemas."""

from __future__ import annotations

import json
import subprocess

import pytest

from graphsvc.config import Settings
from graphsvc.services.operations import TOOLS
from tests import stdio
from tests.every_tool import check_every_tool, every_tool
from tests.transports import ToolFailure, tool_failure

pytestmark = pytest.mark.neo4j
CLIENTS = stdio.REPO / "tests" / "clients"
INSPECTOR = CLIENTS / "node_modules" / ".bin" / "inspector"
WAIT_S = 120


async def test_the_typescript_sdk_lists_and_calls_every_tool_over_stdio(
    settings: Settings, graph: str
) -> None:
    argv = ["node", str(CLIENTS / "ts_stdio.mjs"), stdio.GRAPHSVC, "mcp"]
    async with stdio.driven(argv, stdio.environment(settings)) as (tools, call):
        assert tools == [op.name for op in TOOLS]
        check_every_tool(await every_tool(call, graph))
        with pytest.raises(ToolFailure) as refused:
            await call("remember", {"text": "", "graph": graph})
        assert refused.value.code == "invalid_input"


def inspector(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """The Inspector's CLI starting `graphsvc mcp` (the variables passed with -e, as a client config
    names them)."""
    variables = [
        f"-e{k}={v}"
        for k, v in stdio.environment(settings).items()
        if k.startswith(("GRAPHSVC", "MONAD", "ANCHOR"))
    ]
    command = [
        str(INSPECTOR),
        "--cli",
        "--connect-timeout",
        str(WAIT_S * 1000),
        *variables,
        stdio.GRAPHSVC,
        "mcp",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S + 30, cwd=stdio.REPO)


def test_the_inspector_finds_every_tool_schema_portable(settings: Settings) -> None:
    listed = inspector(settings, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stderr  # --strict: exit 6 on a schema clients cannot take
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == [op.name for op in TOOLS]


def test_the_inspector_calls_a_tool_and_sees_a_bad_input_refused(settings: Settings, graph: str) -> None:
    remembered = inspector(
        settings, "--method", "tools/call", "--tool-name", "remember",
        "--tool-arg", "text=Ada prefers tea", f"graph={graph}", 'entities=[{"label": "Person", "name": "Ada"}]',
    )  # fmt: skip
    assert remembered.returncode == 0, remembered.stderr
    receipt = json.loads(remembered.stdout)
    assert receipt["structuredContent"]["entities"][0]["id"] == "Person:Ada"
    refused = inspector(
        settings, "--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=tea", "hops=9"
    )
    assert refused.returncode != 0
    result, _ = json.JSONDecoder().raw_decode(refused.stdout)  # the tool's result, then the CLI's verdict
    assert result["isError"] is True
    assert tool_failure(result["content"][0]["text"]).code == "invalid_input"
