"""Extracted edges derived again (part of checks.py's pass): what the extractor the export names finds in
each memory's text, met with the export's entities as the extraction worker meets them.

    extracted   a memory's extracted MENTIONS are not what its extractor finds in its hashed text: one
                added, one missing, one to another entity, or one naming another extractor than the
                memory was read with

How the worker joins a mention to an entity (cypher/extract/store.cypher): the graph's entity of the
same normalised name, one an agent gave first, else one extraction made; with none, a new entity
`Label:name`. The memory gets an extracted edge to it unless it already mentions it (an agent's edge).
Here that is done again with the export's entities, their normalised names derived from their names
(domain/extraction.py's `normalise`, as the importing server derives them).

What this binds, exactly: given the export's entity set, each memory read by an extractor this audit
has (`extractedWith` in its props, else the extractor its edges name) has exactly the extracted edges
that extractor finds in its text. Not bound: a mention whose normalised name several entities share
(which one the worker took depends on the order they were made, which the file does not hold): the
memory must reach one of them, with at most one extracted edge among them; a memory the export says
was not read yet (no `extractedWith` and no extracted edge: remembered while extraction was off, or
waiting to be read again), whose edges are none; a memory read by an extractor this audit does not
have (counted, and said). Memory is bounded by the graph's entities (8-byte keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from graphsvc.domain.extraction import Mention, bounded, normalise
from graphsvc.exports.findings import Find, Shown
from graphsvc.exports.format import EntityLine, MemoryLine
from graphsvc.exports.shape import key

Extract = Callable[[str], Sequence[Mention]]  # one text's mentions, by one extractor version


@dataclass
class Extracted:
    find: Find
    shown: Shown
    extractors: Mapping[str, Extract]  # by `<name>/<version>`: what this audit can derive again
    checked: int = 0  # memories whose extracted edges were derived again
    unread: int = 0  # memories not read by an extractor when the export was made
    unknown: dict[str, int] = field(default_factory=dict[str, int])  # memories by extractors not here
    loose: int = 0  # mentions of a name several entities share: not bound to one
    _norms: dict[int, list[int]] = field(default_factory=dict[int, list[int]])  # entities by their name

    def entity(self, entity: EntityLine) -> None:
        self._norms.setdefault(key(normalise(entity.name)), []).append(key(entity.id))

    def memory(self, number: int, memory: MemoryLine) -> None:
        edges = [e for e in memory.edges if e.source == "extracted"]
        said = memory.props.get("extractedWith")
        version = said if isinstance(said, str) else edges[0].extractor if edges else None
        name = self.shown(memory.id)
        if version is None:
            self.unread += 1
            return
        if any(e.extractor != version for e in edges):
            self.find(
                number,
                "extracted",
                f"memory {name}: an extracted edge names another extractor than {self.shown(version)}",
            )
        extract, text = self.extractors.get(version), memory.envelope.get("text")
        if extract is None or not isinstance(text, str):
            self.unknown[version] = self.unknown.get(version, 0) + 1
            return
        self.checked += 1
        given = {key(e.to) for e in memory.edges if e.rel == "MENTIONS" and e.source != "extracted"}
        actual = [(key(e.to), e.to) for e in edges]
        for mention in bounded(extract(text)):
            self._mention(number, name, mention, given, actual)
        for _, to in actual:
            self.find(
                number,
                "extracted",
                f"memory {name}: an extracted edge to {self.shown(to)!r}, which its extractor does not find",
            )

    def _mention(
        self, number: int, name: str, mention: Mention, given: set[int], actual: list[tuple[int, str]]
    ) -> None:
        """The edge `mention` makes, taken from `actual` (what is left there was not derived)."""
        candidates = self._norms.get(key(mention.norm), [])
        if len(candidates) > 1:  # which one the worker took is not in the file: any one, at most once
            self.loose += 1
            if not _take(actual, set(candidates)) and not given & set(candidates):
                self.find(
                    number,
                    "extracted",
                    f"memory {name}: its extractor finds {self.shown(mention.name)!r}; no edge reaches an entity of that name",
                )
            return
        target = candidates[0] if candidates else key(mention.id)
        if target not in given and not _take(actual, {target}):
            self.find(
                number,
                "extracted",
                f"memory {name}: its extractor finds {self.shown(mention.name)!r}; the export has no extracted edge to it",
            )


def _take(edges: list[tuple[int, str]], targets: set[int]) -> bool:
    """Take one edge to one of `targets` from `edges`; whether there was one."""
    for i, (k, _) in enumerate(edges):
        if k in targets:
            del edges[i]
            return True
    return False
