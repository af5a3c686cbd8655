"""The typed contract: every tool's input and output, shared by MCP, REST and the CLI.

Field names, bounds and defaults follow the seed tool reference; output models serialise (by alias)
to exactly the seed's JSON shapes.

Longer than the few hundred lines a module keeps to: the contract is read as one page (the models
reference each other's field types and shared validators), and every line is a field, its bound and
its description. The LocusGraph surface is apart (domain/locus.py), as is the export (domain/export.py).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast

import rfc8785
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SkipValidation,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict

from graphsvc.domain.spans import MAX_YEAR, MIN_YEAR, Occurred, Span, parse_occurred

DEFAULT_GRAPH = "default"
CONTEXT_NODE_CAP = 300
RESERVED_LABELS = frozenset({"Memory", "Entity", "Batch", "Tombstone", "Pending", "AnchorState", "ApiToken"})
RESERVED_TYPES = frozenset({"MENTIONS", "IN_BATCH", "SUPERSEDES"})
# A relation's own properties, which `link` props cannot set: its id, its graph, and who made it
# (`source` agent or extracted, the `writerToken`, the `extractor`).
RESERVED_PROPS = frozenset({"id", "graph", "source", "writerToken", "extractor"})
INT64 = (-(2**63), 2**63 - 1)  # what a Neo4j property holds
MAX_JSON_DEPTH = 64
# Each pattern is checked here and published in the JSON schemas (MCP tools/list, OpenAPI), so a
# client that keeps to the schema is never refused.
CONTROL_CHARS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
# Whitespace to Python (str.isspace) and to JSON Schema's regexes alike, spelled out: `\s` differs.
SPACES = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
CLEAN_TEXT = rf"^[^{CONTROL_CHARS}]*[^{SPACES}{CONTROL_CHARS}][^{CONTROL_CHARS}]*$"
NOT_BLANK = rf"[^{SPACES}]"
LABEL = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
REL_TYPE = r"^[A-Z][A-Z0-9_]{0,63}$"
PROP_KEY = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
MEMORY_ID = r"^mem_[A-Za-z0-9]{1,64}$"
_LABEL = re.compile(LABEL)
_REL_TYPE = re.compile(REL_TYPE)
_PROP_KEY = re.compile(PROP_KEY)
CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_WORDY = re.compile(NOT_BLANK)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _nfc(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def _clean_text(value: str) -> str:
    value = _nfc(value)
    if not has_words(value):
        raise ValueError("must not be blank")
    if CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def has_words(value: str) -> bool:
    """Whether `value` holds more than whitespace (as NOT_BLANK, the published pattern, says)."""
    return _WORDY.search(value) is not None


def _not_blank(value: str) -> str:
    if not has_words(value):
        raise ValueError("must not be blank")
    return value


def check_label(value: str) -> str:
    if not _LABEL.fullmatch(value):
        raise ValueError("a label is a letter then up to 63 letters, digits or '_' (e.g. Person, Token)")
    if value in RESERVED_LABELS:
        raise ValueError(f"label {value!r} is reserved")
    return value


def check_rel_type(value: str, *, allow_reserved: bool = False) -> str:
    if not _REL_TYPE.fullmatch(value):
        raise ValueError("a relation type is UPPER_SNAKE_CASE (e.g. TRADES_ON)")
    if value in RESERVED_TYPES and not allow_reserved:
        raise ValueError(f"relation type {value!r} is reserved")
    return value


def _check_edge_type(value: str) -> str:
    return check_rel_type(value, allow_reserved=True)


def json_problem(value: Any, depth: int = 0) -> str | None:
    """Why `value` (parsed JSON) cannot be stored, or None: a number that is not finite (NaN, 1e999),
    a string that is not valid Unicode (a lone surrogate), or nesting deeper than MAX_JSON_DEPTH."""
    if depth > MAX_JSON_DEPTH:
        return f"nested deeper than {MAX_JSON_DEPTH} levels"
    if isinstance(value, float) and not math.isfinite(value):
        return "numbers must be finite (no NaN or Infinity)"
    if isinstance(value, str):
        return None if value.isascii() or _encodes(value) else "text must be valid Unicode"
    if isinstance(value, dict):
        mapping = cast(dict[Any, Any], value)
        value = [*mapping.keys(), *mapping.values()]
    if isinstance(value, list | tuple):
        items = cast(Sequence[Any], value)
        return next((p for item in items if (p := json_problem(item, depth + 1))), None)
    return None


def _encodes(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return "number" if _number(value) else type(value).__name__


def _prop_value(key: str, value: Any) -> Any:
    """A property value as Neo4j stores it: a scalar or a list of one kind, integers within int64
    (a list of numbers holding a float holds floats only)."""
    items: list[Any] = cast(list[Any], value) if isinstance(value, list) else [value]
    if not all(isinstance(v, str | bool | int | float) for v in items) or len({_kind(v) for v in items}) > 1:
        raise ValueError(f"property {key!r} must be a string, number, boolean or a list of one of those")
    if any(_number(v) and isinstance(v, int) and not INT64[0] <= v <= INT64[1] for v in items):
        raise ValueError(f"property {key!r}: integers must lie within the 64-bit range")
    if isinstance(value, list) and any(isinstance(v, float) for v in items):
        return [float(v) for v in items]
    return cast(Any, value)


def _check_props(props: dict[str, Any]) -> dict[str, Any]:
    for key in props:
        if not _PROP_KEY.fullmatch(key) or key in RESERVED_PROPS:
            raise ValueError(f"property name {key!r} is not allowed")
    return {key: _prop_value(key, value) for key, value in props.items()}


DATA_MAX = 65_536


def check_data(data: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) > DATA_MAX:
        raise ValueError(f"data is at most {DATA_MAX:,} characters as JSON")
    try:
        rfc8785.dumps(data)  # remember's content key is taken over it
    except rfc8785.CanonicalizationError as e:
        raise ValueError("data's integers must lie within ±2**53 (JSON's exact range)") from e
    return data


def _schema_extra(pattern: str, reserved: frozenset[str] = frozenset()) -> dict[str, Any]:
    extra: dict[str, Any] = {"pattern": pattern}
    if reserved:
        extra["not"] = {"enum": sorted(reserved)}
    return extra


# Published bounds are the doubles nearest 2**63 inside int64: validators that compare numbers as
# doubles then never call an out-of-range integer valid.
_PROP_INT = 2**63 - 1024
_PROP_NUMBER = {
    "anyOf": [
        {"type": "integer", "minimum": -_PROP_INT, "maximum": _PROP_INT},
        {"type": "number", "not": {"type": "integer"}},
    ]
}
_PROPS_SCHEMA: dict[str, Any] = {
    "propertyNames": {"pattern": PROP_KEY, "not": {"enum": sorted(RESERVED_PROPS)}},
    "additionalProperties": {
        "anyOf": [
            {"type": "string"},
            {"type": "boolean"},
            _PROP_NUMBER,
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "boolean"}},
            {"type": "array", "items": _PROP_NUMBER},
        ]
    },
}

Graph = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Tenant graph")]
Text = Annotated[
    str,
    Field(min_length=1, max_length=4000, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Name = Annotated[
    str,
    Field(min_length=1, max_length=200, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Label = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(LABEL, RESERVED_LABELS)),
    AfterValidator(check_label),
]
RelType = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(REL_TYPE, RESERVED_TYPES)),
    AfterValidator(check_rel_type),
]
EdgeType = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(REL_TYPE)),
    AfterValidator(_check_edge_type),
]
Tag = Annotated[
    str,
    Field(min_length=1, max_length=64, json_schema_extra=_schema_extra(CLEAN_TEXT)),
    AfterValidator(_clean_text),
]
Query = Annotated[
    str,
    Field(min_length=1, max_length=4000, json_schema_extra=_schema_extra(NOT_BLANK)),
    AfterValidator(_not_blank),
]
Id = Annotated[str, Field(min_length=1, max_length=300)]
# An ISO 8601 instant; one without a timezone is taken as UTC. Stored as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
Instant = Annotated[datetime, AfterValidator(_utc)]
MemoryId = Annotated[str, Field(pattern=MEMORY_ID, description="Id of the Memory node (mem_...)")]
# A year, month, day or instant (domain/when.py), kept with its precision: `2023`, `2023-05`,
# `2023-05-07`, or an instant stored as `YYYY-MM-DDTHH:MM:SS.mmmZ` (no timezone: UTC). The published
# pattern holds the calendar (30 February, leap days), so a value that keeps to it is never refused
# (but for an offset that moves an instant out of the years 1000-9999).
_YEAR = r"[1-9][0-9]{3}"
_DAY = (
    rf"{_YEAR}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
    r"|02-(0[1-9]|1[0-9]|2[0-8]))"
    r"|([1-9][0-9](0[48]|[2468][048]|[13579][26])|(1[26]|[2468][048]|[3579][26])00)-02-29"
)
_TIME = (
    r"[T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?"
)
WHEN = rf"^({_YEAR}(-(0[1-9]|1[0-2]))?|({_DAY})({_TIME})?)$"


def _when(value: str) -> str:
    return parse_occurred(value).text


When = Annotated[
    str,
    Field(min_length=4, max_length=40, json_schema_extra={"pattern": WHEN}),
    AfterValidator(_when),
]


class ContractInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        problem = json_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class ContractOutput(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


# ---- inputs ---------------------------------------------------------------------------------------


class EntityIn(ContractInput):
    label: Label = Field(description='Node label, e.g. "Person", "Token", "Pool"')
    name: Name = Field(description="Display name of the entity")

    @property
    def id(self) -> str:
        return f"{self.label}:{self.name}"


class RelationIn(ContractInput):
    from_: Name = Field(alias="from", description="Source entity name (in entities or the graph), or its id")
    type: RelType = Field(description='Relation type, e.g. "AVOIDS", "TRADES_ON"')
    to: Name = Field(description="Target entity name (in entities or the graph), or its id")


class RememberInput(ContractInput):
    text: Text = Field(description="The fact to remember (1-4000 characters)")
    entities: list[EntityIn] = Field(default_factory=list[EntityIn], max_length=100)
    relations: list[RelationIn] = Field(default_factory=list[RelationIn], max_length=100)
    tags: list[Tag] = Field(default_factory=list, max_length=32, description="Free-form tags")
    supersedes: list[MemoryId] = Field(
        default_factory=list,
        max_length=32,
        description="Ids of memories of this graph that this one replaces (they stop being valid when it starts)",
    )
    validFrom: Instant | None = Field(default=None, description="When the fact starts to hold (default: now)")
    validTo: Instant | None = Field(
        default=None,
        description="When the fact stops holding (default: never); not before validFrom "
        "(equal to it: an empty interval, holding at no instant)",
    )
    occurredAt: When | None = Field(
        default=None,
        description="When what it tells happened: 2023, 2023-05, 2023-05-07 or an ISO 8601 instant "
        "(default: when it is remembered)",
    )
    data: Annotated[dict[str, Any], AfterValidator(check_data)] | None = Field(
        default=None,
        description=f"A JSON object kept with the memory and listed with it (at most {DATA_MAX:,} "
        "characters as JSON); not part of its hash: the text is",
    )
    graph: Graph = DEFAULT_GRAPH

    @property
    def occurred(self) -> Occurred | None:
        return parse_occurred(self.occurredAt) if self.occurredAt else None

    @model_validator(mode="after")
    def _interval(self) -> RememberInput:
        # Equal is an empty interval (validTo is exclusive): kept, found by no asOf, listed by history.
        if self.validFrom and self.validTo and self.validFrom > self.validTo:
            raise ValueError("validFrom must not be after validTo")
        return self


BATCH_LIMIT = 1000


class RememberBatchInput(ContractInput):
    # Taken as they come and checked one by one (services.bulk): a bad item is rejected alone, with its
    # reason, and the others land. So the schema says an item may be anything (a remember input, or a
    # value that is rejected), and a request is never refused for an item.
    items: list[SkipValidation[RememberInput | Any]] = Field(
        min_length=1,
        max_length=BATCH_LIMIT,
        description="Remember inputs (text, entities, relations, tags); each is checked on its own: "
        "an item that is not a valid remember input is rejected alone, with its reason",
    )
    graph: Graph = DEFAULT_GRAPH


# Which edges recall's walk follows (docs/recall.md, *Whose links*): every edge; agent-given ones only
# (`source` agent, or none: written before edges said); or agent-given ones the caller's token wrote.
Links = Literal["all", "agent", "mine"]


class RecallInput(ContractInput):
    # recall needs a query with a word in it, an entity, or both.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["query"], "properties": {"query": {"type": "string", "pattern": NOT_BLANK}}},
                {"required": ["entity"], "properties": {"entity": {"type": "string"}}},
            ]
        }
    )

    query: Annotated[str, Field(max_length=4000)] | None = Field(
        default=None,
        description="Keywords or a question in your own words (also matched by meaning; a time it names, "
        "such as 'last week' or 'May 2023', is read as a window: docs/time.md)",
    )
    entity: Name | None = Field(
        default=None,
        validate_default=True,
        description="Entity name (or Label:name id) to anchor the search",
    )
    hops: int = Field(default=1, ge=0, le=3)
    limit: int = Field(default=10, ge=1, le=50)
    asOf: Instant | None = Field(default=None, description="Return what was valid then (default: now)")
    history: bool = Field(default=False, description="Also return superseded and expired memories")
    links: Links = Field(
        default="all",
        description="Which edges the walk follows: all (default), agent (agent-given ones only, not "
        "those extraction read from the text), mine (agent-given ones written with your own token)",
    )
    from_: When | None = Field(
        default=None,
        alias="from",
        description="Favour memories of this time on: 2023, 2023-05, 2023-05-07 or an instant "
        "(default: the time the query names, if any)",
    )
    to: When | None = Field(
        default=None,
        description="... until the end of this year, month, day (inclusive) or instant (default: open)",
    )
    graph: Graph = DEFAULT_GRAPH

    @property
    def window(self) -> Span | None:
        """The explicit window, `from`'s start to `to`'s end; None when neither is given."""
        if self.from_ is None and self.to is None:
            return None
        start = parse_occurred(self.from_ or str(MIN_YEAR)).span.start
        return Span(start, parse_occurred(self.to or str(MAX_YEAR)).span.end)

    @model_validator(mode="after")
    def _from_before_to(self) -> RecallInput:
        window = self.window
        if window is not None and window.start >= window.end:
            raise ValueError("from must be before to")
        return self

    @field_validator("entity")
    @classmethod
    def _query_or_entity(cls, entity: str | None, info: ValidationInfo) -> str | None:
        if entity is None and "query" in info.data and not has_words(info.data["query"] or ""):
            raise ValueError("recall needs a query (with a word), an entity, or both")
        return entity


class LinkInput(ContractInput):
    from_: EntityIn = Field(alias="from")
    type: RelType = Field(description='UPPER_SNAKE_CASE, e.g. "TRADES_ON"')
    to: EntityIn
    props: Annotated[dict[str, Any], AfterValidator(_check_props)] = Field(
        default_factory=dict,
        max_length=32,
        description="Strings, numbers (64-bit integer range), booleans, or lists of one of those",
        json_schema_extra=cast(JsonDict, _PROPS_SCHEMA),
    )
    graph: Graph = DEFAULT_GRAPH


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


StartIds = Annotated[
    list[Id],
    Field(min_length=1, max_length=100),
    BeforeValidator(
        _one_or_many, json_schema_input_type=Id | Annotated[list[Id], Field(min_length=1, max_length=100)]
    ),
]


class ExploreInput(ContractInput):
    start: StartIds = Field(description="Node id(s) to start from (1 to 100)")
    maxDepth: int = Field(default=2, ge=0, le=3)
    direction: Literal["out", "in", "both"] = "both"
    types: list[EdgeType] | None = Field(default=None, max_length=32, description="Edge types to follow")
    limit: int = Field(default=100, ge=1, le=300)
    graph: Graph = DEFAULT_GRAPH

    @property
    def start_ids(self) -> list[str]:
        return list(dict.fromkeys(self.start))


class GraphInput(ContractInput):
    graph: Graph = DEFAULT_GRAPH


class IdInput(ContractInput):
    id: MemoryId
    graph: Graph = DEFAULT_GRAPH


# ---- outputs --------------------------------------------------------------------------------------


class EntityOut(ContractOutput):
    id: str
    label: str
    name: str


class Edge(ContractOutput):
    from_: str = Field(validation_alias="from", serialization_alias="from")
    type: str
    to: str


class RememberResult(ContractOutput):
    id: str
    hash: str
    entities: list[EntityOut]
    edges: list[Edge]


class RememberReceipt(ContractOutput):
    """One item of a bulk remember: created, a duplicate of a memory with the same content in the
    same graph (its id), or rejected with the reason (nothing of it was written)."""

    index: int = Field(description="Position of the item in the request (0-based)")
    status: Literal["created", "duplicate", "rejected"]
    id: str | None = None
    hash: str | None = None
    error: str | None = None


class RememberBatchResult(ContractOutput):
    receipts: list[RememberReceipt]
    created: int
    duplicates: int
    rejected: int

    @classmethod
    def of(cls, receipts: list[RememberReceipt]) -> RememberBatchResult:
        count = {
            status: sum(r.status == status for r in receipts)
            for status in ("created", "duplicate", "rejected")
        }
        return cls(
            receipts=receipts,
            created=count["created"],
            duplicates=count["duplicate"],
            rejected=count["rejected"],
        )


class ScoreParts(ContractOutput):
    """Why recall ranked a memory where it did: its score's terms (README: *Recall*, scoring).
    score = 6 · keyword · (1.3 when named) + walk + 2 · meaning + 1.5 · time."""

    keyword: float = Field(
        description="Share of the query's keyword weight (idf mass) the memory holds, to the power 1.5, 0-1"
    )
    meaning: float = Field(
        description="Closeness of meaning to the query, half absolute and half beside the closest "
        "candidate, 0-1 (0 when embeddings are off)"
    )
    walk: float = Field(description="1/(1+hop) plus the support of the entities that led to it")
    time: float = Field(description="Share of one of its times inside the time window read (0 without one)")
    named: bool = Field(description="It mentions an entity the query names")


Signal = Literal["keyword", "meaning", "time", "walk"]


class RecalledMemory(ContractOutput):
    id: str
    text: str
    score: float
    distance: int
    anchorId: str | None
    tags: list[str]
    # Recall fills both; a memory built without them keeps the seed's exact shape.
    why: ScoreParts | None = Field(default=None, exclude_if=lambda v: v is None)
    foundBy: list[Signal] = Field(
        default_factory=list[Signal],
        exclude_if=lambda v: not v,
        description="The signals that found it: keyword hit, nearest in meaning, in the time window read "
        "(or, for a question that asks when, stating a time), reached by the graph walk",
    )
    # Only for memories that carry them: a plain memory keeps the seed's exact shape.
    validFrom: str | None = Field(default=None, exclude_if=lambda v: v is None)
    validTo: str | None = Field(default=None, exclude_if=lambda v: v is None)
    supersededBy: list[str] = Field(
        default_factory=list, exclude_if=lambda v: not v, description="Memories that replace this one"
    )
    occurredAt: str | None = Field(default=None, exclude_if=lambda v: v is None)


class TimeWindow(ContractOutput):
    """The window recall favoured: read from the query's words ("last week") or given as from/to."""

    from_: str = Field(validation_alias="from", serialization_alias="from", description="Start (inclusive)")
    to: str = Field(description="End (exclusive)")
    source: Literal["query", "explicit"]
    text: str | None = Field(default=None, description="The query's words it was read from")

    @classmethod
    def of(cls, span: Span, source: Literal["query", "explicit"], text: str | None = None) -> TimeWindow:
        start, end = span.iso()
        return cls(from_=start, to=end, source=source, text=text)


class RecallResult(ContractOutput):
    memories: list[RecalledMemory]
    relations: list[str]
    contextTruncated: bool
    # Only when recall read a time window (from the query or from/to): otherwise the seed's shape.
    window: TimeWindow | None = Field(default=None, exclude_if=lambda v: v is None)
    # The context graph behind `relations`, kept for the text rendering (not serialised).
    _nodes: list[str] = PrivateAttr(default_factory=list)
    _edges: list[tuple[str, str, str]] = PrivateAttr(default_factory=list[tuple[str, str, str]])

    @classmethod
    def build(
        cls,
        memories: list[RecalledMemory],
        nodes: list[str],
        edges: list[tuple[str, str, str]],
        truncated: bool,
    ) -> RecallResult:
        result = cls(memories=memories, relations=[" ".join(e) for e in edges], contextTruncated=truncated)
        result._nodes, result._edges = nodes, edges
        return result

    @property
    def context(self) -> tuple[list[str], list[tuple[str, str, str]]]:
        return self._nodes, self._edges


class LinkResult(ContractOutput):
    id: str
    from_: EntityOut = Field(validation_alias="from", serialization_alias="from")
    type: str
    to: EntityOut
    props: dict[str, Any]
    created: bool


class ExploreNode(ContractOutput):
    id: str
    label: str
    text: str
    depth: int


class ExploreEdge(Edge):
    id: str


class ExploreResult(ContractOutput):
    nodes: list[ExploreNode]
    edges: list[ExploreEdge]
    truncated: bool


class ForgetResult(ContractOutput):
    id: str
    deleted: bool


class AnchorResult(ContractOutput):
    """anchor_now. `status` says which envelope this is: "anchored" (final on chain: verify_memory
    passes) and "not_final" (on chain, not final within the finality timeout; `reason` says so) set
    every field; "nothing_pending" and "not_configured" set only `reason`."""

    status: Literal["anchored", "not_final", "nothing_pending", "not_configured"]
    root: str | None = None
    count: int = 0
    txHash: str | None = None
    blockNumber: int | None = None
    anchoredAt: int | None = Field(default=None, description="Block time, milliseconds since the epoch")
    explorerUrl: str | None = None
    graphTag: str | None = Field(
        default=None,
        description="The graph's tag on chain: publish it, so that auditors pin it (graphsvc audit --graph-tag)",
    )
    reason: str | None = None


class VerifyResult(ContractOutput):
    id: str
    verified: bool
    hashValid: bool
    anchored: bool
    proofValid: bool
    onChain: bool
    root: str | None
    txHash: str | None
    explorerUrl: str | None
    problem: str | None
    # Proof length, for the text rendering (not serialised).
    _steps: int = PrivateAttr(default=0)

    def with_steps(self, steps: int) -> VerifyResult:
        """Note the proof's length (for the text rendering)."""
        self._steps = steps
        return self

    @property
    def steps(self) -> int:
        return self._steps
