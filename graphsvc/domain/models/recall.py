"""recall: the question, and the ranked memories with their evidence and the context walked."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from graphsvc.domain.models.base import (
    DEFAULT_GRAPH,
    NOT_BLANK,
    ContractInput,
    ContractOutput,
    Graph,
    Instant,
    Name,
    When,
    has_words,
)
from graphsvc.domain.spans import MAX_YEAR, MIN_YEAR, Span, parse_occurred

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
    links: Links | None = Field(
        default=None,
        description="Which edges the walk follows: all, agent (agent-given ones only, not those "
        "extraction read from the text), mine (agent-given ones written with your own token); "
        "default: the server's (docs/recall.md, *Whose links*)",
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
    # Only while some of the graph's memories wait for their vector: otherwise the seed's shape.
    pending: int | None = Field(
        default=None,
        exclude_if=lambda v: not v,
        description="How many of the graph's memories recall could not weigh by meaning: their vector is "
        "still being made in the background (found by keywords and the graph meanwhile); counted up "
        "to 1000",
    )
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
