"""Who may read and write which graph: bearer tokens bound to one graph with the seed's scopes.

A token reads `gsk_<id>_<secret>`; only sha256(secret) is stored, in an `ApiToken` node outside every
tenant graph. The same check guards MCP (SSE and streamable HTTP) and REST:

    no token, auth not required   -> the request's own graph (loopback development only)
    no token, auth required       -> Unauthorized
    bad / expired / revoked token -> Unauthorized
    X-Graph-Id or `graph` naming another graph than the token's -> Forbidden
    a scope missing (reads need memory.read, writes memory.read + memory.write) -> Forbidden

`authenticate` runs first, before a request's input is read (over HTTP a presented token that is not
valid answers 401 at once); the input is validated next; `permit` then picks the graph.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar

from pydantic import BaseModel

from graphsvc.domain.hashing import format_timestamp
from graphsvc.domain.models import DEFAULT_GRAPH
from graphsvc.domain.models.base import GRAPH
from graphsvc.errors import Forbidden, InvalidInput, NotFound, Unauthorized
from graphsvc.services.ports import Reader

READ, WRITE = "memory.read", "memory.write"
SCOPES = (READ, WRITE)
Need = Literal["read", "write"]
NEEDED: dict[Need, frozenset[str]] = {"read": frozenset({READ}), "write": frozenset({READ, WRITE})}
PREFIX = "gsk_"
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Principal:
    token_id: str
    graph: str
    scopes: frozenset[str]


class TokenInfo(BaseModel):
    id: str
    graph: str
    scopes: list[str]
    createdAt: str
    expiresAt: str | None
    revoked: bool


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class AccessService:
    def __init__(self, store: Reader, *, required: bool):
        self._store = store
        self.required = required

    # ---- tokens ---------------------------------------------------------------------------------

    async def create(
        self, graph: str, scopes: list[str], expires_at: datetime | None = None
    ) -> tuple[str, TokenInfo]:
        """A new token; the secret is returned here once and never stored."""
        if not re.fullmatch(GRAPH, graph):
            raise InvalidInput(
                f"a graph name is a letter or digit, then letters, digits, _ . or -: {graph!r}"
            )
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown or not scopes:
            raise InvalidInput(f"scopes are {', '.join(SCOPES)}; got {', '.join(unknown) or 'none'}")
        if WRITE in scopes and READ not in scopes:
            scopes = [READ, *scopes]
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        info = TokenInfo(
            id=token_id,
            graph=graph,
            scopes=sorted(set(scopes)),
            createdAt=format_timestamp(datetime.now(UTC)),
            expiresAt=format_timestamp(expires_at) if expires_at else None,
            revoked=False,
        )
        await self._store.run(
            "auth/create_token",
            id=token_id,
            hash=_digest(secret),
            graph=graph,
            scopes=info.scopes,
            createdAt=info.createdAt,
            expiresAt=info.expiresAt,
        )
        return f"{PREFIX}{token_id}_{secret}", info

    async def list(self) -> list[TokenInfo]:
        return [TokenInfo(**row) for row in await self._store.run("auth/list_tokens")]

    async def revoke(self, token_id: str) -> None:
        if not await self._store.run("auth/revoke_token", id=token_id):
            raise NotFound(f"no token {token_id!r}")

    async def any_active(self) -> bool:
        rows = await self._store.run("auth/active_tokens", now=format_timestamp(datetime.now(UTC)))
        return rows[0]["active"] > 0

    async def _principal(self, token: str) -> Principal | None:
        if not token.startswith(PREFIX) or token.count("_") < 2:
            return None
        token_id, secret = token[len(PREFIX) :].split("_", 1)
        rows = await self._store.run("auth/token", id=token_id)
        if not rows:
            return None
        row = rows[0]
        if not hmac.compare_digest(row["hash"], _digest(secret)) or row["revoked"]:
            return None
        if row["expiresAt"] is not None and row["expiresAt"] <= format_timestamp(datetime.now(UTC)):
            return None
        return Principal(token_id, row["graph"], frozenset(row["scopes"]))

    # ---- the checks at the edge -----------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> Principal | None:
        """Who calls, from the `Authorization` header: checked before anything reads the request.

        Returns:
            The token's principal, or None when there is no header and auth is not required.

        Raises:
            Unauthorized: a header that is not a valid bearer token (malformed, unknown, expired or
                revoked), or none where auth is required.
        """
        if not authorization:
            if self.required:
                raise Unauthorized("a bearer token is needed (Authorization: Bearer gsk_...)")
            return None
        scheme, _, token = authorization.partition(" ")
        principal = await self._principal(token.strip()) if scheme.lower() == "bearer" else None
        if principal is None:
            raise Unauthorized("the bearer token is malformed, unknown, expired or revoked")
        return principal

    def permit(
        self, principal: Principal | None, header_graph: str | None, requested_graph: str | None, need: Need
    ) -> str:
        """The graph this caller may use for this request.

        Args:
            principal: the caller, from `authenticate`.
            header_graph: the `X-Graph-Id` header, if any.
            requested_graph: the graph the request names itself (None when it names none).
            need: "read" or "write".

        Raises:
            Unauthorized: no caller where auth is required.
            Forbidden: another graph than the token's, or a scope missing.
        """
        if principal is None:
            if self.required:
                raise Unauthorized("a bearer token is needed (Authorization: Bearer gsk_...)")
            return requested_graph or header_graph or DEFAULT_GRAPH
        for named in (header_graph, requested_graph):
            if named is not None and named != principal.graph:
                raise Forbidden(f"this token is bound to graph {principal.graph!r}, not {named!r}")
        missing = sorted(NEEDED[need] - principal.scopes)
        if missing:
            raise Forbidden(f"this token lacks the scope {', '.join(missing)}")
        return principal.graph

    def scoped(self, principal: Principal | None, header_graph: str | None, request: M, need: Need) -> M:
        """`request` (a validated input) with its graph set to the one this caller may use."""
        named: str | None = getattr(request, "graph", None) if "graph" in request.model_fields_set else None
        return request.model_copy(update={"graph": self.permit(principal, header_graph, named, need)})

    async def authorize(
        self, authorization: str | None, header_graph: str | None, requested_graph: str | None, need: Need
    ) -> str:
        """`authenticate` then `permit`, for callers holding a raw header (the CLI)."""
        return self.permit(await self.authenticate(authorization), header_graph, requested_graph, need)
