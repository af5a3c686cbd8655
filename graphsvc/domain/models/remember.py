"""remember, remember_batch and forget: what an agent stores, and the receipts it gets back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    SkipValidation,
    model_validator,
)

from graphsvc.domain.models.base import (
    DATA_MAX,
    DEFAULT_GRAPH,
    ContractInput,
    ContractOutput,
    Data,
    Graph,
    Instant,
    Label,
    MemoryId,
    Name,
    RelType,
    Tag,
    Text,
    When,
)
from graphsvc.domain.spans import Occurred, parse_occurred


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
    data: Data | None = Field(
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


class EntityOut(ContractOutput):
    id: str
    label: str
    name: str


class Edge(ContractOutput):
    from_: str = Field(validation_alias="from", serialization_alias="from")
    type: str
    to: str


# Whether a memory's vector (recall by meaning) or its extracted links are written with it: "ready" (it
# is found by meaning / joined to the graph now), "pending" (a background worker adds it soon: the write
# ran out of its budget, or went to the backlog as bulk), "off" (embeddings / extraction are off).
Readiness = Literal["ready", "pending", "off"]
MEANING = (
    "ready: the memory is found by meaning now; pending: its vector is added in the background soon "
    "(until then keywords and the graph find it); off: embeddings are off"
)
LINKS = (
    "ready: the names and key phrases of its text are joined to the graph now; pending: in the "
    "background soon; off: extraction is off"
)


class RememberResult(ContractOutput):
    id: str
    hash: str
    entities: list[EntityOut]
    edges: list[Edge]
    # What remember says of them; a result built without them keeps the seed's exact shape.
    meaning: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=MEANING)
    links: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=LINKS)


class RememberReceipt(ContractOutput):
    """One item of a bulk remember: created, a duplicate of a memory with the same content in the
    same graph (its id), or rejected with the reason (nothing of it was written)."""

    index: int = Field(description="Position of the item in the request (0-based)")
    status: Literal["created", "duplicate", "rejected"]
    id: str | None = None
    hash: str | None = None
    error: str | None = None
    meaning: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=MEANING)
    links: Readiness | None = Field(default=None, exclude_if=lambda v: v is None, description=LINKS)


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


class ForgetResult(ContractOutput):
    id: str
    deleted: bool
