"""The MCP server: every operation of `services.operations` that has a tool, on the SDK's low-level
`Server`, served over SSE and streamable HTTP.

Each tool publishes exactly the fields of its contract model (same names, bounds and defaults) and
returns the model as structured output and the seed's text rendering as content. A call takes the
caller the HTTP edge authenticated (`graphsvc.http.scope`), then validates its arguments once, against
the contract model, as REST does; any GraphsvcError becomes a tool error reading
`Error executing tool <name>: <code>: <message>`. Each call is counted and timed by tool, transport
and outcome, and logged with its HTTP request's id.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.sse import SseServerTransport
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from graphsvc import logs
from graphsvc.domain.models import Graph
from graphsvc.errors import GraphsvcError, invalid_input
from graphsvc.http import scope as caller
from graphsvc.metrics import Metrics
from graphsvc.services import deadline, provenance
from graphsvc.services.access import AccessService, Principal
from graphsvc.services.operations import TOOLS, Backends, Hints, Operation

INSTRUCTIONS = (
    "graphsvc is long-term memory. Store facts with `remember` (entities and typed relations make them "
    "findable by entity); get them back with `recall` (a question in your own words or keywords, "
    "and/or an entity: found by words, meaning and time, scored, with hop distance); walk raw structure "
    "with `explore`; connect entities with `link`; delete with `forget`. "
    "Every tool takes an optional `graph` (tenant), default 'default'."
)
log = logging.getLogger("graphsvc")

_HEADER_GRAPH: TypeAdapter[str | None] = TypeAdapter(Graph | None)  # type: ignore[arg-type]


def _validated(adapter: TypeAdapter[Any], value: Any, field: str = "") -> Any:
    """`value` validated once, or the InvalidInput REST would answer for it."""
    try:
        return adapter.validate_python(value)
    except ValidationError as e:
        prefix = (field,) if field else ()
        raise invalid_input([{**err, "loc": (*prefix, *err["loc"])} for err in e.errors()]) from None


def _types(schema: dict[str, Any]) -> set[str]:
    if "$ref" in schema:
        return {"object"}
    if "anyOf" in schema:
        return set[str]().union(*(_types(option) for option in schema["anyOf"]))
    return {schema["type"]} if "type" in schema else {"string"}  # untyped: anything, strings too


def _structured_fields(input_model: type[BaseModel]) -> set[str]:
    """The arguments that take lists or objects, never a string."""
    properties = input_model.model_json_schema(by_alias=True)["properties"]
    return {name for name, schema in properties.items() if "string" not in _types(schema)}


def _unquoted(arguments: dict[str, Any], structured: set[str]) -> dict[str, Any]:
    """Lists and objects some clients send as JSON text, parsed (as the SDK's own tools do)."""
    parsed = dict(arguments)
    for key, value in arguments.items():
        if key in structured and isinstance(value, str):
            try:
                decoded = json.loads(value)
            except (ValueError, RecursionError):
                continue
            if isinstance(decoded, list | dict):
                parsed[key] = decoded
    return parsed


# Model APIs refuse a tool schema combining alternatives at its top (recall's "a query or an
# entity"): that rule stays in the description and in validation, published only in OpenAPI.
_TOP_LEVEL_COMBINATORS = ("anyOf", "oneOf", "allOf")


def _input_schema(input_model: type[BaseModel]) -> dict[str, Any]:
    """The contract model's schema; `graph` defaults to the caller's token's graph, not 'default'."""
    schema = input_model.model_json_schema(by_alias=True)
    for combinator in _TOP_LEVEL_COMBINATORS:
        schema.pop(combinator, None)
    graph = schema["properties"]["graph"]
    graph.pop("default", None)
    graph["description"] = "Tenant graph: the token's (naming another is refused), else 'default'"
    return schema


def _annotations(hints: Hints) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=hints.read_only,
        destructive_hint=hints.destructive,
        idempotent_hint=hints.idempotent,
        open_world_hint=hints.open_world,
    )


@dataclass(frozen=True)
class _Published:
    """An operation as a tool: what `tools/list` shows of it and how a call's arguments are read."""

    operation: Operation
    tool: Tool
    contract: TypeAdapter[Any]
    structured: set[str]

    @classmethod
    def of(cls, operation: Operation) -> _Published:
        assert operation.tool is not None
        tool = Tool(
            name=operation.name,
            description=operation.tool.description,
            input_schema=_input_schema(operation.input),
            output_schema=operation.output.model_json_schema(by_alias=True),
            annotations=_annotations(operation.tool.hints),
        )
        return cls(operation, tool, TypeAdapter(operation.input), _structured_fields(operation.input))

    def arguments(self, arguments: dict[str, Any]) -> Any:
        return _validated(self.contract, _unquoted(arguments, self.structured))


def _scope(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, Any]:
    """The ASGI scope of the HTTP request that carried this call (empty off HTTP)."""
    return getattr(ctx.request, "scope", None) or {}


def _client(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The client's `name/version` as it declared it (initialize, or the request's envelope), if it did."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return provenance.client_name(info.name, info.version) if info is not None else None


def _headers(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, str]:
    return getattr(ctx.request, "headers", None) or {}


def _request(scope: Mapping[str, Any], transport: str) -> logs.RequestInfo:
    """The HTTP request that carried this call, as the edge recorded it; off HTTP, a new one."""
    return logs.of_scope(dict(scope)) or logs.RequestInfo(uuid.uuid4().hex, transport)


def _observed(metrics: Metrics, tool: str, request: logs.RequestInfo, code: str, started: float) -> None:
    seconds = time.perf_counter() - started
    metrics.tool_call(tool, request.transport, code, seconds)
    if code != "ok":
        metrics.error(code, request.transport)
    request.tool = tool  # for the request's own line, when the call ends within it (streamable HTTP)
    fields = {"tool": tool, "transport": request.transport, "code": code}
    logs.ACCESS.info(
        "tool %s: %s", tool, code, extra={"fields": fields | {"duration_ms": round(seconds * 1000, 1)}}
    )


def failed(text: str) -> CallToolResult:
    """A tool error the model can read."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@dataclass(frozen=True)
class OffHttp:
    """Calls that no HTTP request carries (stdio): their transport's name in logs and metrics, and the
    `Authorization` they present, checked at every call as a header is (None: no token)."""

    transport: str = "mcp"
    authorization: str | None = None

    def headers(self) -> Mapping[str, str]:
        return {"authorization": self.authorization} if self.authorization else {}


class _Tools:
    """The `tools/list` and `tools/call` handlers over the table's tools."""

    def __init__(
        self,
        backends: Backends,
        access: AccessService,
        metrics: Metrics,
        off_http: OffHttp,
        deadline_s: float,
    ) -> None:
        self.backends = backends
        self.access = access
        self.metrics = metrics
        self.off_http = off_http
        self.deadline_s = deadline_s
        self.published = {op.name: _Published.of(op) for op in TOOLS}
        self.listed = ListToolsResult(tools=[p.tool for p in self.published.values()])

    def input_schema(self, name: str) -> dict[str, Any] | None:
        published = self.published.get(name)
        return None if published is None else published.tool.input_schema

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self.listed

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        published = self.published.get(params.name)
        if published is None:
            return failed(f"Unknown tool: {params.name}")
        scope = _scope(ctx)
        http, started, code = _request(scope, self.off_http.transport), time.perf_counter(), "internal"
        headers = _headers(ctx) if scope else self.off_http.headers()
        with logs.bound(http):
            try:
                result = await self._run(published, scope, headers, params.arguments or {}, _client(ctx))
                code = "ok"
                return result
            except GraphsvcError as e:
                code = e.code
                return failed(f"Error executing tool {params.name}: {e.code}: {e.message}")
            except Exception:
                log.exception("tool %r raised an unexpected exception", params.name)
                return failed(f"Error executing tool {params.name}")
            finally:
                _observed(self.metrics, params.name, http, code, started)

    async def _run(
        self,
        published: _Published,
        scope: Mapping[str, Any],
        headers: Mapping[str, str],
        arguments: dict[str, Any],
        client: str | None,
    ) -> CallToolResult:
        """Who calls first, then the arguments, then the graph: the order REST checks them in; all of it
        within one deadline, counted from the request's arrival at the edge (off HTTP: from now)."""
        operation = published.operation
        arrived = caller.arrived(scope) or deadline.now()
        principal = await self._principal(scope, headers)
        header_graph = _validated(_HEADER_GRAPH, headers.get("x-graph-id"), "x-graph-id")
        request = self.access.scoped(principal, header_graph, published.arguments(arguments), operation.need)
        writer = provenance.Writer(principal.token_id if principal else None, client)
        with provenance.writing_as(writer):
            result = await operation.run(self.backends, request, self.deadline_s, arrived)
        assert operation.tool is not None
        return CallToolResult(
            content=[TextContent(type="text", text=operation.tool.text(result, request))],
            structured_content=result.model_dump(mode="json", by_alias=True),
        )

    async def _principal(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> Principal | None:
        """The caller the edge authenticated; else none was presented (or the call came off HTTP), and
        `authenticate` answers without a lookup unless a header came in without the edge."""
        if caller.checked(scope):
            return caller.principal(scope)
        return await self.access.authenticate(headers.get("authorization"))


# An MCPServer advertised (empty) resources and prompts; listing them still answers, as before.
async def _no_resources(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListResourcesResult:
    return ListResourcesResult(resources=[])


async def _no_templates(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListResourceTemplatesResult:
    return ListResourceTemplatesResult(resource_templates=[])


async def _no_prompts(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListPromptsResult:
    return ListPromptsResult(prompts=[])


def create_mcp_server(
    backends: Backends,
    access: AccessService,
    *,
    metrics: Metrics | None = None,
    version: str = "",
    off_http: OffHttp | None = None,
    deadline_s: float = 10,
) -> Server[Any]:
    """The tools of the operations table on the SDK's low-level Server, for any transport: over HTTP a
    call's caller is the one the edge authenticated; off HTTP (stdio), `off_http` says who calls. A
    call answers within `deadline_s` of its request's arrival (anchor_now: its own bounds)."""
    tools = _Tools(backends, access, metrics or Metrics(), off_http or OffHttp(), deadline_s)
    return Server(
        "graphsvc",
        version=version,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=tools.input_schema,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=_no_resources,
        on_list_resource_templates=_no_templates,
        on_list_prompts=_no_prompts,
    )


def sse_routes(server: Server[Any], security: TransportSecuritySettings) -> list[Route | Mount]:
    """MCP over SSE: the event stream at /sse, the client's messages posted to /messages/."""
    transport = SseServerTransport("/messages/", security_settings=security)

    async def stream(scope: Scope, receive: Receive, send: Send) -> None:
        async with transport.connect_sse(scope, receive, send) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    return [
        Route("/sse", endpoint=_Asgi(stream), methods=["GET"]),
        Mount("/messages/", app=transport.handle_post_message),
    ]


@dataclass(frozen=True)
class _Asgi:
    """An ASGI callable Starlette's `Route` serves as it is (a plain function it would take for a
    request handler)."""

    app: Any

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def transport_security(extra_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection that also accepts the configured hosts (a compose service name...)."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *extra_hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )
