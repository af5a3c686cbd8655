"""The error tree. Every interface maps it once (REST: one handler; MCP: a tool error).

    GraphsvcError               code            HTTP
    ├── InvalidInput            invalid_input   422
    ├── Unauthorized            unauthorized    401   (no valid bearer token)
    ├── Forbidden               forbidden       403   (another graph, or a scope missing)
    ├── NotFound                not_found       404
    ├── Conflict                conflict        409
    ├── NotConfigured           not_configured  503
    └── Unavailable             unavailable     503   (Neo4j cannot be reached)
        ├── Refused             unavailable     503   (Neo4j refused a statement: not an outage)
        └── ChainUnavailable    chain_unavailable 503 (the chain RPC cannot be reached)

Messages are written for the caller: they never echo a query or its parameters, nor a secret (an
RPC URL's path or credentials often hold an API key: `public_url` keeps only scheme, host and port),
nor name a library, a model or a URL. `fields` names the input fields at fault (dotted paths, e.g.
`entities.0.label`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit


class GraphsvcError(Exception):
    code = "error"
    status = 500

    def __init__(self, message: str, fields: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.fields = list(fields)


class InvalidInput(GraphsvcError):
    code = "invalid_input"
    status = 422


class Unauthorized(GraphsvcError):
    code = "unauthorized"
    status = 401


class Forbidden(GraphsvcError):
    code = "forbidden"
    status = 403


class NotFound(GraphsvcError):
    code = "not_found"
    status = 404


class Conflict(GraphsvcError):
    code = "conflict"
    status = 409


class NotConfigured(GraphsvcError):
    code = "not_configured"
    status = 503


class Unavailable(GraphsvcError):
    code = "unavailable"
    status = 503


class Refused(Unavailable):
    """Neo4j answered, but refused the statement (logged with its code). Not an outage: a group
    commit retries its writers one by one, so that one writer's content fails it alone
    (services/remember.py)."""


class ChainUnavailable(Unavailable):
    code = "chain_unavailable"


# Validation messages that would name an internal model or the validation library.
_GENERIC = {
    "model_type": "Input should be an object",
    "model_attributes_type": "Input should be an object",
    "dataclass_type": "Input should be an object",
    "is_instance_of": "Input has the wrong type",
}
_PREFIXES = ("Value error, ", "Assertion failed, ")


def _field(error: Mapping[str, Any], skip: int) -> str:
    return ".".join(str(part) for part in error["loc"][skip:])


def _reason(error: Mapping[str, Any]) -> str:
    message = _GENERIC.get(error["type"], str(error["msg"]))
    for prefix in _PREFIXES:
        message = message.removeprefix(prefix)
    return message


def validation_reasons(errors: Sequence[Mapping[str, Any]], *, skip: int = 0) -> str:
    """The first five validation errors as `field: reason`, never the rejected values (they are the
    caller's data). `skip` drops leading path parts (REST's "body", "path", "query", "header")."""
    return "; ".join(f"{_field(e, skip) or 'input'}: {_reason(e)}" for e in errors[:5])


def invalid_input(errors: Sequence[Mapping[str, Any]], *, skip: int = 0) -> InvalidInput:
    """The InvalidInput for a list of validation errors (pydantic's `errors()` shape), the same at
    every edge: message `field: reason; ...`, fields the sorted distinct paths."""
    fields = sorted({_field(e, skip) for e in errors} - {""})
    return InvalidInput(validation_reasons(errors, skip=skip), fields)


def public_url(url: str) -> str:
    """`scheme://host[:port]` of a URL: what may be shown of an RPC URL (never its path, query or
    credentials, where providers put API keys)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the configured URL"
    return f"{parts.scheme}://{host}{port}"
