"""The two leaves a batch holds besides its memories: forget records and the batch's manifest.

A **forget record** (`graphsvc.forget/v1`) is made when an anchored memory is forgotten: its own hashed
envelope, a pending leaf of the graph's next batch, so that a forget is anchored like a write (the
history of deletions only grows, as a Certificate Transparency log does):

    {"schema": "graphsvc.forget/v1", "id": "forget:<memory id>", "graph", "memory": <memory id>,
     "hash": <the memory's hash>, "forgottenAt": "YYYY-MM-DDTHH:MM:SS.mmmZ"}

A **manifest** (`graphsvc.batch/v1`) is one more leaf of every batch sealed since forget records: what
the batch holds, in a form an export lets anyone derive again, so that the chain binds it:

    {"schema": "graphsvc.batch/v1", "id": "batch", "graph",
     "members": [[position, memory id], ...] (its memories, by position),
     "forgets": [memory id, ...] (the memories whose forget records it holds, sorted),
     "before": [memory id, ...] or null}

`before` is set in the graph's first batch with a manifest only: the tombstones the graph held then,
made before forget records existed. So a tombstone without an anchored forget record is one of those,
or was forged; and each anchored memory's position is bound to its batch's root. Both leaves are
standard-v1 leaves of (id, hash), as a memory's: bundles, `verifyMemory` and every verifier of members
stay as they were; a batch's leaf count counts them.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphsvc.domain.hashing import envelope_hash
from graphsvc.domain.merkle import memory_leaf

FORGET_SCHEMA = "graphsvc.forget/v1"
MANIFEST_SCHEMA = "graphsvc.batch/v1"
FORGET_PREFIX = "forget:"
MANIFEST_ID = "batch"


def forget_envelope(graph: str, memory_id: str, memory_hash: str, forgotten_at: str) -> dict[str, object]:
    return {
        "schema": FORGET_SCHEMA,
        "id": FORGET_PREFIX + memory_id,
        "graph": graph,
        "memory": memory_id,
        "hash": memory_hash,
        "forgottenAt": forgotten_at,
    }


def forget_leaf(graph: str, memory_id: str, memory_hash: str, forgotten_at: str) -> tuple[str, bytes]:
    """(hash, leaf) of the forget record of a memory."""
    digest = envelope_hash(forget_envelope(graph, memory_id, memory_hash, forgotten_at))
    return digest, memory_leaf(FORGET_PREFIX + memory_id, bytes.fromhex(digest[2:]))


def manifest_envelope(
    graph: str, members: Iterable[tuple[int, str]], forgets: Iterable[str], before: Iterable[str] | None
) -> dict[str, object]:
    return {
        "schema": MANIFEST_SCHEMA,
        "id": MANIFEST_ID,
        "graph": graph,
        "members": [[seq, memory_id] for seq, memory_id in sorted(members)],
        "forgets": sorted(forgets),
        "before": None if before is None else sorted(before),
    }


def manifest_leaf(
    graph: str, members: Iterable[tuple[int, str]], forgets: Iterable[str], before: Iterable[str] | None
) -> tuple[str, bytes]:
    """(hash, leaf) of a batch's manifest."""
    digest = envelope_hash(manifest_envelope(graph, members, forgets, before))
    return digest, memory_leaf(MANIFEST_ID, bytes.fromhex(digest[2:]))
