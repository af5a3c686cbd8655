"""What each HTTP request did: an id (echoed in X-Request-Id), metrics, one log line.

Labels and log fields name the route template a request is for (`/v1/memories/{memory_id}`), never
its path, and a method outside the standard ones as `other`: both are the caller's to choose.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import BaseRoute, Mount, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphsvc import logs
from graphsvc.http.edge import REST
from graphsvc.metrics import Metrics

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # the route of a path no route takes


def transport(path: str) -> str:
    if path.startswith("/mcp"):
        return "mcp-http"
    return "mcp-sse" if path.startswith(("/sse", "/messages/")) else "rest"


@dataclass(frozen=True)
class _Template:
    regex: re.Pattern[str]
    path: str  # e.g. /v1/memories/{memory_id}; a mount's /browser/{path}
    methods: frozenset[str] | None  # None: any
    operation: str | None  # the operation id of a REST operation (under /v1)


class Routes:
    """The route template and REST operation a request is for, whether or not the router saw it (a
    401 is answered before routing), never its path (the caller's), from the app's routes in order."""

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self._routes = routes
        self._table: list[_Template] | None = None  # built at the first request, once all are added

    def __call__(self, method: str, path: str) -> tuple[str, str | None]:
        self._table = self._table or [_template(context) for context in iter_route_contexts(self._routes)]
        found = [t for t in self._table if t.regex.fullmatch(path)]
        if not found:
            return UNMATCHED, None
        taken = next((t for t in found if t.methods is None or method in t.methods), None)
        return (taken.path, taken.operation) if taken else (found[0].path, None)  # else: a 405


def _template(context: RouteContext) -> _Template:
    route = context.original_route
    if isinstance(route, Mount):
        return _Template(route.path_regex, route.path_format, None, None)
    path = context.path or ""
    regex, template, _ = compile_path(path)
    methods = getattr(route, "methods", None)
    operation = route.operation_id if isinstance(route, APIRoute) and path.startswith(REST) else None
    return _Template(regex, template, frozenset(methods) if methods else None, operation)


class Observe:
    """Outermost: gives each request an id (the caller's X-Request-Id if well-formed, else a new one,
    echoed in the answer's X-Request-Id), then counts and times it and logs one line: method, route
    template, status, duration, request id, and the tool (a /v1 operation's id; an MCP tool that
    finished within the request) or the error code."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = Routes(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request_id = logs.request_id(Headers(scope=scope).get("x-request-id"))
        info = logs.RequestInfo(request_id, transport(scope["path"]))
        scope.setdefault("state", {})[logs.SCOPE_KEY] = info
        status = 500  # unless a response starts

        async def identified(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Request-Id", request_id)
            await send(message)

        started = time.perf_counter()
        with logs.bound(info):
            try:
                await self.app(scope, receive, identified)
            finally:
                self._record(scope, info, status, time.perf_counter() - started)

    def _record(self, scope: Scope, info: logs.RequestInfo, status: int, seconds: float) -> None:
        method = scope["method"] if scope["method"] in METHODS else "other"
        route, operation = self.routes(method, scope["path"])
        self.metrics.http_request(method, route, status, seconds)
        if info.code is not None:
            self.metrics.error(info.code, info.transport)
        if operation is not None:
            info.tool = operation
            self.metrics.tool_call(operation, "rest", info.code or "ok", seconds)
        fields = {"method": method, "route": route, "status": status, "duration_ms": round(seconds * 1000, 1)}
        fields |= {key: value for key, value in (("tool", info.tool), ("code", info.code)) if value}
        logs.ACCESS.info("%s %s %d", method, route, status, extra={"fields": fields})
