"""What the commands share: the local stack's settings, where graphsvc is reached, services started for
one command, argument types."""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from graphsvc.app import Services
from graphsvc.config import Settings


def base_url(settings: Settings) -> str:
    """Where a client on this machine reaches graphsvc (a wildcard listen address means loopback)."""
    host = "127.0.0.1" if settings.http.host in ("0.0.0.0", "::") else settings.http.host
    return f"http://{host}:{settings.http.port}"


STACK_FILE = "stack.json"  # in --home: written by `graphsvc up`, read by the other commands


def settings_of(args: argparse.Namespace) -> Settings:
    """The environment's settings, completed by those of the local stack `graphsvc up` runs."""
    return Settings.load(args.home / STACK_FILE)


def with_services(work: Callable[[Services], Any], settings: Settings) -> Any:
    """Run `work` on started services (closed after), from a synchronous command."""

    async def run() -> Any:
        services = Services.build(settings)
        try:
            await services.start()
            return await work(services)
        finally:
            await services.close()

    return asyncio.run(run())


def interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def expiry(text: str | None) -> datetime | None:
    """`30d`, `12h`, `90m` from now, or an ISO 8601 time."""
    if not text:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes"}
    if text[:-1].isdigit() and text[-1] in units:
        return datetime.now(UTC) + timedelta(**{units[text[-1]]: int(text[:-1])})
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def address(text: str) -> str:
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", text):
        raise argparse.ArgumentTypeError("an address is 0x and 40 hex digits")
    return text
