"""The hash of a memory: keccak256 over the RFC 8785 (JCS) form of a fixed, versioned envelope.

Only immutable fields are in the envelope, so the stored memory reproduces its hash forever; a
third party can recompute it from the memory alone (see the README's anchoring section).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

import rfc8785
from eth_utils.crypto import keccak

ENVELOPE_SCHEMA = "graphsvc.memory/v1"
# v1 plus `supersedes` (sorted ids), `validFrom` and `validTo` (instants or null): the envelope of a
# memory remembered with any of them, so the chain of updates is anchored too. Others stay v1.
TEMPORAL_SCHEMA = "graphsvc.memory/v2"
# v2 plus `occurredAt` (`YYYY`, `YYYY-MM`, `YYYY-MM-DD` or an instant): the envelope of a memory
# remembered with when it happened. Others keep v1 or v2, so every stored hash still verifies.
OCCURRED_SCHEMA = "graphsvc.memory/v3"


def format_timestamp(moment: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC: the one time format inside a hashed envelope."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def memory_envelope(
    *,
    id: str,
    graph: str,
    text: str,
    tags: Iterable[str],
    entities: Iterable[str],
    created_at: str,
    supersedes: Iterable[str] = (),
    valid_from: str | None = None,
    valid_to: str | None = None,
    occurred_at: str | None = None,
) -> dict[str, object]:
    envelope: dict[str, object] = {
        "schema": ENVELOPE_SCHEMA,
        "id": id,
        "graph": graph,
        "text": text,
        "tags": sorted(set(tags)),
        "entities": sorted(set(entities)),
        "createdAt": created_at,
    }
    predecessors = sorted(set(supersedes))
    if predecessors or valid_from or valid_to:
        envelope |= {
            "schema": TEMPORAL_SCHEMA,
            "supersedes": predecessors,
            "validFrom": valid_from,
            "validTo": valid_to,
        }
    if occurred_at:
        envelope |= {
            "schema": OCCURRED_SCHEMA,
            "supersedes": predecessors,
            "validFrom": valid_from,
            "validTo": valid_to,
            "occurredAt": occurred_at,
        }
    return envelope


def stored_envelope(memory: Mapping[str, Any]) -> dict[str, object]:
    """The envelope of a stored memory (its Neo4j properties, `entities` its entity ids)."""
    return memory_envelope(
        id=memory["id"],
        graph=memory["graph"],
        text=memory["text"],
        tags=memory["tags"] or [],
        entities=memory["entities"] or [],
        created_at=memory["createdAt"],
        supersedes=memory["supersedes"] or [],
        valid_from=memory["validFrom"],
        valid_to=memory["validTo"],
        occurred_at=memory.get("occurredAt"),
    )


def envelope_hash(envelope: Mapping[str, object]) -> str:
    """`0x` + keccak256(JCS(envelope)) as lowercase hex.

    Raises:
        ValueError: the envelope holds a value RFC 8785 cannot canonicalise (e.g. a huge integer).
    """
    try:
        return "0x" + keccak(rfc8785.dumps(cast(Any, envelope))).hex()
    except (rfc8785.CanonicalizationError, RecursionError) as e:
        raise ValueError(f"the envelope cannot be canonicalised: {e}") from e


def memory_hash(**fields: object) -> str:
    """The hash of the envelope made of `memory_envelope`'s fields."""
    return envelope_hash(memory_envelope(**fields))  # type: ignore[arg-type]


def content_key(
    *,
    graph: str,
    text: str,
    tags: Iterable[str],
    entities: Iterable[str],
    relations: Iterable[Iterable[str]],
    temporal: Mapping[str, object] | None = None,
    data: Mapping[str, object] | None = None,
) -> str:
    """sha256 of what a memory says (not when or under which id): remember's idempotency key.
    `temporal` (supersedes, validFrom, validTo, occurredAt) and `data` count only when given, so older
    keys stay as they were."""
    content: dict[str, object] = {
        "graph": graph,
        "text": text,
        "tags": sorted(set(tags)),
        "entities": sorted(set(entities)),
        "relations": [list(r) for r in sorted({tuple(r) for r in relations})],
    }
    if temporal:
        content["temporal"] = dict(temporal)
    if data is not None:
        content["data"] = dict(data)
    return hashlib.sha256(rfc8785.dumps(cast(Any, content))).hexdigest()
