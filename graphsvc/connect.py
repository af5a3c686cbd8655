"""What each MCP client needs to reach graphsvc, in the format its own documentation gives (a leaf:
stdlib only; `graphsvc connect` mints the token and prints these).

    claude-code     the `claude mcp add` command line, its options before the server's name:
                    `--transport http --header ... <name> <url>`, or
                    `--transport stdio --env ... <name> -- <command> <args...>`
    claude-desktop  claude_desktop_config.json: `mcpServers.<name>` {command, args, env}; its config
                    file starts commands only, so HTTP goes through `graphsvc mcp --url`
    cursor          .cursor/mcp.json: `mcpServers.<name>` {url, headers} or {command, args, env}
    vscode          .vscode/mcp.json: `servers.<name>` {type: "http", url, headers} or {type: "stdio",
                    command, args, env}, the token asked for once through an `inputs` promptString

Over HTTP the client sends the token as `Authorization: Bearer`; over stdio `graphsvc mcp` gets it as
GRAPHSVC_TOKEN, in process (`--home` names the local stack's state) or bridged (`--url`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any, Literal

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
Client = Literal["claude-code", "claude-desktop", "cursor", "vscode"]
Transport = Literal["http", "stdio"]
INPUT_ID = "graphsvc-token"


@dataclass(frozen=True)
class Target:
    """How the client reaches graphsvc: `url` over HTTP, else `command` + `args` over stdio."""

    name: str
    token: str
    url: str
    command: str  # an absolute path: clients start it from a directory of their own
    args: tuple[str, ...]
    transport: Transport


def _stdio(target: Target, token: str) -> dict[str, Any]:
    return {"command": target.command, "args": list(target.args), "env": {"GRAPHSVC_TOKEN": token}}


def _http(target: Target, token: str) -> dict[str, Any]:
    return {"url": target.url, "headers": {"Authorization": f"Bearer {token}"}}


def claude_code(target: Target) -> str:
    """The command line to run (options before the name, as `claude mcp add` requires)."""
    if target.transport == "http":
        header = f"Authorization: Bearer {target.token}"
        argv = ["claude", "mcp", "add", "--transport", "http", "--header", header, target.name, target.url]
    else:
        env = f"GRAPHSVC_TOKEN={target.token}"
        argv = ["claude", "mcp", "add", "--transport", "stdio", "--env", env, target.name, "--"]
        argv += [target.command, *target.args]
    return shlex.join(argv)


def claude_desktop(target: Target) -> dict[str, Any]:
    return {"mcpServers": {target.name: _stdio(target, target.token)}}


def cursor(target: Target) -> dict[str, Any]:
    entry = _http(target, target.token) if target.transport == "http" else _stdio(target, target.token)
    return {"mcpServers": {target.name: entry}}


def vscode(target: Target) -> dict[str, Any]:
    secret = "${input:" + INPUT_ID + "}"
    entry = (
        {"type": "http", **_http(target, secret)}
        if target.transport == "http"
        else {"type": "stdio", **_stdio(target, secret)}
    )
    prompt = {
        "type": "promptString",
        "id": INPUT_ID,
        "description": "graphsvc token (gsk_…), printed by graphsvc connect",
        "password": True,
    }
    return {"inputs": [prompt], "servers": {target.name: entry}}


def render(client: Client, target: Target) -> str:
    """The command (claude-code) or the JSON file's content (the others) for `client`."""
    if client == "claude-code":
        return claude_code(target)
    config = {"claude-desktop": claude_desktop, "cursor": cursor, "vscode": vscode}[client](target)
    return json.dumps(config, indent=2, ensure_ascii=False)


WHERE = {
    "claude-code": "run it in a shell (add --scope user or --scope project before the name to choose where it is kept)",
    "claude-desktop": "merge into claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop",
    "cursor": "merge into .cursor/mcp.json in your project, or ~/.cursor/mcp.json for every project",
    "vscode": "merge into .vscode/mcp.json; VS Code asks for the token once (it is printed below)",
}
