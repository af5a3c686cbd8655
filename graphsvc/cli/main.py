"""`graphsvc`: the parser of every command; each command lives in the module of its area."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from graphsvc.cli import export as cli_export
from graphsvc.cli import mcp as cli_mcp
from graphsvc.cli.chain import cmd_anchor, cmd_deploy_contract, cmd_proof, cmd_verify, cmd_verify_bundle
from graphsvc.cli.common import address, settings_of
from graphsvc.cli.data import IMPORT_BATCH, cmd_fetch_model, cmd_import, cmd_schema_apply
from graphsvc.cli.stack import cmd_serve, cmd_up
from graphsvc.cli.tokens import cmd_token
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack import neo4j as local_neo4j
from graphsvc.errors import GraphsvcError, invalid_input


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
    check.add_argument("--contract", type=address, help="the anchor contract you trust (else the bundle's)")
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
    cli_export.register(commands, stack, settings_of, address)
    cli_mcp.register(commands, stack)
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
