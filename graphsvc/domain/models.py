"""The typed contract: every tool's input and output, shared by MCP, REST and the CLI.

Field names, bounds and defaults follow the seed tool reference; output models serialise (by alias)
to exactly the seed's JSON shapes.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

DEFAULT_GRAPH = "default"
CONTEXT_NODE_CAP = 300
RESERVED_LABELS = frozenset({"Memory", "Entity", "Batch", "Tombstone", "Pending", "AnchorState", "ApiToken"})
RESERVED_TYPES = frozenset({"MENTIONS", "IN_BATCH", "SUPERSEDES"})
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_REL_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_PROP_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _nfc(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def _clean_text(value: str) -> str:
    value = _nfc(value)
    if not value.strip():
        raise ValueError("must not be blank")
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def check_label(value: str) -> str:
    if not _LABEL.match(value):
        raise ValueError("a label is a letter then up to 63 letters, digits or '_' (e.g. Person, Token)")
    if value in RESERVED_LABELS:
        raise ValueError(f"label {value!r} is reserved")
    return value


def check_rel_type(value: str, *, allow_reserved: bool = False) -> str:
    if not _REL_TYPE.match(value):
        raise ValueError("a relation type is UPPER_SNAKE_CASE (e.g. TRADES_ON)")
    if value in RESERVED_TYPES and not allow_reserved:
        raise ValueError(f"relation type {value!r} is reserved")
    return value


def _check_edge_type(value: str) -> str:
    return check_rel_type(value, allow_reserved=True)


def _check_props(props: dict[str, Any]) -> dict[str, Any]:
    scalar = (str, bool, int, float)
    for key, value in props.items():
        if not _PROP_KEY.match(key) or key in {"id", "graph"}:
            raise ValueError(f"property name {key!r} is not allowed")
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, scalar) for v in items) or len({type(v) for v in items}) > 1:
            raise ValueError(f"property {key!r} must be a string, number, boolean or a list of one of those")
    return props


Graph = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Tenant graph")]
Text = Annotated[str, Field(min_length=1, max_length=4000), AfterValidator(_clean_text)]
Name = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_clean_text)]
Label = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(check_label)]
RelType = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(check_rel_type)]
EdgeType = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_check_edge_type)]
Tag = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_clean_text)]
Id = Annotated[str, Field(min_length=1, max_length=300)]
# An ISO 8601 instant; one without a timezone is taken as UTC. Stored as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
Instant = Annotated[datetime, AfterValidator(_utc)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class _Out(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


# ---- inputs ---------------------------------------------------------------------------------------


class EntityIn(_In):
    label: Label = Field(description='Node label, e.g. "Person", "Token", "Pool"')
    name: Name = Field(description="Display name of the entity")

    @property
    def id(self) -> str:
        return f"{self.label}:{self.name}"


class RelationIn(_In):
    from_: Name = Field(alias="from", description="Source entity name (in entities or the graph), or its id")
    type: RelType = Field(description='Relation type, e.g. "AVOIDS", "TRADES_ON"')
    to: Name = Field(description="Target entity name (in entities or the graph), or its id")


class RememberInput(_In):
    text: Text = Field(description="The fact to remember (1-4000 characters)")
    entities: list[EntityIn] = Field(default_factory=list, max_length=100)
    relations: list[RelationIn] = Field(default_factory=list, max_length=100)
    tags: list[Tag] = Field(default_factory=list, max_length=32, description="Free-form tags")
    supersedes: list[Id] = Field(
        default_factory=list,
        max_length=32,
        description="Ids of memories of this graph that this one replaces (they stop being valid when it starts)",
    )
    validFrom: Instant | None = Field(default=None, description="When the fact starts to hold (default: now)")
    validTo: Instant | None = Field(default=None, description="When the fact stops holding (default: never)")
    graph: Graph = DEFAULT_GRAPH

    @model_validator(mode="after")
    def _interval(self) -> RememberInput:
        if self.validFrom and self.validTo and self.validFrom >= self.validTo:
            raise ValueError("validFrom must be before validTo")
        return self


BATCH_LIMIT = 1000


class RememberBatchInput(_In):
    items: list[Any] = Field(
        min_length=1,
        max_length=BATCH_LIMIT,
        description="Remember inputs (text, entities, relations, tags); each is checked on its own",
    )
    graph: Graph = DEFAULT_GRAPH


class RecallInput(_In):
    query: Annotated[str, Field(max_length=4000)] | None = Field(default=None, description="Keywords")
    entity: Name | None = Field(
        default=None, description="Entity name (or Label:name id) to anchor the search"
    )
    hops: int = Field(default=1, ge=0, le=3)
    limit: int = Field(default=10, ge=1, le=50)
    asOf: Instant | None = Field(default=None, description="Return what was valid then (default: now)")
    history: bool = Field(default=False, description="Also return superseded and expired memories")
    graph: Graph = DEFAULT_GRAPH


class LinkInput(_In):
    from_: EntityIn = Field(alias="from")
    type: RelType = Field(description='UPPER_SNAKE_CASE, e.g. "TRADES_ON"')
    to: EntityIn
    props: Annotated[dict[str, Any], AfterValidator(_check_props)] = Field(
        default_factory=dict, max_length=32
    )
    graph: Graph = DEFAULT_GRAPH


class ExploreInput(_In):
    start: Id | list[Id] = Field(description="Node id(s) to start from")
    maxDepth: int = Field(default=2, ge=0, le=3)
    direction: Literal["out", "in", "both"] = "both"
    types: list[EdgeType] | None = Field(default=None, max_length=32, description="Edge types to follow")
    limit: int = Field(default=100, ge=1, le=300)
    graph: Graph = DEFAULT_GRAPH

    @field_validator("start")
    @classmethod
    def _start_not_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not 1 <= len(value) <= 100:
            raise ValueError("start takes 1 to 100 ids")
        return value

    @property
    def start_ids(self) -> list[str]:
        return list(dict.fromkeys([self.start] if isinstance(self.start, str) else self.start))


class GraphInput(_In):
    graph: Graph = DEFAULT_GRAPH


class IdInput(_In):
    id: Id = Field(description="Id of the Memory node")
    graph: Graph = DEFAULT_GRAPH


# ---- outputs --------------------------------------------------------------------------------------


class EntityOut(_Out):
    id: str
    label: str
    name: str


class Edge(_Out):
    from_: str = Field(alias="from")
    type: str
    to: str


class RememberResult(_Out):
    id: str
    hash: str
    entities: list[EntityOut]
    edges: list[Edge]


class RememberReceipt(_Out):
    """One item of a bulk remember: created, a duplicate of a memory with the same content in the
    same graph (its id), or rejected with the reason (nothing of it was written)."""

    index: int = Field(description="Position of the item in the request (0-based)")
    status: Literal["created", "duplicate", "rejected"]
    id: str | None = None
    hash: str | None = None
    error: str | None = None
    # Why a rejected item was refused, as the error a single remember raises (not serialised).
    _failure: Exception | None = PrivateAttr(default=None)

    @classmethod
    def rejected(cls, index: int, failure: Exception) -> RememberReceipt:
        receipt = cls(index=index, status="rejected", error=str(failure))
        receipt._failure = failure
        return receipt

    @property
    def failure(self) -> Exception | None:
        return self._failure


class RememberBatchResult(_Out):
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


class RecalledMemory(_Out):
    id: str
    text: str
    score: float
    distance: int
    anchorId: str | None
    tags: list[str]
    # Only for memories that carry them: a plain memory keeps the seed's exact shape.
    validFrom: str | None = Field(default=None, exclude_if=lambda v: v is None)
    validTo: str | None = Field(default=None, exclude_if=lambda v: v is None)
    supersededBy: list[str] = Field(
        default_factory=list, exclude_if=lambda v: not v, description="Memories that replace this one"
    )


class RecallResult(_Out):
    memories: list[RecalledMemory]
    relations: list[str]
    contextTruncated: bool
    # The context graph behind `relations`, kept for the text rendering (not serialised).
    _nodes: list[str] = PrivateAttr(default_factory=list)
    _edges: list[tuple[str, str, str]] = PrivateAttr(default_factory=list)

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


class LinkResult(_Out):
    id: str
    from_: EntityOut = Field(alias="from")
    type: str
    to: EntityOut
    props: dict[str, Any]
    created: bool


class ExploreNode(_Out):
    id: str
    label: str
    text: str
    depth: int


class ExploreEdge(Edge):
    id: str


class ExploreResult(_Out):
    nodes: list[ExploreNode]
    edges: list[ExploreEdge]
    truncated: bool


class ForgetResult(_Out):
    id: str
    deleted: bool


class AnchorResult(_Out):
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
    reason: str | None = None


class VerifyResult(_Out):
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
