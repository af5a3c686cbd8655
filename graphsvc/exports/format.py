"""The export format (`graphsvc.export/v1`): a graph as JSON lines, one record per line, in this order:

    header                 format, graph, graphTag, chain, contract, counts
    batch      (by seq)    every on-chain batch: root, seq, prevRoot, leaf count, transaction, block
    entity     (by id)     each followed by its typed relations to other entities (`relation` lines)
    memory     (by seq)    envelope (what is hashed), hash, position, batch root and Merkle proof,
                           its edges (MENTIONS, SUPERSEDES, ...) and its other stored properties
    tombstone  (by id)     a forgotten anchored memory: id, hash, position, batch root and proof
    trailer                the number of lines before it and the sha256 of their bytes

Everything a third party needs to check the graph against the chain alone (graphsvc audit) and
everything an empty graph on another server needs to hold it again with the same ids, hashes,
positions, batches and proofs (graphsvc import-export). The JSON Schema of one line is committed as
contracts/export.schema.json (a test keeps the two equal).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictStr,
    TypeAdapter,
)

from graphsvc.domain.models import PROP_KEY, RESERVED_PROPS, Graph, Label, RelType, check_data
from graphsvc.domain.proof import Address, Count, Hex32
from graphsvc.domain.spans import Occurred, parse_occurred

EXPORT_FORMAT = "graphsvc.export/v1"
# A memory's stored properties outside its envelope, as an export carries them (`props`) and an import
# writes them: who wrote it (services/provenance.py), what store_event recorded, and the JSON object
# remember keeps with it (`data`, as its JSON text). Each is a string.
MEMORY_CARRIED = frozenset(
    {"writerToken", "writerClient", "eventKind", "source", "timestamp", "payload", "data"}
)
# Properties the importing server derives itself (from the envelope, its graph name, its own worker):
# an export made before this list existed carries them; an import reads them never (nor writes them).
# An export now carries one of them, `extractedWith` (the extractor that read the memory's text): the
# audit derives the memory's extracted edges again with it (exports/extracted.py).
MEMORY_DERIVED = frozenset(
    {
        "title",
        "contentKey",
        "graphKey",
        "occurredFrom",
        "occurredTo",
        "timeFrom",
        "timeTo",
        "mentionFrom",
        "mentionTo",
        "embeddingModel",
        "extractedWith",
    }
)
# An entity is its line's id, label and name, and `source: "extracted"` in `props` when only extraction
# made it (services/extraction.py); its normalised name is derived by the importing server.
ENTITY_DERIVED = frozenset({"normName"})
# What `link` refuses in props (domain/reserved.py), but who made a relation: carried by an export.
RELATION_RESERVED = RESERVED_PROPS - {"source", "writerToken"}
MemoryId = Annotated[str, Field(min_length=1, max_length=300)]
Position = Annotated[int, Field(ge=1, le=2**53, strict=True)]
_STORED_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _stored_instant(value: str) -> str:
    """An instant as graphsvc stores and hashes one (`YYYY-MM-DDTHH:MM:SS.mmmZ`), of a real day in
    the years a memory may name (an import derives the memory's times from it)."""
    if not _STORED_INSTANT.fullmatch(value):
        raise ValueError("an instant is written YYYY-MM-DDTHH:MM:SS.mmmZ")
    Occurred.at(datetime.fromisoformat(value))  # ValueError: no such day, or a year out of range
    return value


def _occurred(value: str) -> str:
    parse_occurred(value)  # ValueError: not a year, month, day or instant
    return value


StoredInstant = Annotated[
    str,
    Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$", description="UTC, milliseconds"),
    AfterValidator(_stored_instant),
]


# Stored properties outside the hashed envelope (contentKey, title, ...): what a Neo4j property holds.
def _no_int(value: object) -> object:
    if isinstance(value, int):
        raise ValueError("an integer is not taken as a float")  # it would be imported as another value
    return value


# What a Neo4j property holds: an integer of 64 bits (a larger one passed every rule and failed the
# import's write), a float written as one.
Int64 = Annotated[int, Field(strict=True, ge=-(2**63), le=2**63 - 1)]
Float = Annotated[StrictFloat, BeforeValidator(_no_int)]
PropValue = (
    StrictStr | StrictBool | Int64 | Float | list[StrictStr] | list[StrictBool] | list[Int64] | list[Float]
)
Props = dict[Annotated[str, Field(pattern=PROP_KEY)], PropValue]


# An edge of a memory: to an entity (MENTIONS, REINFORCES, ...) or a memory (SUPERSEDES); never a batch.
def _not_in_batch(rel: str) -> str:
    if rel == "IN_BATCH":
        raise ValueError("a memory's batch is its `batch`, not an edge")
    return rel


EdgeRel = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$"), AfterValidator(_not_in_batch)]


def _none(value: object) -> bool:
    return value is None


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Counts(_Line):
    batches: Count
    entities: Count
    relations: Count
    memories: Count
    tombstones: Count


class Header(_Line):
    type: Literal["header"] = "header"
    format: Literal["graphsvc.export/v1"] = EXPORT_FORMAT
    graph: Graph
    graphTag: Hex32 | None = Field(
        description="The graph's tag in the contract's lists (null: never chained)"
    )
    chainId: Count | None
    contract: Address | None
    exportedAt: StoredInstant
    lastSeq: Annotated[int, Field(ge=0, le=2**53, strict=True)] = Field(
        description="The graph's last position in its remember order"
    )
    forgottenUnanchored: list[Position] = Field(
        description="Positions of memories forgotten before they were anchored (no tombstone)"
    )
    counts: Counts


class BatchLine(_Line):
    type: Literal["batch"] = "batch"
    root: Hex32
    seq: Count = Field(description="The batch's number across the source server, as anchored")
    count: Annotated[int, Field(ge=1, le=2**32 - 1, strict=True)] = Field(description="Leaf count")
    graphTag: Hex32 | None = Field(description="Null for a batch anchored before chained roots")
    prevRoot: Hex32 | None
    chainId: Count
    contract: Address
    txHash: Hex32
    blockNumber: Count
    anchoredAt: Count = Field(description="Block time, milliseconds since the epoch")
    manifestProof: list[Hex32] | None = Field(
        default=None,
        max_length=64,
        exclude_if=_none,
        description="The proof of the batch's manifest leaf (domain/manifest.py), derived from the export; "
        "absent for a batch sealed before manifests",
    )


class EntityLine(_Line):
    type: Literal["entity"] = "entity"
    id: str = Field(min_length=1, max_length=400)
    label: Label
    name: str = Field(max_length=400)
    props: Props = Field(default_factory=Props)


class RelationLine(_Line):
    type: Literal["relation"] = "relation"
    id: str | None = Field(max_length=100, description="The edge id (null for edges made before ids)")
    rel: RelType
    from_: str = Field(alias="from", max_length=400)
    to: str = Field(max_length=400)
    props: Props = Field(default_factory=Props)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)


def carried_data(text: str) -> dict[str, Any]:
    """A memory's `data` property (JSON text) as remember accepts it.

    Raises:
        ValueError: not a JSON object remember would keep (models.RememberInput.data).
    """
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("data is a JSON object")
        return check_data(cast(dict[str, Any], data))
    except RecursionError:
        raise ValueError("data is nested too deep") from None


class Edge(_Line):
    """An edge of a memory. `source`: "agent" (written by remember, `writerToken` the token's id when
    known) or "extracted" (by the worker's `extractor`, not hashed, never imported); absent on an edge
    written before edges said where they came from (read as the agent's)."""

    rel: EdgeRel
    to: str = Field(max_length=400)
    id: str | None = Field(max_length=100)
    source: Literal["agent", "extracted"] | None = Field(default=None, exclude_if=_none)
    extractor: str | None = Field(default=None, max_length=100, exclude_if=_none)
    writerToken: str | None = Field(default=None, max_length=100, exclude_if=_none)


class Envelope(_Line):
    """The shape of a memory's hashed envelope (domain/hashing.py), checked before an import."""

    schema_: Literal["graphsvc.memory/v1", "graphsvc.memory/v2", "graphsvc.memory/v3"] = Field(alias="schema")
    id: MemoryId
    graph: Graph
    text: str = Field(max_length=100_000)
    tags: list[Annotated[str, Field(max_length=200)]] = Field(max_length=10_000)
    entities: list[Annotated[str, Field(max_length=400)]] = Field(max_length=10_000)
    createdAt: StoredInstant
    supersedes: list[MemoryId] | None = Field(default=None, max_length=10_000)
    validFrom: StoredInstant | None = None
    validTo: StoredInstant | None = None
    occurredAt: Annotated[str, Field(max_length=40), AfterValidator(_occurred)] | None = None  # v3


class MemoryLine(_Line):
    type: Literal["memory"] = "memory"
    seq: Position
    id: MemoryId
    hash: Hex32
    envelope: dict[str, Any] = Field(description="The hashed envelope (graphsvc.memory/v1, v2 or v3)")
    batch: Hex32 | None = Field(description="The root of its batch (null: not anchored yet)")
    proof: list[Hex32] = Field(max_length=64)
    edges: list[Edge]
    props: Props = Field(
        description="Its other stored properties (contentKey, title, ...), not hashed; among them its "
        "provenance when known: writerToken (the id of the token it was written with) and writerClient "
        "(the MCP client's name/version); and extractedWith, the extractor that read its text (absent: not "
        "read when exported), with which an audit derives its extracted edges again"
    )


class Forget(_Line):
    """Where a tombstone's forget record (domain/manifest.py) was anchored: a later batch, its proof."""

    batch: Hex32
    proof: list[Hex32] = Field(max_length=64)


class TombstoneLine(_Line):
    type: Literal["tombstone"] = "tombstone"
    id: MemoryId
    hash: Hex32
    seq: Position | None = Field(description="Null for a memory forgotten before tombstones kept it")
    forgottenAt: StoredInstant
    batch: Hex32
    proof: list[Hex32] = Field(max_length=64)
    forget: Forget | None = Field(
        default=None,
        exclude_if=_none,
        description="Its anchored forget record; absent for a memory forgotten before forget records",
    )


class Trailer(_Line):
    type: Literal["trailer"] = "trailer"
    lines: Count = Field(description="Lines before this one")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the bytes of those lines")
    counts: Counts = Field(description="The records written (the header's counts are from the start)")


Line = Annotated[
    Header | BatchLine | EntityLine | RelationLine | MemoryLine | TombstoneLine | Trailer,
    Field(discriminator="type"),
]
LINE = TypeAdapter[Line](Line)
SECTIONS = ("header", "batch", "entity", "memory", "tombstone", "trailer")  # relation: with entity


def dump(line: BaseModel) -> bytes:
    """One line of the file: compact JSON, UTF-8, newline-terminated."""
    return line.model_dump_json(by_alias=True).encode() + b"\n"


def seal(body: list[bytes]) -> list[bytes]:
    """`body` (the lines before the trailer) with a trailer that agrees with it: its line count, sha256
    and record counts. What a file is checked against; tests and the conformance corpus make damaged
    files consistent with themselves with it, as a forger would."""
    kinds = [json.loads(line)["type"] for line in body]
    plural = {"batch": "batches", "entity": "entities", "relation": "relations", "memory": "memories"}
    counts = Counts(
        **{name: kinds.count(kind) for kind, name in plural.items()}, tombstones=kinds.count("tombstone")
    )
    digest = hashlib.sha256(b"".join(body)).hexdigest()
    return [*body, dump(Trailer(lines=len(body), sha256=digest, counts=counts))]


def json_schema() -> str:
    """The committed contracts/export.schema.json: `python -m graphsvc.exports.format > FILE`."""
    schema = LINE.json_schema(by_alias=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": EXPORT_FORMAT,
        "title": "graphsvc export v1: one line",
        **schema,
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(json_schema(), end="")
