"""link and explore: typed relations between entities, and walks over the graph."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
)
from pydantic.config import JsonDict

from graphsvc.domain.models.base import (
    DEFAULT_GRAPH,
    PROPS_SCHEMA,
    ContractInput,
    ContractOutput,
    EdgeType,
    Graph,
    Id,
    RelType,
    check_props,
)
from graphsvc.domain.models.remember import Edge, EntityIn, EntityOut


class LinkInput(ContractInput):
    from_: EntityIn = Field(alias="from")
    type: RelType = Field(description='UPPER_SNAKE_CASE, e.g. "TRADES_ON"')
    to: EntityIn
    props: Annotated[dict[str, Any], AfterValidator(check_props)] = Field(
        default_factory=dict,
        max_length=32,
        description="Strings, numbers (64-bit integer range), booleans, or lists of one of those",
        json_schema_extra=cast(JsonDict, PROPS_SCHEMA),
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
