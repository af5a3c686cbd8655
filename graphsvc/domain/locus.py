"""The LocusGraph tool surface (seed 002) on graphsvc's own model: inputs with the seed's parameters,
defaults and aliases, and their outputs.

An event is a Memory; its contexts (`type:name`) are entities labelled Context; `reinforces`,
`extends`, `contradicts` and `related_to` become REINFORCES, EXTENDS, CONTRADICTS and RELATED_TO
edges from the memory to those contexts.
"""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, AliasChoices, Field, WithJsonSchema

from graphsvc.domain.models import (
    CONTROL,
    CONTROL_CHARS,
    DEFAULT_GRAPH,
    NOT_BLANK,
    SPACES,
    ContractInput,
    ContractOutput,
    Graph,
    Query,
    Readiness,
    ScoreParts,
    Signal,
    has_words,
)
from graphsvc.domain.models.remember import LINKS, MEANING
from graphsvc.domain.spans import Occurred

EventKind = Literal["fact", "action", "decision", "observation", "feedback"]
Source = Literal["agent", "user", "system", "validator", "executor"]
LINK_TYPES = {
    "reinforces": "REINFORCES",
    "extends": "EXTENDS",
    "contradicts": "CONTRADICTS",
    "related_to": "RELATED_TO",
}
# A context is a Context entity named `type:name`, so the whole id is an entity name (<= 200).
CONTEXT = rf"^[A-Za-z0-9][A-Za-z0-9_.-]{{0,63}}:[^{SPACES}\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
_CONTEXT = re.compile(CONTEXT)
CONTEXT_MAX = 200
# Each context becomes a tag of the event's memory (32 at most): 4 lists of 7 and context_id make 29.
LINKS_MAX = 7


def occurred_at(timestamp: str | None) -> str | None:
    """An event's unix seconds as the occurredAt instant (`YYYY-MM-DDTHH:MM:SS.mmmZ`)."""
    if timestamp is None:
        return None
    return Occurred.at(datetime.fromtimestamp(float(timestamp), UTC)).text


def _check_context(value: str) -> str:
    value = unicodedata.normalize("NFC", value)
    if not _CONTEXT.fullmatch(value) or len(value) > CONTEXT_MAX:
        raise ValueError("a context id is type:name (e.g. skill:react_hooks), at most 200 characters")
    return value


ContextId = Annotated[
    str,
    Field(min_length=3, max_length=CONTEXT_MAX, json_schema_extra={"pattern": CONTEXT}),
    AfterValidator(_check_context),
]
ContextIds = Annotated[list[ContextId], Field(max_length=LINKS_MAX)]
TEXT_MAX = 4000
# The caller's own text in a payload (a string payload, or the recommended topic and value) is
# memory text: no control characters. A string payload may be empty (the event then has none).
NO_CONTROL = rf"^[^{CONTROL_CHARS}]*$"
PAYLOAD_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "maxLength": TEXT_MAX, "pattern": NO_CONTROL},
        {
            "type": "object",
            "properties": {
                "data": {"properties": {"topic": {"pattern": NO_CONTROL}, "value": {"pattern": NO_CONTROL}}}
            },
        },
        {"type": "null"},
    ]
}


def _topic_value(payload: Any) -> tuple[Any, Any] | None:
    data: Any = cast(dict[str, Any], payload).get("data") if isinstance(payload, dict) else None
    if isinstance(data, dict) and {"topic", "value"} <= data.keys():
        fields = cast(dict[str, Any], data)
        return fields["topic"], fields["value"]
    return None


def _check_payload(payload: Any) -> Any:
    if payload is not None and not isinstance(payload, dict | str):
        raise ValueError("a payload is a JSON object or a string")
    if isinstance(payload, str) and len(payload) > TEXT_MAX:
        raise ValueError(f"a string payload has at most {TEXT_MAX} characters")
    texts: list[Any] = [payload] if isinstance(payload, str) else list(_topic_value(payload) or ())
    if any(isinstance(text, str) and CONTROL.search(text) for text in texts):
        raise ValueError("the payload's text (a string, or data.topic and data.value) has control characters")
    return cast(Any, payload)


def _printable(text: str) -> str:
    """`text` NFC-normalised with control characters written as \\uXXXX escapes, cut to TEXT_MAX."""
    text = CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", unicodedata.normalize("NFC", text))
    return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"


class StoreEventInput(ContractInput):
    event_kind: EventKind = Field(validation_alias=AliasChoices("event_kind", "event_type", "eventType"))
    payload: Annotated[Any, AfterValidator(_check_payload), WithJsonSchema(PAYLOAD_SCHEMA)] = Field(
        default=None,
        validation_alias=AliasChoices("payload", "content"),
        description='Recommended shape: {"data": {"topic": "...", "value": "..."}}; any JSON object or '
        "string is kept",
    )
    context_id: ContextId | None = Field(
        default=None, validation_alias=AliasChoices("context_id", "event_id")
    )
    source: Source = "agent"
    reinforces: ContextIds = Field(default_factory=list)
    extends: ContextIds = Field(default_factory=list)
    contradicts: ContextIds = Field(default_factory=list)
    related_to: ContextIds = Field(default_factory=list)
    timestamp: Annotated[str, Field(pattern=r"^\d{1,11}(\.\d+)?$")] | None = Field(
        default=None,
        description="Unix timestamp (seconds) as a string; the memory's occurredAt (up to 11 digits)",
    )
    graph: Graph = DEFAULT_GRAPH

    def text(self) -> str:
        """The event's memory text: `topic: value` for the recommended payload, else the payload (its
        JSON for an object), else `<kind> on <context>`; at most 4,000 characters and control
        characters escaped (JSON's may hold them), so that every valid event makes a valid memory."""
        payload, topic_value = self.payload, _topic_value(self.payload)
        if topic_value is not None:
            text = f"{topic_value[0]}: {topic_value[1]}"
        elif isinstance(payload, str):
            text = payload
        elif payload:
            text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        else:
            text = ""
        text = _printable(text)
        if has_words(text):
            return text
        return f"{self.event_kind} on {self.context_id}" if self.context_id else self.event_kind


class StoreEventResult(ContractOutput):
    event_id: str
    hash: str
    event_kind: str
    context_id: str | None
    contexts: list[str]
    links: list[dict[str, str]]
    # As remember says them (its `meaning` and `links`); a result built without them keeps the seed's shape.
    meaning: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=MEANING)
    extracted: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=LINKS)


class RetrieveInput(ContractInput):
    query: Query
    limit: int = Field(default=10, ge=1, le=50)
    context_ids: ContextIds | None = None
    context_types: dict[str, list[str]] | None = Field(
        default=None, description="{type: [names]}; an empty list means every name of that type"
    )
    include_ids: bool = False
    graph: Graph = DEFAULT_GRAPH


class RetrievedMemory(ContractOutput):
    text: str
    score: float
    event_kind: str | None
    source: str | None
    timestamp: str | None
    id: str | None = None
    context_ids: list[str] | None = None
    why: ScoreParts | None = Field(default=None, description="The score's parts, as recall gives them")
    found_by: list[Signal] = Field(
        default_factory=list[Signal], description="The signals that found it, as recall's foundBy"
    )


class RetrieveResult(ContractOutput):
    memories: list[RetrievedMemory]
    total: int


class ListContextsInput(ContractInput):
    context_type: Annotated[str, Field(max_length=64)] | None = None
    context_name: Annotated[str, Field(max_length=CONTEXT_MAX)] | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    page: int = Field(default=0, ge=0, le=1_000_000)
    graph: Graph = DEFAULT_GRAPH


class ContextInfo(ContractOutput):
    context_id: str
    context_type: str
    context_name: str
    events: int


class ListContextsResult(ContractOutput):
    contexts: list[ContextInfo]
    total: int
    page: int
    limit: int


def _empty_or_words(value: str) -> str:
    if value and not has_words(value):
        raise ValueError("must not be blank (leave it empty to search by the task)")
    return value


class InsightsInput(ContractInput):
    task: Query
    # An empty locus_query means the task; otherwise it needs a word.
    locus_query: (
        Annotated[
            str,
            Field(max_length=4000, json_schema_extra={"pattern": f"^$|{NOT_BLANK}"}),
            AfterValidator(_empty_or_words),
        ]
        | None
    ) = Field(default=None, validation_alias=AliasChoices("locus_query", "context_query"))
    limit: int = Field(default=10, ge=1, le=50)
    context_ids: ContextIds | None = None
    context_types: dict[str, list[str]] | None = None
    graph: Graph = DEFAULT_GRAPH


class Knowledge(ContractOutput):
    id: str
    text: str
    event_kind: str | None
    timestamp: str | None
    score: float


class Contradiction(ContractOutput):
    id: str
    text: str


class ContextInsight(ContractOutput):
    context_id: str
    knowledge: list[Knowledge]
    reinforced: int = Field(description="REINFORCES edges into this context")
    contradicted_by: list[Contradiction]
    most_recent: Knowledge | None


class InsightsResult(ContractOutput):
    task: str
    insights: list[ContextInsight]
    ungrouped: list[Knowledge]
