"""A memory on its way in (`Draft`: everything known before the write transaction, immutable), what
is read of its text meanwhile (`Reading`: its vector and mentions, services/at_write.py) and where it
landed (`Stored`). Built by services/remember.py."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypeVar

from graphsvc.domain.extraction import normalise
from graphsvc.domain.hashing import content_key, format_timestamp, memory_hash
from graphsvc.domain.models import (
    Edge,
    EntityIn,
    EntityOut,
    Readiness,
    RememberInput,
    RememberReceipt,
    RememberResult,
)
from graphsvc.domain.render import clip
from graphsvc.services import deadline
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.index.times import stamp

TITLE_WIDTH = 48  # Neo4j Browser captions a node by its `title` when it has no `name`
Triple = tuple[str, str, str]  # a relation: (from entity id, type, to entity id)
Found = list[dict[str, str]]  # extract/store's `found` for one memory
T = TypeVar("T")


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


@dataclass(frozen=True)
class Reading:
    """What an interactive write reads of its text (services/at_write.py): a job each for its vector and
    its mentions (None: not read at write), waited for until `due` (deadline.now's clock)."""

    vector: asyncio.Future[list[float]] | None = None
    found: asyncio.Future[Found] | None = None
    arrived: float = 0.0
    due: float = 0.0
    interactive: bool = False  # what it leaves to the background goes first there

    async def vector_read(self) -> list[float] | None:
        """The vector, if it is ready by `due` (waiting until then); else None (its job dropped: the
        worker encodes it). Asked again (a transaction run again): the same."""
        return await _settled(self.vector, self.due)

    async def found_read(self) -> Found | None:
        """The mentions, as `vector_read` the vector."""
        return await _settled(self.found, self.due)


BULK = Reading()  # a bulk write's: nothing read at write, nothing first in the backlog


async def _settled(job: asyncio.Future[T] | None, due: float) -> T | None:
    if job is None:
        return None
    if not job.done():
        await asyncio.wait({job}, timeout=max(0.0, due - deadline.now()))
    if not job.done():
        job.cancel()  # still queued: the pool drops it
        return None
    return None if job.cancelled() or job.exception() is not None else job.result()


@dataclass(frozen=True)
class Draft:
    """One memory on its way in. `triples` are its relations once resolved against the graph
    (`resolved` makes that new value); until then, none."""

    req: RememberInput
    links: tuple[tuple[str, str], ...]  # (type, entity id): store_event's links
    extra: Mapping[str, Any]  # further memory properties (store_event)
    id: str
    created_at: str
    tags: tuple[str, ...]
    entities: tuple[EntityIn, ...]
    digest: str
    key: str
    temporal: Mapping[str, Any]  # _temporal(req): stored as hashed
    times: Mapping[str, Any]  # index/times.py's stamp: when it happened and the times it mentions (derived)
    triples: tuple[Triple, ...] = ()
    reading: Reading = field(default=BULK, compare=False)

    @classmethod
    def of(
        cls,
        req: RememberInput,
        created_at: str,
        links: Sequence[tuple[str, str]] = (),
        extra: Mapping[str, Any] | None = None,
        reading: Reading = BULK,
    ) -> Draft:
        entities = tuple({e.id: e for e in req.entities}.values())
        memory_id = new_id("mem")
        tags = sorted(set(req.tags))
        ids = [e.id for e in entities]
        temporal = _temporal(req)
        return cls(
            req=req,
            links=tuple(links),
            extra=dict(extra or {}),
            id=memory_id,
            created_at=created_at,
            tags=tuple(tags),
            entities=entities,
            digest=memory_hash(
                id=memory_id,
                graph=req.graph,
                text=req.text,
                tags=tags,
                entities=ids,
                created_at=created_at,
                supersedes=req.supersedes,
                valid_from=temporal.get("validFrom"),
                valid_to=temporal.get("validTo"),
                occurred_at=temporal.get("occurredAt"),
            ),
            key=content_key(
                graph=req.graph,
                text=req.text,
                tags=tags,
                entities=ids,
                relations=[(r.from_, r.type, r.to) for r in req.relations],
                temporal=temporal,
                data=req.data,
            ),
            temporal=temporal,
            times=stamp(req.occurred, datetime.fromisoformat(created_at), req.text),
            reading=reading,
        )

    @property
    def graph(self) -> str:
        return self.req.graph

    @property
    def supersedes(self) -> list[str]:
        return self.temporal.get("supersedes", [])

    @property
    def refs(self) -> list[str]:
        return [ref for r in self.req.relations for ref in (r.from_, r.to)]

    def resolved(self, triples: Sequence[Triple]) -> Draft:
        return replace(self, triples=tuple(triples))

    def row(self, seq: int, window: str) -> dict[str, Any]:
        """The parameters of memory/commit's row for this memory, at position `seq` of its graph."""
        return {
            "graph": self.req.graph,
            "memory": {
                "id": self.id,
                "text": self.req.text,
                "tags": list(self.tags),
                "hash": self.digest,
                "createdAt": self.created_at,
                "title": clip(self.req.text, TITLE_WIDTH),
                "seq": seq,
                "window": window,
                "contentKey": self.key,
                "graphKey": graph_key(self.req.graph),
                **self.temporal,
                **self.times,
                **self.extra,
                **(
                    {"data": json.dumps(self.req.data, ensure_ascii=False)}
                    if self.req.data is not None
                    else {}
                ),
            },
            "entities": [
                {
                    "id": e.id,
                    "label": e.label,
                    "name": e.name,
                    "normName": normalise(e.name),
                    "edgeId": new_id("edge"),
                }
                for e in self.entities
            ],
            "relations": [
                {"from": a, "type": t, "to": b, "edgeId": new_id("edge")} for a, t, b in self.triples
            ],
            "links": [{"type": t, "to": to, "edgeId": new_id("edge")} for t, to in self.links],
            "supersedes": [{"to": p, "edgeId": new_id("edge")} for p in self.supersedes],
        }

    def result(self, meaning: Readiness | None = None, links: Readiness | None = None) -> RememberResult:
        return RememberResult(
            id=self.id,
            hash=self.digest,
            entities=[EntityOut(id=e.id, label=e.label, name=e.name) for e in self.entities],
            edges=[Edge(from_=self.id, type="MENTIONS", to=e.id) for e in self.entities]
            + [Edge(from_=a, type=t, to=b) for a, t, b in dict.fromkeys(self.triples)]
            + [Edge(from_=self.id, type="SUPERSEDES", to=p) for p in self.supersedes],
            meaning=meaning,
            links=links,
        )


@dataclass(frozen=True)
class Stored:
    """Where a draft landed: `created`, or a `duplicate` of the memory `id` (the same content in the
    same graph, remembered within the retry window, or earlier in the same batch); and whether that
    memory's vector and links are written (`ready`), left to the workers (`pending`) or not made (`off`)."""

    draft: Draft  # with its relations resolved
    status: Literal["created", "duplicate"]
    id: str
    hash: str
    meaning: Readiness | None = None  # None until the transaction knows
    links: Readiness | None = None

    def receipt(self, index: int) -> RememberReceipt:
        return RememberReceipt(
            index=index,
            status=self.status,
            id=self.id,
            hash=self.hash,
            meaning=self.meaning,
            links=self.links,
        )

    def result(self) -> RememberResult:
        """A single remember's answer: the memory in the graph (the duplicate's id and hash)."""
        return replace(self.draft, id=self.id, digest=self.hash).result(self.meaning, self.links)


def _temporal(req: RememberInput) -> dict[str, Any]:
    """The validity a memory was remembered with (only what was given): stored as it is hashed."""
    given = {
        "supersedes": sorted(set(req.supersedes)) or None,
        "validFrom": format_timestamp(req.validFrom) if req.validFrom else None,
        "validTo": format_timestamp(req.validTo) if req.validTo else None,
        "occurredAt": req.occurredAt,
    }
    return {k: v for k, v in given.items() if v is not None}
