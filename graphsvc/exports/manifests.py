"""Forget records and manifests in an export (part of checks.py's pass; domain/manifest.py says
what they are).

    forget      a tombstone's forget record does not fold to the batch it names, or that batch is not
                listed, or is not later than the memory's own
    manifest    a batch's manifest, derived from the export (its memories' positions, its forget records,
                and in the graph's first batch with a manifest the tombstones from before forget
                records), does not fold to its root: a position, a forget or a tombstone is not as
                anchored

A batch's members are its memories and tombstones, the forget records it holds and its manifest: the
leaf count on chain counts them all (checks.py's `members`). Memory is bounded by the anchored
members' positions and ids, held until the end of the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphsvc.domain.manifest import forget_leaf, manifest_leaf
from graphsvc.domain.merkle import verify
from graphsvc.exports.findings import BatchSeen, Find, Shown
from graphsvc.exports.format import TombstoneLine


def _folds(root: str, leaf: bytes, proof: list[str]) -> bool:
    return verify(bytes.fromhex(root[2:]), leaf, [bytes.fromhex(p[2:]) for p in proof])


@dataclass
class Manifests:
    find: Find
    shown: Shown
    batches: dict[str, BatchSeen]
    members: dict[str, list[tuple[int, str]]] = field(default_factory=dict[str, list[tuple[int, str]]])
    forgets: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    before: list[str] = field(default_factory=list[str])  # tombstones without a forget record
    recorded: int = 0  # tombstones whose forget record folds to a batch of the export
    bound: int = 0  # memories whose position a verified manifest binds
    manifested: int = 0  # batches whose manifest folds to their root

    memory_members: dict[str, int] = field(default_factory=dict[str, int])

    def member(self, root: str, seq: int | None, memory_id: str, *, memory: bool) -> None:
        """A memory (or tombstone) of batch `root`, at position `seq`."""
        if seq is not None:
            self.members.setdefault(root, []).append((seq, memory_id))
        if memory:
            self.memory_members[root] = self.memory_members.get(root, 0) + 1

    def tombstone(self, number: int, graph: str, tombstone: TombstoneLine) -> None:
        self.member(tombstone.batch, tombstone.seq, tombstone.id, memory=False)
        record = tombstone.forget
        if record is None:
            self.before.append(tombstone.id)
            return
        seen, own = self.batches.get(record.batch), self.batches.get(tombstone.batch)
        _, leaf = forget_leaf(graph, tombstone.id, tombstone.hash, tombstone.forgottenAt)
        if seen is None or (own is not None and seen.batch.seq <= own.batch.seq):
            self.find(
                number,
                "forget",
                f"tombstone {self.shown(tombstone.id)}: its forget record names batch {record.batch}, "
                "which the export does not list after the memory's own",
            )
        elif not _folds(record.batch, leaf, record.proof):
            self.find(
                number,
                "forget",
                f"tombstone {self.shown(tombstone.id)}: its forget record does not fold to batch {record.batch}",
            )
        else:
            seen.members += 1
            self.recorded += 1
            self.forgets.setdefault(record.batch, []).append(tombstone.id)

    def finish(self, graph: str) -> None:
        """Each manifest derived from the export and folded to its root."""
        with_manifest = sorted(
            (s for s in self.batches.values() if s.batch.manifestProof is not None), key=lambda s: s.batch.seq
        )
        for i, seen in enumerate(with_manifest):
            root = seen.batch.root
            members = self.members.get(root, [])
            before = self.before if i == 0 else None
            _, leaf = manifest_leaf(graph, members, self.forgets.get(root, []), before)
            if _folds(root, leaf, seen.batch.manifestProof or []):
                seen.members += 1
                self.manifested += 1
                self.bound += self.memory_members.get(root, 0)
            else:
                self.find(
                    seen.line,
                    "manifest",
                    f"batch {root}'s manifest, derived from the export, does not fold to its root: a "
                    "member's position, a forget record"
                    + (" or a tombstone from before forget records" if i == 0 else "")
                    + " is not as anchored",
                )
