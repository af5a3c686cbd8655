"""The LocusGraph tool surface (seed 002) on graphsvc's own model: inputs with the seed's parameters,
defaults and aliases, and their outputs.

An event is a Memory; its contexts (`type:name`) are entities labelled Context; `reinforces`,
`extends`, `contradicts` and `related_to` become REINFORCES, EXTENDS, CONTRADICTS and RELATED_TO
edges from the memory to those contexts.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, Field

from graphsvc.domain.models import DEFAULT_GRAPH, Graph, _In, _Out

EventKind = Literal["fact", "action", "decision", "observation", "feedback"]
Source = Literal["agent", "user", "system", "validator", "executor"]
LINK_TYPES = {
    "reinforces": "REINFORCES",
    "extends": "EXTENDS",
    "contradicts": "CONTRADICTS",
    "related_to": "RELATED_TO",
}
_CONTEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:\S.{0,199}$")


def _check_context(value: str) -> str:
    if not _CONTEXT.match(value):
        raise ValueError("a context id is type:name (e.g. skill:react_hooks)")
    return value


ContextId = Annotated[str, AfterValidator(_check_context)]
ContextIds = Annotated[list[ContextId], Field(max_length=50)]


class StoreEventInput(_In):
    event_kind: EventKind = Field(validation_alias=AliasChoices("event_kind", "event_type", "eventType"))
    payload: dict[str, Any] | str | None = Field(
        default=None,
        validation_alias=AliasChoices("payload", "content"),
        description='Recommended shape: {"data": {"topic": "...", "value": "..."}}; any JSON is kept',
    )
    context_id: ContextId | None = Field(
        default=None, validation_alias=AliasChoices("context_id", "event_id")
    )
    source: Source = "agent"
    reinforces: ContextIds = Field(default_factory=list)
    extends: ContextIds = Field(default_factory=list)
    contradicts: ContextIds = Field(default_factory=list)
    related_to: ContextIds = Field(default_factory=list)
    timestamp: Annotated[str, Field(pattern=r"^\d{1,12}(\.\d+)?$")] | None = Field(
        default=None, description="Unix timestamp (seconds) as a string"
    )
    graph: Graph = DEFAULT_GRAPH


class StoreEventResult(_Out):
    event_id: str
    hash: str
    event_kind: str
    context_id: str | None
    contexts: list[str]
    links: list[dict[str, str]]


class RetrieveInput(_In):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: int = Field(default=10, ge=1, le=50)
    context_ids: ContextIds | None = None
    context_types: dict[str, list[str]] | None = Field(
        default=None, description="{type: [names]}; an empty list means every name of that type"
    )
    include_ids: bool = False
    graph: Graph = DEFAULT_GRAPH


class RetrievedMemory(_Out):
    text: str
    score: float
    event_kind: str | None
    source: str | None
    timestamp: str | None
    id: str | None = None
    context_ids: list[str] | None = None


class RetrieveResult(_Out):
    memories: list[RetrievedMemory]
    total: int


class ListContextsInput(_In):
    context_type: str | None = None
    context_name: str | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    page: int = Field(default=0, ge=0)
    graph: Graph = DEFAULT_GRAPH


class ContextInfo(_Out):
    context_id: str
    context_type: str
    context_name: str
    events: int


class ListContextsResult(_Out):
    contexts: list[ContextInfo]
    total: int
    page: int
    limit: int


class InsightsInput(_In):
    task: Annotated[str, Field(min_length=1, max_length=4000)]
    locus_query: Annotated[str, Field(max_length=4000)] | None = Field(
        default=None, validation_alias=AliasChoices("locus_query", "context_query")
    )
    limit: int = Field(default=10, ge=1, le=50)
    context_ids: ContextIds | None = None
    context_types: dict[str, list[str]] | None = None
    graph: Graph = DEFAULT_GRAPH


class Knowledge(_Out):
    id: str
    text: str
    event_kind: str | None
    timestamp: str | None
    score: float


class Contradiction(_Out):
    id: str
    text: str


class ContextInsight(_Out):
    context_id: str
    knowledge: list[Knowledge]
    reinforced: int = Field(description="REINFORCES edges into this context")
    contradicted_by: list[Contradiction]
    most_recent: Knowledge | None


class InsightsResult(_Out):
    task: str
    insights: list[ContextInsight]
    ungrouped: list[Knowledge]
