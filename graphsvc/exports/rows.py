"""What an import writes of each record: built from an allow-list, never from the file's keys.

A memory's node gets its envelope's fields, its hash and position, the properties an export carries
(exports/format.py's MEMORY_CARRIED: who wrote it, what store_event recorded, its `data`) and the
properties this server derives itself, as remember would: its title, content key, graph key and times.
Nothing else of the file reaches a node: not a `graph` (the statement sets it last, from the header),
not an embedding or its model, not what the extractor did. An entity gets its id, label and name, its
normalised name (derived) and whether only extraction made it; a relation its properties but `id` and
`graph`; an edge its type, end and id, and where it came from when the file says. Extracted edges are
never written: this server's worker extracts again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphsvc.domain.extraction import normalise
from graphsvc.domain.hashing import content_key
from graphsvc.domain.merkle import pack_proof
from graphsvc.domain.render import clip
from graphsvc.domain.spans import parse_occurred
from graphsvc.exports.format import MEMORY_CARRIED, Edge, EntityLine, MemoryLine, RelationLine, carried_data
from graphsvc.services.drafts import TITLE_WIDTH
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.index.times import stamp

ENVELOPE_FIELDS = ("text", "tags", "createdAt", "supersedes", "validFrom", "validTo", "occurredAt")
TEMPORAL = ("supersedes", "validFrom", "validTo", "occurredAt")


def packed(hexes: list[str]) -> bytes:
    return pack_proof([bytes.fromhex(p[2:]) for p in hexes])


def derived(envelope: dict[str, Any], graph: str, data: str | None = None) -> dict[str, Any]:
    """The properties remember derives from what it hashes and its `data` (services/drafts.py), derived
    again here. The content key is made without the relations the memory was remembered with (the file
    does not say which they were): a bulk remember that repeats a moved memory with relations stores it
    again."""
    text, occurred = envelope["text"], envelope.get("occurredAt")
    temporal = {k: envelope[k] for k in TEMPORAL if envelope.get(k)}
    return {
        "title": clip(text, TITLE_WIDTH),
        "contentKey": content_key(
            graph=graph,
            text=text,
            tags=envelope["tags"],
            entities=envelope["entities"],
            relations=[],
            temporal=temporal or None,
            data=None if data is None else carried_data(data),
        ),
        "graphKey": graph_key(graph),
        **stamp(
            parse_occurred(occurred) if occurred else None,
            datetime.fromisoformat(envelope["createdAt"]),
            text,
        ),
    }


def memory_row(memory: MemoryLine, window: str, graph: str) -> dict[str, Any]:
    """import/memories' row for one memory (its envelope checked by the first pass)."""
    envelope = memory.envelope
    given = {k: envelope[k] for k in ENVELOPE_FIELDS if envelope.get(k) is not None}
    carried = {k: v for k, v in memory.props.items() if k in MEMORY_CARRIED and isinstance(v, str)}
    edges = [edge_row(e) for e in memory.edges if e.source != "extracted"]
    return {
        "id": memory.id,
        "memory": {
            **carried,
            **derived(envelope, graph, carried.get("data")),
            **given,
            "hash": memory.hash,
            "seq": memory.seq,
            "window": window,
        },
        "pending": memory.batch is None,
        "batch": memory.batch,
        "proof": packed(memory.proof),
        "edges": edges,
    }


def edge_row(edge: Edge) -> dict[str, Any]:
    said = {"source": edge.source, "writerToken": edge.writerToken}
    return {"rel": edge.rel, "to": edge.to, "id": edge.id, "props": {k: v for k, v in said.items() if v}}


def entity_row(entity: EntityLine) -> dict[str, Any]:
    """An entity as remember (or, for one only extraction made, the extractor) writes it."""
    made = entity.props.get("source") == "extracted"
    return {
        "id": entity.id,
        "label": entity.label,
        "name": entity.name,
        "normName": normalise(entity.name),
        "source": "extracted" if made else None,
    }


def relation_row(relation: RelationLine) -> dict[str, Any] | None:
    """None for an extracted relation (this server's worker extracts again)."""
    props = {k: v for k, v in relation.props.items() if k not in ("id", "graph")}
    if props.get("source") == "extracted":
        return None
    return {"id": relation.id, "rel": relation.rel, "from": relation.from_, "to": relation.to, "props": props}
