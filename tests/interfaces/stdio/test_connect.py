"""`graphsvc connect <client>`: each client's config in the format its own documentation gives, and the
configs work as printed: the token is fresh, bound to its graph, and reaches graphsvc by HTTP, by the
stdio bridge and by stdio in process.

The formats, from each client's documentation (checked 2026-12):
- Claude Code (code.claude.com/docs/en/mcp): `claude mcp add [options] <name> <url>` for HTTP with
  `--transport http` and `--header "Authorization: Bearer ..."`; `claude mcp add [options] <name> --
  <command> [args...]` for stdio with `--env KEY=value`; every option before the name.
- Claude Desktop (claude_desktop_config.json): `mcpServers.<name>` {command, args, env}; its config
  file starts commands only (remote servers are added as connectors in its settings).
- Cursor (cursor.com/docs/mcp): `mcpServers.<name>` with `url` and optional `headers`, or `command`,
  `args`, `env`; no top-level `servers`.
- VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration): `servers.<name>` with
  `type` "http" + `url` + `headers` or "stdio" + `command` + `args` + `env`, and `inputs` of type
  `promptString` (`id`, `description`, `password`) referenced as `${input:<id>}`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from graphsvc import connect
from graphsvc.config import Settings
from tests import stdio
from tests.transports import ToolFailure, mcp_caller

TOKEN = "gsk_0123456789ab_secret"
URL = "http://127.0.0.1:8080/mcp"
COMMAND = "/opt/graphsvc/bin/graphsvc"
VSCODE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")  # VS Code's mcp.json schema for a server's name


def target(transport: connect.Transport) -> connect.Target:
    args = ("mcp", "--url", URL) if transport == "http" else ("mcp", "--home", "/srv/graphsvc/var")
    return connect.Target("graphsvc", TOKEN, URL, COMMAND, args, transport)


def check_claude_code(line: str, t: connect.Target) -> None:
    argv = shlex.split(line)
    assert argv[:3] == ["claude", "mcp", "add"]
    named = argv.index(t.name)
    options = argv[3:named]
    assert options[:2] == ["--transport", t.transport]
    assert all(options[i].startswith("--") for i in range(0, len(options), 2))  # flag, value pairs
    if t.transport == "http":
        assert options[2:] == ["--header", f"Authorization: Bearer {t.token}"]
        assert argv[named + 1 :] == [t.url]
    else:
        assert options[2:] == ["--env", f"GRAPHSVC_TOKEN={t.token}"]
        assert argv[named + 1] == "--" and argv[named + 2 :] == [t.command, *t.args]


def check_stdio_entry(entry: dict[str, Any], t: connect.Target, token: str) -> None:
    assert set(entry) - {"type"} == {"command", "args", "env"}
    assert Path(entry["command"]).is_absolute() and entry["args"] == list(t.args)
    assert entry["env"] == {"GRAPHSVC_TOKEN": token}
    assert all(isinstance(a, str) for a in entry["args"])


def check_claude_desktop(config: dict[str, Any], t: connect.Target) -> None:
    assert set(config) == {"mcpServers"} and set(config["mcpServers"]) == {t.name}
    check_stdio_entry(config["mcpServers"][t.name], t, t.token)
    assert "type" not in config["mcpServers"][t.name]


def check_cursor(config: dict[str, Any], t: connect.Target) -> None:
    assert set(config) == {"mcpServers"}
    entry = config["mcpServers"][t.name]
    if t.transport == "http":
        assert entry == {"url": t.url, "headers": {"Authorization": f"Bearer {t.token}"}}
    else:
        check_stdio_entry(entry, t, t.token)


def check_vscode(config: dict[str, Any], t: connect.Target) -> None:
    assert set(config) == {"inputs", "servers"} and set(config["servers"]) == {t.name}
    assert VSCODE_NAME.match(t.name)
    [prompt] = config["inputs"]
    assert prompt["type"] == "promptString" and prompt["password"] is True and prompt["description"]
    secret = "${input:" + prompt["id"] + "}"
    entry = config["servers"][t.name]
    assert entry["type"] == t.transport
    if t.transport == "http":
        assert entry == {"type": "http", "url": t.url, "headers": {"Authorization": f"Bearer {secret}"}}
    else:
        check_stdio_entry(entry, t, secret)
    assert t.token not in json.dumps(config)  # the secret is asked for, never written in the file


CHECKS = {"claude-desktop": check_claude_desktop, "cursor": check_cursor, "vscode": check_vscode}


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("client", connect.CLIENTS)
def test_each_clients_config_has_the_format_its_documentation_gives(client: str, transport: str) -> None:
    t = target(transport)  # type: ignore[arg-type]
    printed = connect.render(client, t)  # type: ignore[arg-type]
    if client == "claude-code":
        check_claude_code(printed, t)
    else:
        CHECKS[client](json.loads(printed), t)


def run_connect(settings: Settings, *args: str) -> tuple[str, str]:
    """`graphsvc connect` as a user runs it: the printed config, and the token it minted."""
    done = subprocess.run(
        [stdio.GRAPHSVC, "connect", *args], env=stdio.environment(settings),
        capture_output=True, text=True, timeout=180, cwd=stdio.REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [token] = re.findall(r"gsk_\S+", done.stderr.splitlines()[-1])
    return done.stdout, token


async def check_bound(client: Client, graph: str) -> None:
    """The connection calls as a token bound to `graph`: its graph answers, another is refused."""
    call = mcp_caller(client)
    stored = (await call("remember", {"text": f"connected to {graph}"})).data
    assert (await call("recall", {"query": "connected", "graph": graph})).data["memories"][0]["id"] == stored[
        "id"
    ]
    with pytest.raises(ToolFailure) as refused:
        await call("recall", {"query": "connected", "graph": graph + "-other"})
    assert refused.value.code == "forbidden"


def _launch(entry: dict[str, Any], settings: Settings, token: str) -> StdioServerParameters:
    """A stdio entry started as its client would, with the session's Neo4j and chain beside it."""
    env = {k: (token if v.startswith("${input:") else v) for k, v in entry["env"].items()}
    return StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env=stdio.environment(settings) | env,
        cwd=tempfile.gettempdir(),
    )


@pytest.mark.neo4j
async def test_the_printed_configs_reach_graphsvc_bound_to_their_graph(
    settings: Settings, secured_url: str, graph: str
) -> None:
    url = f"{secured_url}/mcp"
    printed, token = run_connect(settings, "cursor", "--url", url, "--graph", graph)
    entry = json.loads(printed)["mcpServers"]["graphsvc"]
    async with (
        create_mcp_http_client(headers=entry["headers"]) as http,
        Client(streamable_http_client(entry["url"], http_client=http)) as client,
    ):
        await check_bound(client, graph)

    printed, token = run_connect(settings, "claude-desktop", "--url", url, "--graph", graph)
    entry = json.loads(printed)["mcpServers"]["graphsvc"]  # the bridge, `graphsvc mcp --url`
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(_launch(entry, settings, token), errlog=errlog)) as client:
            await check_bound(client, graph)

    printed, token = run_connect(settings, "vscode", "--transport", "stdio", "--graph", graph)
    entry = json.loads(printed)["servers"]["graphsvc"]  # in process, the token asked for by VS Code
    assert os.path.isabs(entry["args"][entry["args"].index("--home") + 1])
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(stdio_client(_launch(entry, settings, token), errlog=errlog)) as client:
            await check_bound(client, graph)
