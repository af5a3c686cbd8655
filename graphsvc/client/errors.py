"""What a call raises: the server's error tree (graphsvc.errors), one class per code the REST API
answers, each carrying the server's message and fields, plus what only a client sees.

    GraphsvcError                       code                 raised when
    ├── InvalidInput                    invalid_input        422, or the input fails the contract here
    ├── Unauthorized                    unauthorized         401
    ├── Forbidden                       forbidden            403
    ├── NotFound                        not_found            404
    ├── Conflict                        conflict             409
    ├── MethodNotAllowed                method_not_allowed   405 (a server older than this client)
    ├── ServerError                     internal             500, or an answer that is not graphsvc's
    ├── NotConfigured                   not_configured       503
    └── Unavailable                     unavailable          503 (after the retries)
        ├── ChainUnavailable            chain_unavailable    503
        ├── Unreachable                 unreachable          no connection to the server
        └── Timeout                     timeout              no connection or answer within the timeout

Every exception has `code`, `status` (the HTTP status; 0 where none came), `message` and `fields`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from graphsvc.errors import (
    ChainUnavailable,
    Conflict,
    Forbidden,
    GraphsvcError,
    InvalidInput,
    NotConfigured,
    NotFound,
    Unauthorized,
    Unavailable,
)


class MethodNotAllowed(GraphsvcError):
    code = "method_not_allowed"
    status = 405


class ServerError(GraphsvcError):
    code = "internal"
    status = 500


class Unreachable(Unavailable):
    code = "unreachable"
    status = 0


class Timeout(Unavailable):
    code = "timeout"
    status = 0

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent  # False: no connection was made in time (the request never left)


def unsent(error: GraphsvcError) -> bool:
    """Whether the request behind `error` surely never reached the server."""
    return isinstance(error, Unreachable) or (isinstance(error, Timeout) and not error.sent)


BY_CODE: dict[str, type[GraphsvcError]] = {
    cls.code: cls
    for cls in (
        InvalidInput,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        MethodNotAllowed,
        ServerError,
        NotConfigured,
        Unavailable,
        ChainUnavailable,
    )
}
BY_STATUS: dict[int, type[GraphsvcError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    422: InvalidInput,
    503: Unavailable,
}


class _Body(BaseModel):
    code: str
    message: str
    fields: list[str] = []


class _Envelope(BaseModel):
    """graphsvc's error answer (graphsvc.http.edge.ErrorResponse, read here without the server)."""

    error: _Body


def from_answer(status: int, body: Any) -> GraphsvcError:
    """The exception for an error answer: its envelope's code picks the class (else the status does),
    with the server's message and fields. An answer without graphsvc's envelope (a proxy's page) gets
    the status's class (ServerError for a status graphsvc does not answer), naming the status."""
    try:
        error = _Envelope.model_validate(body).error
    except ValidationError:
        cls = BY_STATUS.get(status, ServerError)
        return _with_status(cls(f"HTTP {status} without graphsvc's error envelope"), status)
    cls = BY_CODE.get(error.code, BY_STATUS.get(status, ServerError))
    return _with_status(cls(error.message, error.fields), status)


def _with_status(error: GraphsvcError, status: int) -> GraphsvcError:
    error.status = status  # the status that came, where a class serves several (503, 500)
    return error


__all__ = [
    "BY_CODE",
    "ChainUnavailable",
    "Conflict",
    "Forbidden",
    "GraphsvcError",
    "InvalidInput",
    "MethodNotAllowed",
    "NotConfigured",
    "NotFound",
    "ServerError",
    "Timeout",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "from_answer",
    "unsent",
]
