"""The MCP server: the seed's tools over one `MCPServer`, served over SSE and streamable HTTP.

Each tool publishes exactly the fields of its contract model (same names, bounds and defaults) and
returns the model as structured output and the seed's text rendering as content. A call checks the
caller first, then validates its arguments once, against the contract model, as REST does; any
GraphsvcError becomes a tool error reading `<code>: <message>` (`invalid_input: hops: ...`). Each call
is counted and timed by tool, transport and outcome, and logged with its HTTP request's id.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from graphsvc import logs
from graphsvc.domain import render
from graphsvc.domain.locus import (
    InsightsInput,
    InsightsResult,
    ListContextsInput,
    ListContextsResult,
    RetrieveInput,
    RetrieveResult,
    StoreEventInput,
    StoreEventResult,
)
from graphsvc.domain.models import (
    AnchorResult,
    ExploreInput,
    ExploreResult,
    ForgetResult,
    Graph,
    GraphInput,
    IdInput,
    LinkInput,
    LinkResult,
    RecallInput,
    RecallResult,
    RememberInput,
    RememberResult,
    VerifyResult,
)
from graphsvc.errors import GraphsvcError, invalid_input
from graphsvc.metrics import Metrics
from graphsvc.services.access import AccessService, Need
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService

INSTRUCTIONS = (
    "graphsvc is long-term memory. Store facts with `remember` (entities and typed relations make them "
    "findable by entity); get them back with `recall` (keywords and/or an entity, scored, with hop "
    "distance); walk raw structure with `explore`; connect entities with `link`; delete with `forget`. "
    "Every tool takes an optional `graph` (tenant), default 'default'."
)


class _Arguments(ArgModelBase):
    """Takes the arguments as they come: the tool checks the caller before it validates them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


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


def _request(ctx: Context) -> logs.RequestInfo:
    """The HTTP request that carried this call, as the edge recorded it."""
    scope: dict[str, Any] = getattr(ctx.request_context.request, "scope", None) or {}
    return logs.of_scope(scope) or logs.RequestInfo(uuid.uuid4().hex, "mcp")


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


def _tool(
    access: AccessService,
    metrics: Metrics,
    need: Need,
    name: str,
    description: str,
    input_model: type[BaseModel],
    output_model: type[BaseModel],
    call: Callable[[Any], Awaitable[Any]],
    text: Callable[[Any, Any], str],
    annotations: ToolAnnotations,
) -> Tool:
    """A tool publishing `input_model`'s schema; a call authenticates, validates, then scopes the graph."""
    contract, structured = TypeAdapter(input_model), _structured_fields(input_model)

    async def run(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
        headers = ctx.headers or {}
        http, started, code = _request(ctx), time.perf_counter(), "internal"
        with logs.bound(http):
            try:
                principal = await access.authenticate(headers.get("authorization"))
                header_graph = _validated(_HEADER_GRAPH, headers.get("x-graph-id"), "x-graph-id")
                request = access.scoped(
                    principal, header_graph, _validated(contract, _unquoted(arguments, structured)), need
                )
                result = await call(request)
                code = "ok"
            except GraphsvcError as e:
                code = e.code
                raise ToolError(f"{e.code}: {e.message}") from e
            finally:
                _observed(metrics, name, http, code, started)
        return CallToolResult(
            content=[TextContent(type="text", text=text(result, request))],
            structured_content=result.model_dump(mode="json", by_alias=True),
        )

    return Tool(
        fn=run,
        name=name,
        title=None,
        description=description,
        parameters=_input_schema(input_model),
        fn_metadata=FuncMetadata(arg_model=_Arguments, output_model=output_model),
        is_async=True,
        context_kwarg="ctx",
        annotations=annotations,
    )


def _writes(*, destructive: bool, idempotent: bool, chain: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=chain
    )


# What each tool does to the graph (MCP annotations; tests/test_tool_metadata.py holds each to it).
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# A new memory per call, but the same content again within RETRY_WINDOW_S is a retry (its receipt).
ADDS = _writes(destructive=False, idempotent=True)


def create_mcp_server(
    memory: MemoryService,
    anchoring: AnchoringService,
    locus: LocusService,
    access: AccessService,
    *,
    metrics: Metrics | None = None,
    version: str = "",
) -> MCPServer:
    tool = partial(_tool, access, metrics or Metrics())
    tools = [
        tool(
            "write",
            "remember",
            "Store a new memory with optional entities (label, name), relations between them "
            "(from, type UPPER_SNAKE_CASE, to: names in entities or already in the graph) and tags.",
            RememberInput,
            RememberResult,
            memory.remember,
            lambda result, request: render.remember_text(result, request.text),
            ADDS,
        ),
        tool(
            "read",
            "recall",
            "Search long-term memory by keywords and/or entity name. hops 0-3 (default 1) widens to "
            "memories linked through entities; limit 1-50 (default 10). Memories come scored with their "
            "hop distance, plus the context graph (capped at 300 nodes: contextTruncated).",
            RecallInput,
            RecallResult,
            memory.recall,
            lambda result, _: render.recall_text(result),
            READ,
        ),
        tool(
            "write",
            "link",
            "Create a typed relationship (UPPER_SNAKE_CASE) between two entities, creating them if missing; "
            "linking the same pair with the same type again updates its props.",
            LinkInput,
            LinkResult,
            memory.link,
            lambda result, _: render.link_text(result),
            _writes(destructive=True, idempotent=True),  # linking again overwrites the props
        ),
        tool(
            "read",
            "explore",
            "Breadth-first traversal from one or more node ids (memory ids or Label:name entity ids): "
            "maxDepth 0-3 (default 2), direction out|in|both, edge types filter, limit 1-300 nodes.",
            ExploreInput,
            ExploreResult,
            memory.explore,
            lambda result, _: render.explore_text(result),
            READ,
        ),
        tool(
            "write",
            "forget",
            "Delete a memory and all its edges. Entities still mentioned elsewhere stay. "
            "An on-chain anchor is not revoked.",
            IdInput,
            ForgetResult,
            memory.forget,
            lambda result, _: render.forget_text(result),
            _writes(destructive=True, idempotent=True),  # forgetting again changes nothing
        ),
        tool(
            "write",
            "anchor_now",
            "Anchor all pending (un-anchored) memories of the graph on-chain as one Merkle batch. "
            "Requires MONAD_RPC_URL and ANCHOR_CONTRACT; without them it answers status not_configured.",
            GraphInput,
            AnchorResult,
            anchoring.anchor_now,
            lambda result, _: render.anchor_text(result),
            _writes(destructive=False, idempotent=True, chain=True),  # again: nothing pending
        ),
        tool(
            "read",
            "verify_memory",
            "Verify a memory's hash and Merkle proof against the root recorded on-chain (at the finalized "
            "block): hashValid, anchored, proofValid, onChain, with the problem when one fails.",
            IdInput,
            VerifyResult,
            anchoring.verify,
            lambda result, _: render.verify_text(result),
            ToolAnnotations(read_only_hint=True, open_world_hint=True),
        ),
        # The LocusGraph surface (advanced aliases of the tools above, for agents built for it).
        tool(
            "write",
            "store_event",
            "LocusGraph: store an event (fact|action|decision|observation|feedback) as a memory in its "
            "context (type:name), linked to the contexts it reinforces, extends, contradicts or relates to. "
            "Aliases: event_type/eventType, content, event_id.",
            StoreEventInput,
            StoreEventResult,
            locus.store_event,
            lambda result, _: render.store_event_text(result),
            ADDS,
        ),
        tool(
            "read",
            "retrieve_memories",
            "LocusGraph: ranked memories for a query (the recall engine), filtered by context_ids or "
            "context_types ({type: [names]}, [] for every name); include_ids adds memory and context ids.",
            RetrieveInput,
            RetrieveResult,
            locus.retrieve,
            lambda result, _: render.retrieve_text(result),
            READ,
        ),
        tool(
            "read",
            "list_contexts",
            "LocusGraph: contexts (type:name) with their event counts, filtered by type and name, "
            "paged (limit, default 100; page, default 0) in a stable order, with the total.",
            ListContextsInput,
            ListContextsResult,
            locus.list_contexts,
            lambda result, _: render.list_contexts_text(result),
            READ,
        ),
        tool(
            "write",
            "generate_insights",
            "LocusGraph: for a task, the most relevant knowledge grouped by context, with how often each "
            "context is reinforced, what contradicts it, and its latest event (no LLM; deterministic). "
            "Alias: context_query for locus_query.",
            InsightsInput,
            InsightsResult,
            locus.insights,
            lambda result, _: render.insights_text(result),
            READ,
        ),
    ]
    return MCPServer("graphsvc", version=version, instructions=INSTRUCTIONS, tools=tools, log_level="WARNING")


def transport_security(extra_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection that also accepts the configured hosts (a compose service name...)."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *extra_hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )
