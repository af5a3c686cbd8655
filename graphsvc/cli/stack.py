"""`graphsvc up` (Neo4j, a chain and graphsvc, local unless configured) and `graphsvc serve`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import uvicorn
import uvloop
from pydantic import SecretStr

from graphsvc import logs
from graphsvc.app import create_app
from graphsvc.browser import neo4j_settings
from graphsvc.chain.anchor import AnchorContract
from graphsvc.cli.common import STACK_FILE, base_url, interrupt
from graphsvc.cli.tokens import dev_token
from graphsvc.config import ChainSettings, Settings
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack import neo4j as local_neo4j
from graphsvc.errors import GraphsvcError


def _urls(settings: Settings, browser: str | None, token: str | None) -> str:
    base = base_url(settings)
    lines = [
        "graphsvc is up:",
        f"  MCP (streamable HTTP)  {base}/mcp",
        f"  MCP (SSE)              {base}/sse",
        f"  REST API docs          {base}/docs",
        f"  Health                 {base}/health",
        f"  Metrics (Prometheus)   {base}/metrics",
        f"  Verify a proof bundle  {base}/verify",
        f"  Browser guide          {base}/browser/guide.html",
    ]
    if token:
        lines.append(f"  Dev token (graph 'default', read+write)  Authorization: Bearer {token}")
    if browser:
        lines.append(f"  Neo4j Browser          {browser}")
        lines.append(
            f"                         login: {settings.neo4j.user} / {settings.neo4j.password.get_secret_value()}"
        )
    return "\n".join(lines)


def _serving(main: Coroutine[Any, Any, bool]) -> bool:
    """Run the server on uvloop's event loop (its sockets and scheduling in C; uvicorn parses HTTP with
    httptools, also a dependency): under remember load, the pure-Python loop's socket writes alone took
    a tenth of the server's time in the profile."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


# The last line of a start-up traceback whose error is graphsvc's own: the reason, said in one line.
_REFUSED = re.compile(r"^graphsvc\.errors\.\w+: (.+)\Z", re.S)


def _one_line_refusals(app: Any) -> Any:
    """`app`, whose start-up refusals (a GraphsvcError: no auth on a public address, a newer schema)
    uvicorn logs as their reason in one line rather than as Starlette's traceback."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        async def sent(message: Any) -> None:
            if message["type"] == "lifespan.startup.failed":
                last = message.get("message", "").rstrip().rpartition("\n")[2]
                if refused := _REFUSED.match(last):
                    message = {**message, "message": f"graphsvc cannot start: {refused.group(1)}"}
            await send(message)

        await app(scope, receive, sent if scope["type"] == "lifespan" else send)

    return wrapped


async def _serve(
    settings: Settings, log_format: logs.Format, browser: str | None = None, token: str | None = None
) -> bool:
    """Serve until stopped; False when it could not start (the reason logged)."""
    logs.configure(settings, log_format)
    config = uvicorn.Config(  # uvicorn's lines go through graphsvc's handler; its access log is ours
        _one_line_refusals(create_app(settings)),
        host=settings.http.host,
        port=settings.http.port,
        log_level="warning",
        log_config=None,
        access_log=False,
    )
    server = uvicorn.Server(config)

    async def serving() -> None:
        with contextlib.suppress(SystemExit):  # uvicorn's exit on a failed start-up, logged already
            await server.serve()

    task = asyncio.create_task(serving())
    while not server.started and not task.done():
        await asyncio.sleep(0.1)
    if server.started:
        print(_urls(settings, browser, token), flush=True)
    await task
    return server.started


def cmd_serve(_: argparse.Namespace) -> int:
    return 0 if _serving(_serve(Settings(), "json")) else 1


def _local_chain(home: Path, port: int) -> ChainSettings:
    """anvil with the anchor contract deployed (once: its state is kept in `home`)."""
    node = local_chain.start(home, port=port, block_time=1)
    settings = ChainSettings(
        network="local",
        rpc_url=node.rpc_url,
        private_key=SecretStr(local_chain.DEV_PRIVATE_KEY),
        receipt_timeout_s=30,
    )
    address_file = home / "contract.txt"
    address = address_file.read_text().strip() if address_file.exists() else None

    async def ensure_contract() -> str:
        contract = AnchorContract(
            node.rpc_url, address, local_chain.DEV_PRIVATE_KEY, local_chain.DEV_CHAIN_ID
        )
        try:
            if address:
                try:
                    await contract.check()
                    return address
                except GraphsvcError:
                    pass
            return await contract.deploy()
        finally:
            await contract.close()

    deployed = asyncio.run(ensure_contract())
    address_file.write_text(deployed + "\n")
    print(
        f"Local chain {node.rpc_url} (chain id {local_chain.DEV_CHAIN_ID}), anchor contract {deployed}",
        flush=True,
    )
    return settings.model_copy(update={"contract": deployed})


def cmd_up(args: argparse.Namespace) -> int:
    """Neo4j and a chain (local defaults unless GRAPHSVC_NEO4J_URI / MONAD_RPC_URL name them) + graphsvc."""
    # SIGTERM (docker stop, systemd, timeout) stops everything as Ctrl-C does: uvicorn re-raises the
    # signal once it has shut down, and this turns it into the KeyboardInterrupt that runs `finally`.
    signal.signal(signal.SIGTERM, interrupt)
    settings = Settings()
    browser = None
    stack: dict[str, Any] = {}  # what was started here, for the other commands (Settings.load)
    args.home.mkdir(parents=True, exist_ok=True)
    try:
        if not settings.neo4j_named:
            password = settings.neo4j.password.get_secret_value()
            server = local_neo4j.start(
                args.home / "neo4j",
                bolt_port=args.bolt_port,
                http_port=args.http_port,
                password=password,
                conf=neo4j_settings(base_url(settings)),
                cache=settings.cache_dir,
            )
            settings.neo4j.uri, browser = server.bolt_uri, server.browser_url
            stack["neo4j"] = {"uri": server.bolt_uri}
            print(
                f"Neo4j {local_neo4j.NEO4J_VERSION} running from {server.home} (pid {server.pid})", flush=True
            )
        if not settings.chain.configured:
            settings.chain = _local_chain(args.home / "chain", args.chain_port)
            stack["chain"] = settings.chain.model_dump(
                mode="json", include={"network", "rpc_url", "contract", "receipt_timeout_s"}
            ) | {"private_key": local_chain.DEV_PRIVATE_KEY}  # anvil's public development key only
        (args.home / STACK_FILE).write_text(json.dumps(stack, indent=2) + "\n")
        if not _serving(_serve(settings, "plain", browser, dev_token(args.home, settings))):
            return 1
    except KeyboardInterrupt:
        pass
    finally:
        (args.home / STACK_FILE).unlink(missing_ok=True)
        local_neo4j.stop(args.home / "neo4j")
        local_chain.stop(args.home / "chain")
    return 0
