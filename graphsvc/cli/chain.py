"""anchor, verify, proof, verify-bundle and deploy-contract: the commands about the chain."""

from __future__ import annotations

import argparse
import asyncio
import sys

from graphsvc import verifier
from graphsvc.chain.anchor import AnchorContract
from graphsvc.cli.common import settings_of, with_services
from graphsvc.config import Settings
from graphsvc.domain import render
from graphsvc.domain.models import GraphInput, IdInput
from graphsvc.errors import GraphsvcError


def cmd_anchor(args: argparse.Namespace) -> int:
    result = with_services(lambda s: s.anchoring.anchor_now(GraphInput(graph=args.graph)), settings_of(args))
    print(render.anchor_text(result))
    return 0 if result.status != "not_configured" else 2


def cmd_verify(args: argparse.Namespace) -> int:
    result = with_services(
        lambda s: s.anchoring.verify(IdInput(id=args.id, graph=args.graph)), settings_of(args)
    )
    print(render.verify_text(result))
    return 0 if result.verified else 1


def cmd_proof(args: argparse.Namespace) -> int:
    bundle = with_services(
        lambda s: s.anchoring.bundle(IdInput(id=args.id, graph=args.graph)), settings_of(args)
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
