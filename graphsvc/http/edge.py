"""The HTTP edge of REST and the MCP transports: who calls (before any body is read), and one error
envelope for every failure, body parsing included.

    {"error": {"code": "invalid_input", "message": "hops: Input should be ...", "fields": ["hops"]}}

Every error is answered, never raised to the server: an exception that escapes the app makes the
server close the keep-alive connection.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from graphsvc import logs
from graphsvc.errors import GraphsvcError, InvalidInput, Unavailable, invalid_input
from graphsvc.http import scope as caller
from graphsvc.services import provenance
from graphsvc.services.access import AccessService

log = logging.getLogger("graphsvc")
REST = "/v1/"
GUARDED = (REST, "/mcp", "/sse", "/messages/")
RETRY_AFTER_S = 5
# Statuses Starlette answers itself (an unknown path, a method a path does not take).
HTTP_CODES = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}


class ErrorBody(BaseModel):
    code: str
    message: str
    fields: list[str] = []


class ErrorResponse(BaseModel):
    error: ErrorBody


def envelope(
    status: int,
    code: str,
    message: str,
    fields: list[str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = ErrorResponse(error=ErrorBody(code=code, message=message, fields=fields or []))
    if (request := logs.current()) is not None:  # counted and logged by http.observe
        request.code = code
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def error_response(e: GraphsvcError, challenge: str = "Bearer") -> JSONResponse:
    headers = {"WWW-Authenticate": challenge} if e.status == 401 else {}
    if isinstance(e, Unavailable):  # a dependency is away: worth trying again shortly
        headers["Retry-After"] = str(RETRY_AFTER_S)
    return envelope(e.status, e.code, e.message, e.fields, headers or None)


class Authenticate:
    """Checks the bearer token of every guarded request before the app reads its body.

    Where auth is required, a request without a valid token (none, malformed, unknown, expired,
    revoked) is answered 401 with `WWW-Authenticate: Bearer`, on REST and on the MCP transports alike,
    so that clients' sign-in or header prompts start; `tools/list` is open only while auth is off. The
    caller found is kept in the scope (`graphsvc.http.scope`) for REST and MCP to read, with the
    request's arrival, from which its one deadline counts.
    """

    def __init__(self, app: ASGIApp, access: AccessService) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(GUARDED):
            return await self.app(scope, receive, send)
        caller.arrive(scope)  # before the look-up: the request's one deadline counts from here
        authorization = Headers(scope=scope).get("authorization")
        try:
            caller.keep(scope, await self.access.authenticate(authorization))
        except GraphsvcError as e:
            challenge = 'Bearer error="invalid_token"' if authorization else "Bearer"
            return await error_response(e, challenge)(scope, receive, send)
        found = caller.principal(scope)
        # REST records the token only: a User-Agent names an HTTP library more often than the agent.
        # MCP binds its own writer (with the client) where it runs the tool.
        with provenance.writing_as(provenance.Writer(token=found.token_id if found else None)):
            await self.app(scope, receive, send)


class CatchAll:
    """An unexpected exception becomes a logged 500 envelope on a connection that stays open."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            if started:
                raise
            log.exception("unexpected error answering %s %s", scope["method"], scope["path"])
            response = envelope(500, "internal", "an unexpected error occurred; it is logged")
            await response(scope, receive, send)


def _invalid(e: RequestValidationError) -> InvalidInput:
    errors = e.errors()
    unparsed = next((err for err in errors if err["type"] == "json_invalid"), None)
    if unparsed is not None:  # its location is a byte offset, not a field
        return InvalidInput(
            f"the body is not valid JSON ({unparsed.get('ctx', {}).get('error', 'malformed')})"
        )
    return invalid_input(errors, skip=1)  # drop "body", "path", "query" or "header"


def install(app: FastAPI) -> None:
    """Map the error tree, validation errors and Starlette's own statuses onto the envelope."""

    @app.exception_handler(GraphsvcError)
    async def _graphsvc_error(_: Request, e: GraphsvcError) -> JSONResponse:
        return error_response(e)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, e: RequestValidationError) -> JSONResponse:
        return error_response(_invalid(e))

    @app.exception_handler(HTTPException)
    async def _http_error(_: Request, e: HTTPException) -> JSONResponse:
        if e.status_code == 400:  # FastAPI could not parse the body: not UTF-8, or nested too deep
            return error_response(InvalidInput("the body is not valid JSON (UTF-8, not nested too deeply)"))
        return envelope(
            e.status_code, HTTP_CODES.get(e.status_code, "error"), str(e.detail), headers=e.headers
        )
