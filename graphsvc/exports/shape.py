"""The graph's shape in an export, held to what is hashed where it can be (part of checks.py's pass).

    entity      an entity's id is not `label:name`
    edge        a memory's agent-given MENTIONS edges are not its envelope's `entities` (one each), or
                its SUPERSEDES edges not the memories of its envelope's `supersedes` that the export
                holds; another edge of it (an event's typed link: REINFORCES, ...) does not go to a
                context (`Context:…`) its envelope names; an edge goes to an entity or memory with no
                line; an extracted edge is not a MENTIONS naming its extractor
    relation    a relation goes to an entity with no line
    duplicate   (here) an edge or relation id seen before, or two relations of one type between one pair

Agent-given edges (`source` "agent", or none: written before edges said) are checked against the
envelope; extracted ones (`source` "extracted") are counted apart: re-derivable, never hashed. An
event's typed links (store_event's REINFORCES, ...) reach contexts its envelope names: the context is
bound, the link's type is not. Relations between entities are not hashed: only their ends are checked. Memory is bounded by the graph's entities and edge ids (8 bytes each).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from graphsvc.exports.findings import Find, Shown
from graphsvc.exports.format import EntityLine, MemoryLine, RelationLine


def key(text: str) -> int:
    """8 bytes of a string's hash: what a set of ids holds, rather than the ids."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())


@dataclass
class Shape:
    find: Find
    shown: Shown
    entities: set[int] = field(default_factory=set[int])
    extracted: int = 0  # extracted edges: counted apart, not hashed
    _edge_ids: set[int] = field(default_factory=set[int])
    _targets: dict[int, tuple[int, str]] = field(default_factory=dict[int, tuple[int, str]])
    _pairs: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])

    def _edge_id(self, number: int, edge_id: str | None) -> None:
        if edge_id is None:
            return
        k = key(edge_id)
        if k in self._edge_ids:
            self.find(number, "duplicate", f"edge id {self.shown(edge_id)!r} appears twice")
        self._edge_ids.add(k)

    def entity(self, number: int, entity: EntityLine) -> None:
        self.entities.add(key(entity.id))
        self._pairs = set()
        if entity.id != f"{entity.label}:{entity.name}":
            self.find(
                number,
                "entity",
                f"entity {self.shown(entity.id)!r} is not its label and name "
                f"({self.shown(entity.label)}:{self.shown(entity.name)})",
            )

    def relation(self, number: int, relation: RelationLine) -> None:
        self._edge_id(number, relation.id)
        pair = (relation.rel, relation.to)
        if pair in self._pairs:
            self.find(
                number,
                "duplicate",
                f"a second {relation.rel} from {self.shown(relation.from_)!r} to {self.shown(relation.to)!r}",
            )
        self._pairs.add(pair)
        self._targets.setdefault(key(relation.to), (number, relation.to))

    def memory(self, number: int, memory: MemoryLine, memories: set[int]) -> None:
        """`memories`: keys of the ids of the memories before this one (SUPERSEDES goes back)."""
        envelope, name = memory.envelope, self.shown(memory.id)
        agent = [e for e in memory.edges if e.source != "extracted"]
        for edge in memory.edges:
            self._edge_id(number, edge.id)
            if edge.source == "extracted":
                self.extracted += 1
                if edge.rel != "MENTIONS" or not edge.extractor:
                    self.find(
                        number,
                        "edge",
                        f"memory {name}: an extracted {edge.rel} edge names no extractor or is not a MENTIONS",
                    )
            target = memories if edge.rel == "SUPERSEDES" else self.entities
            if key(edge.to) not in target:
                self.find(
                    number,
                    "edge",
                    f"memory {name}: its {edge.rel} edge goes to {self.shown(edge.to)!r}, which has no line",
                )
        mentions = sorted(e.to for e in agent if e.rel == "MENTIONS")
        hashed = sorted(set(_strings(envelope.get("entities"))))
        for link in (e for e in agent if e.rel not in ("MENTIONS", "SUPERSEDES")):
            if not link.to.startswith("Context:") or link.to not in hashed:
                self.find(
                    number,
                    "edge",
                    f"memory {name}: its {link.rel} link goes to {self.shown(link.to)!r}, not to a context "
                    "its hashed envelope names",
                )
        if mentions != hashed:
            self.find(
                number,
                "edge",
                f"memory {name}: its MENTIONS edges go to {self.shown(mentions)}; its hashed envelope names {self.shown(hashed)}",
            )
        replaced = sorted(e.to for e in agent if e.rel == "SUPERSEDES")
        held = sorted(s for s in set(_strings(envelope.get("supersedes"))) if key(s) in memories)
        if replaced != held:
            self.find(
                number,
                "edge",
                f"memory {name}: its SUPERSEDES edges go to {self.shown(replaced)}; its hashed envelope "
                f"names {self.shown(held)} of the memories here",
            )

    def finish(self) -> None:
        for k, (number, to) in self._targets.items():
            if k not in self.entities:
                self.find(
                    number, "relation", f"a relation goes to entity {self.shown(to)!r}, which has no line"
                )


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]
