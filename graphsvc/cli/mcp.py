"""`graphsvc mcp`: the MCP tools over stdio, for clients that start a command (Claude Desktop...).

In process (the default), it is graphsvc itself on the configured Neo4j (the local stack `graphsvc up`
runs, found through `--home` as the other commands find it), with its background workers; it acts
with the database's credentials, as every command does (any graph, no token), or as the token in
GRAPHSVC_TOKEN (its graph and scopes, checked at every call). With `--url` it bridges to a running
graphsvc over streamable HTTP, with GRAPHSVC_TOKEN as its bearer token.

stdout carries MCP and nothing else; logs go to stderr. It exits 0 when stdin closes or on SIGTERM
(what clients send when a closed stdin is not enough: the services are closed first, so what they
hold, such as the anchoring lease, is released rather than left to lapse), and 1 with one line on
stderr when it cannot start (Neo4j or the server unreachable, a refused token) or when the client
closes stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import uvloop

from graphsvc import connect, logs
from graphsvc.app import VERSION, Services
from graphsvc.cli.common import base_url, expiry, settings_of, with_services
from graphsvc.config import ChainSettings, Settings
from graphsvc.errors import Unavailable
from graphsvc.mcpserver import bridge, stdio
from graphsvc.mcpserver.server import OffHttp, create_mcp_server
from graphsvc.services.operations import Backends


async def _in_process(settings: Settings) -> None:
    token = settings.token.get_secret_value() if settings.token else None
    authorization = f"Bearer {token}" if token else None
    services = Services.build(settings)
    try:
        try:
            await services.start(wait_s=settings.deadline_s, listening=False)
        except Unavailable as e:
            raise Unavailable(
                f"Neo4j at {settings.neo4j.uri} cannot be reached ({e}): start the local stack with "
                "./run (or graphsvc up), or set GRAPHSVC_NEO4J_URI"
            ) from e
        if authorization:
            await services.access.authenticate(authorization)  # a refused token stops here, not at a call
        else:
            services.access.required = False  # the operator's own process, as every command is
        services.start_workers()
        backends = Backends(services.memory, services.anchoring, services.locus)
        off_http = OffHttp("mcp-stdio", authorization)
        server = create_mcp_server(
            backends, services.access, version=VERSION, off_http=off_http, deadline_s=settings.deadline_s
        )
        await _serve(server)
    finally:
        await services.close()


async def _bridged(url: str, settings: Settings) -> None:
    token = settings.token.get_secret_value() if settings.token else None
    async with bridge.remote(url, token, VERSION) as client:
        await _serve(await bridge.create_bridge(client, VERSION))


async def _serve(server: stdio.Server) -> None:
    with stdio.claimed_stdio() as (wire_in, wire_out):
        await stdio.serve(server, server.create_initialization_options(), wire_in, wire_out)


def cmd_mcp(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    logs.configure(settings, "plain")  # to stderr
    main = _bridged(args.url, settings) if args.url else _in_process(settings)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        try:
            runner.run(_until_terminated(main))
        except stdio.ClientGone as gone:
            print(f"graphsvc: {gone}", file=sys.stderr)
            return 1
    return 0


async def _until_terminated(main: Coroutine[Any, Any, None]) -> None:
    """Runs `main`; SIGTERM cancels it, so that its `finally` closes the services."""
    task = asyncio.ensure_future(main)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task


def cmd_connect(args: argparse.Namespace) -> int:
    """A fresh token bound to one graph, and `args.client`'s config or command with it (stdout); where
    it goes, and the token alone, on stderr."""
    settings = settings_of(args)
    url = args.url or f"{base_url(settings)}/mcp"
    scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
    expires = expiry(args.expires)

    async def mint(services: Services) -> str:
        token, _ = await services.access.create(args.graph, scopes, expires)
        return token

    token = with_services(mint, settings.model_copy(update={"chain": ChainSettings()}))
    bridged = ("mcp", "--url", url)
    in_process = ("mcp", "--home", str(args.home.resolve()))
    args_of = bridged if args.transport == "http" else in_process
    target = connect.Target(args.name, token, url, _installed(), args_of, args.transport)
    print(connect.render(args.client, target))
    print(f"# {connect.WHERE[args.client]}", file=sys.stderr)
    print(f"# token for graph {args.graph!r} ({','.join(scopes)}): {token}", file=sys.stderr)
    return 0


def _installed() -> str:
    """The absolute path of this `graphsvc` command (the one beside this Python, in a venv's bin/)."""
    return str(Path(sys.executable).parent.resolve() / "graphsvc")


def register(commands: Any, stack: argparse.ArgumentParser) -> None:
    """Add `mcp` and `connect` to `graphsvc`'s subcommands."""
    mcp = commands.add_parser(
        "mcp",
        parents=[stack],
        help="serve the MCP tools over stdio (in process, or --url to bridge to a running graphsvc)",
        epilog="GRAPHSVC_TOKEN: the bearer token to call with (required by --url once auth is on). "
        "Exit: 0 when stdin closes, 1 when it cannot start or the client closes stdout.",
    )
    mcp.add_argument("--url", help="a running graphsvc's streamable HTTP endpoint (http://host:8080/mcp)")
    mcp.set_defaults(run=cmd_mcp)
    link = commands.add_parser(
        "connect",
        parents=[stack],
        help="print a client's config (or command) for graphsvc, with a fresh token bound to one graph",
    )
    link.add_argument("client", choices=connect.CLIENTS)
    link.add_argument(
        "--transport",
        choices=("http", "stdio"),
        default="http",
        help="http: the client calls graphsvc's URL (Claude Desktop through `graphsvc mcp --url`); "
        "stdio: the client starts `graphsvc mcp` in process (default: http)",
    )
    link.add_argument("--url", help="graphsvc's streamable HTTP endpoint (default: this machine's, /mcp)")
    link.add_argument("--graph", default="default", help="the graph the token is bound to (default: default)")
    link.add_argument("--scopes", default="memory.read,memory.write")
    link.add_argument("--expires", help="30d, 12h, 90m, or an ISO 8601 time (default: never)")
    link.add_argument(
        "--name", default="graphsvc", help="the server's name in the client (default: graphsvc)"
    )
    link.set_defaults(run=cmd_connect)
