"""`graphsvc`: up (the whole local stack), serve, schema apply."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

import uvicorn

from graphsvc.app import Services, create_app
from graphsvc.config import Settings
from graphsvc.devstack import neo4j as local_neo4j


def _urls(settings: Settings, browser: str | None) -> str:
    base = f"http://{settings.http.host}:{settings.http.port}"
    lines = [
        "graphsvc is up:",
        f"  MCP (streamable HTTP)  {base}/mcp",
        f"  MCP (SSE)              {base}/sse",
        f"  REST API docs          {base}/docs",
        f"  Health                 {base}/health",
    ]
    if browser:
        lines.append(f"  Neo4j Browser          {browser}")
        lines.append(f"                         login: {settings.neo4j.user} / {settings.neo4j.password.get_secret_value()}")
    return "\n".join(lines)


async def _serve(settings: Settings, browser: str | None = None) -> None:
    config = uvicorn.Config(
        create_app(settings), host=settings.http.host, port=settings.http.port, log_level="warning"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():
        await asyncio.sleep(0.1)
    if server.started:
        print(_urls(settings, browser), flush=True)
    await task


def cmd_serve(_: argparse.Namespace) -> int:
    asyncio.run(_serve(Settings()))
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    """Neo4j (the embedded default, unless GRAPHSVC_NEO4J_URI names one) and graphsvc, in one command."""
    settings = Settings()
    if os.environ.get("GRAPHSVC_NEO4J_URI"):
        asyncio.run(_serve(settings))
        return 0
    password = settings.neo4j.password.get_secret_value()
    server = local_neo4j.start(args.home, bolt_port=args.bolt_port, http_port=args.http_port, password=password)
    settings = settings.model_copy(update={"neo4j": settings.neo4j.model_copy(update={"uri": server.bolt_uri})})
    print(f"Neo4j {local_neo4j.NEO4J_VERSION} running from {server.home} (pid {server.pid})", flush=True)
    try:
        asyncio.run(_serve(settings, server.browser_url))
    except KeyboardInterrupt:
        pass
    finally:
        local_neo4j.stop(args.home)
    return 0


def cmd_schema_apply(_: argparse.Namespace) -> int:
    async def apply() -> list[str]:
        services = Services.build(Settings())
        try:
            await services.start()
            return await services.store.apply_schema()
        finally:
            await services.close()

    for name in asyncio.run(apply()):
        print(f"applied {name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphsvc", description="Memory service for AI agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start Neo4j (embedded default) and graphsvc, print the URLs")
    up.add_argument("--home", type=Path, default=Path("var/neo4j"), help="Neo4j home (data, logs)")
    up.add_argument("--bolt-port", type=int, default=7687)
    up.add_argument("--http-port", type=int, default=7474)
    up.set_defaults(run=cmd_up)
    commands.add_parser("serve", help="serve on GRAPHSVC_HTTP_HOST:PORT against GRAPHSVC_NEO4J_URI").set_defaults(
        run=cmd_serve
    )
    schema = commands.add_parser("schema", help="schema commands").add_subparsers(dest="action", required=True)
    schema.add_parser("apply", help="create constraints and indexes (idempotent)").set_defaults(
        run=cmd_schema_apply
    )
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except local_neo4j.DevstackError as e:
        print(f"graphsvc: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
