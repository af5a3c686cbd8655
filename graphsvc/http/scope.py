"""What the HTTP edge leaves in a request's ASGI scope for the interfaces behind it (REST, MCP):
the caller it authenticated, so that a request looks its token up once."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from graphsvc.services import deadline
from graphsvc.services.access import Principal

PRINCIPAL = "principal"
ARRIVED = "arrived"


def arrive(scope: MutableMapping[str, Any]) -> None:
    """Note the request's arrival, from which its one deadline counts (`services.deadline`)."""
    scope.setdefault("state", {})[ARRIVED] = deadline.now()


def arrived(scope: Mapping[str, Any]) -> float | None:
    """When the edge saw the request arrive (None: it did not see it)."""
    return scope.get("state", {}).get(ARRIVED)


def keep(scope: MutableMapping[str, Any], principal: Principal | None) -> None:
    scope.setdefault("state", {})[PRINCIPAL] = principal


def checked(scope: Mapping[str, Any]) -> bool:
    """Whether the edge authenticated this request (it does when a token is presented, and on REST)."""
    return PRINCIPAL in scope.get("state", {})


def principal(scope: Mapping[str, Any]) -> Principal | None:
    """The caller the edge found (None: no token, auth not required, or not checked)."""
    return scope.get("state", {}).get(PRINCIPAL)
