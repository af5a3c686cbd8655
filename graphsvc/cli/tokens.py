"""`graphsvc token create|list|revoke`, and the development token `graphsvc up` prints."""

from __future__ import annotations

import argparse
from pathlib import Path

from graphsvc.app import Services
from graphsvc.cli.common import expiry, settings_of, with_services
from graphsvc.config import ChainSettings, Settings
from graphsvc.errors import GraphsvcError
from graphsvc.services.access import READ, WRITE


def cmd_token(args: argparse.Namespace) -> int:
    async def work(services: Services) -> None:
        access = services.access
        if args.action == "create":
            scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
            token, info = await access.create(args.graph, scopes, expiry(args.expires))
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

    with_services(work, settings_of(args).model_copy(update={"chain": ChainSettings()}))  # no chain needed
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

    return with_services(ensure, services_settings)
