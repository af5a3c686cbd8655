"""What an export proves about itself, from the file alone: one streaming pass, memory bounded by the
graph's batches, ids and positions (never its texts). One module, a little over the usual size, because
the rules below share the pass's state and read best side by side.

Each problem is a Finding: the line, a rule name and one sentence. The rules:

    json        the line is not one strict JSON object ending with LF (exports/lines.py: UTF-8, no
                CR, no blank line, at most MAX_LINE bytes, each key once, finite numbers)
    schema      the line is not a record of graphsvc.export/v1 (contracts/export.schema.json)
    order       a record out of its section or its order (batches and memories by seq, entities and
                tombstones by id), or a line after the trailer
    duplicate   an id, root or position seen before
    graph       a memory of another graph than the header's
    chain       a batch of another chain or contract than the header's
    hash        a memory's envelope does not hash to its hash, or is of another id
    batch       a memory or tombstone names a batch the export does not list
    proof       a Merkle proof does not fold the leaf of (id, hash) to its batch's root, or a memory
                of no batch carries one
    link        a batch's prevRoot is not the root of the export's batch before it (same graph tag)
    members     a batch's leaf count differs from the members the export holds of it
    position    a position of the remember order is neither a memory, a tombstone nor one the header
                says was forgotten before it was anchored (`forgottenUnanchored`)
    time        a memory created, or one forgotten, after the header's `exportedAt`
    forget, manifest  (manifests.py) a forget record or a batch's manifest is not as anchored
    reserved    a property an import does not take from a file (a memory's `graph`, an entity's, a
                relation's `id`...): the importing server sets or derives it (exports/format.py's lists)
    truncated   no trailer: the file ends early
    trailer     the trailer's line count, digest or counts differ from the lines before it
    extracted   (extracted.py) a memory's extracted edges are not what its extractor finds in its text
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import ValidationError

from graphsvc.domain.hashing import envelope_hash
from graphsvc.domain.merkle import memory_leaf, verify
from graphsvc.domain.render import plural
from graphsvc.exports.extracted import Extract, Extracted
from graphsvc.exports.findings import BatchSeen, Findings, inert
from graphsvc.exports.format import (
    ENTITY_DERIVED,
    LINE,
    MEMORY_CARRIED,
    MEMORY_DERIVED,
    RELATION_RESERVED,
    SECTIONS,
    BatchLine,
    EntityLine,
    Envelope,
    Header,
    Line,
    MemoryLine,
    RelationLine,
    TombstoneLine,
    Trailer,
    carried_data,
)
from graphsvc.exports.lines import Unreadable, parse
from graphsvc.exports.manifests import Manifests
from graphsvc.exports.shape import Shape, key

MAX_POSITIONS = 1_000_000_000  # a bitmap of this many positions is 125 MB
UNREADABLE = frozenset({"json", "schema"})  # a line that is not a record of the format: unreadable


@dataclass
class Checked:
    """What a pass over the file found, for the chain checks and the report."""

    header: Header | None = None
    batches: dict[str, BatchSeen] = field(default_factory=dict[str, BatchSeen])
    findings: Findings = field(default_factory=Findings)
    lines: int = 0
    unreadable: int = 0  # lines that are not a record of the format (json, schema)
    memories: int = 0
    hashed: int = 0  # memories whose envelope hashes to their hash
    proofs: int = 0  # members whose proof folds to their batch's root
    anchored: int = 0  # memories in a batch
    tombstones: int = 0
    entities: int = 0
    relations: int = 0
    extracted: int = 0  # extracted edges (not hashed): derived again where the extractor is here
    extraction: Extracted | None = None  # what was derived again, and what could not be
    manifests: int = 0  # batches whose manifest folds to their root
    positions_bound: int = 0  # memories whose position a manifest binds
    forgets: int = 0  # tombstones with an anchored forget record
    before: int = 0  # tombstones from before forget records
    positions_missing: int = 0
    trailer: Trailer | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def rules(self) -> set[str]:
        return self.findings.rules

    def counts(self) -> dict[str, int]:
        """The records read, as a trailer counts them."""
        return {
            "batches": len(self.batches),
            "entities": self.entities,
            "relations": self.relations,
            "memories": self.memories,
            "tombstones": self.tombstones,
        }


class _Pass:
    """One pass over the lines; `feed` each, then `finish`."""

    def __init__(self, extractors: Mapping[str, Extract]) -> None:
        self.out = Checked()
        self._section = -1
        self._digest = hashlib.sha256()
        self._last_seq = 0
        self._last_id = ""
        self._last_entity = ""
        self._last_batch_seq = -1
        self._ids: set[int] = set()
        self.shape = Shape(self._find, inert)
        self.extraction = self.out.extraction = Extracted(self._find, inert, extractors)
        self.manifests = Manifests(self._find, inert, self.out.batches)
        self._seen: bytearray = bytearray()
        self._chained_tail: str | None = None  # root of the last batch on the header's tag

    def _find(self, line: int | None, rule: str, text: str | Callable[[], str], times: int = 1) -> None:
        self.out.findings.add(line, rule, text, times)
        if rule in UNREADABLE:
            self.out.unreadable += times

    def feed(self, number: int, raw: bytes) -> Line | None:
        """Check one line (or a run of empty lines, `raw` all line feeds: one finding a line, found at
        once); returns the parsed record, or None when it cannot be read."""
        if len(raw) > 1 and not raw.strip(b"\n"):
            self._digest.update(raw)
            self.out.lines = number + len(raw) - 1
            self._find(number, "json", "an empty line: an export has none", len(raw))
            return None
        record = self._parse(number, raw)
        if not isinstance(record, Trailer):  # an unreadable line is a line before the trailer too
            self._digest.update(raw)
        self.out.lines = number
        if record is None:
            return None
        if self.out.trailer is not None:
            self._find(number, "order", "a line after the trailer")
            return record
        self._place(number, record)
        self._check(number, record)
        return record

    def _parse(self, number: int, raw: bytes) -> Line | None:
        try:
            data = parse(raw)
        except Unreadable as e:
            self._find(number, "json", str(e))
            return None
        try:
            return LINE.validate_python(data)
        except ValidationError as e:
            self._find(number, "schema", partial(_first_error, e, "line"))
            return None

    def _place(self, number: int, record: Line) -> None:
        kind = record.type
        section = SECTIONS.index("entity" if kind == "relation" else kind)
        if section < self._section or (kind == "header" and self._section >= 0):
            self._find(number, "order", f"a {kind} record after the {SECTIONS[self._section]} records")
        elif self._section < 0 and kind != "header":
            self._find(number, "order", "the first line is not the header")
        self._section = max(self._section, section)

    def _check(self, number: int, record: Line) -> None:
        match record:
            case Header():
                self._header(number, record)
            case BatchLine():
                self._batch(number, record)
            case EntityLine():
                self._entity(number, record)
            case RelationLine():
                self.out.relations += 1
                if record.from_ != self._last_entity:
                    self._find(
                        number, "order", f"a relation from {inert(record.from_)!r} under another entity"
                    )
                self._reserved(number, "relation", record.props, lambda k: k not in RELATION_RESERVED)
                self.shape.relation(number, record)
            case MemoryLine():
                self._memory(number, record)
            case TombstoneLine():
                self._tombstone(number, record)
            case Trailer():
                self._trailer(number, record)
            case _:
                pass

    def _header(self, number: int, header: Header) -> None:
        if self.out.header is not None:
            self._find(number, "duplicate", "a second header")
            return
        self.out.header = header
        if header.lastSeq > MAX_POSITIONS:
            self._find(
                number, "schema", f"lastSeq {header.lastSeq:,} is more than {MAX_POSITIONS:,} positions"
            )
            return
        self._seen = bytearray(header.lastSeq // 8 + 1)
        for seq in header.forgottenUnanchored:
            self._position(number, seq, "forgotten before it was anchored")

    def _batch(self, number: int, batch: BatchLine) -> None:
        header = self.out.header
        if batch.seq <= self._last_batch_seq:
            self._find(number, "order", f"batch {batch.seq} after batch {self._last_batch_seq}")
        self._last_batch_seq = batch.seq
        if batch.root in self.out.batches:
            self._find(
                number,
                "duplicate",
                f"batch root {batch.root} is also on line {self.out.batches[batch.root].line}",
            )
            return
        self.out.batches[batch.root] = BatchSeen(number, batch)
        if header is not None and (batch.chainId, batch.contract.lower()) != (
            header.chainId,
            (header.contract or "").lower(),
        ):
            self._find(
                number,
                "chain",
                f"batch {batch.root} is of chain {batch.chainId} contract {batch.contract}, "
                f"not the header's chain {header.chainId} contract {header.contract}",
            )
        if batch.graphTag is None or header is None:
            return
        if batch.graphTag != header.graphTag:
            self._find(
                number, "link", f"batch {batch.root} is on graph tag {batch.graphTag}, not the header's"
            )
            return
        expected = self._chained_tail or "0x" + "00" * 32
        if batch.prevRoot != expected:
            self._find(
                number,
                "link",
                f"batch {batch.root} follows {batch.prevRoot}; the export's batch before it is {expected}",
            )
        self._chained_tail = batch.root

    def _entity(self, number: int, entity: EntityLine) -> None:
        if entity.id <= self._last_entity:
            rule = "duplicate" if entity.id == self._last_entity else "order"
            self._find(number, rule, f"entity {inert(entity.id)!r} after {inert(self._last_entity)!r}")
        self._last_entity = entity.id
        self.out.entities += 1
        self.shape.entity(number, entity)
        self.extraction.entity(entity)
        props = entity.props

        def allowed(name: str) -> bool:  # `source`: only extraction made it
            return name in ENTITY_DERIVED or (name == "source" and props[name] == "extracted")

        self._reserved(number, f"entity {inert(entity.id)!r}", props, allowed)

    def _reserved(
        self, number: int, what: str, props: Mapping[str, object], allowed: Callable[[str], bool]
    ) -> None:
        """A property an import may not take from the file: named, never written."""
        for name in sorted(props):
            if not allowed(name):
                self._find(number, "reserved", f"{what}: property {inert(name)!r} is not one an import takes")
                return

    def _unique(self, number: int, memory_id: str) -> None:
        k = key(memory_id)
        if k in self._ids:
            self._find(number, "duplicate", f"memory id {inert(memory_id)!r} appears twice")
        self._ids.add(k)

    def _position(self, number: int, seq: int, what: str) -> None:
        if seq > len(self._seen) * 8 - 1 or (self.out.header and seq > self.out.header.lastSeq):
            self._find(number, "position", f"position {seq} ({what}) is past the header's last position")
            return
        byte, bit = divmod(seq, 8)
        if self._seen[byte] >> bit & 1:
            self._find(number, "duplicate", f"position {seq} ({what}) is taken twice")
        self._seen[byte] |= 1 << bit

    def _memory(self, number: int, memory: MemoryLine) -> None:
        self.out.memories += 1
        if memory.seq <= self._last_seq:
            self._find(number, "order", f"memory at position {memory.seq} after position {self._last_seq}")
        self._last_seq = memory.seq
        self.shape.memory(number, memory, self._ids)  # the memories before it: SUPERSEDES goes back
        self.extraction.memory(number, memory)
        self._unique(number, memory.id)
        self._position(number, memory.seq, f"memory {inert(memory.id)}")
        self._reserved(number, f"memory {inert(memory.id)}", memory.props, _memory_prop(memory.props))
        try:
            Envelope.model_validate(memory.envelope)
        except ValidationError as e:
            self._find(number, "schema", partial(_first_error, e, "", "envelope."))
        header = self.out.header
        if header is not None and memory.envelope.get("graph") != header.graph:
            self._find(
                number,
                "graph",
                f"memory {inert(memory.id)} is of graph {inert(memory.envelope.get('graph'))!r}",
            )
        if memory.envelope.get("id") != memory.id:
            self._find(
                number,
                "hash",
                f"the envelope is of memory {inert(memory.envelope.get('id'))!r}, not {inert(memory.id)!r}",
            )
        else:
            try:
                recomputed = envelope_hash(memory.envelope)
            except ValueError:
                recomputed = None
            if recomputed != memory.hash:
                self._find(
                    number,
                    "hash",
                    f"memory {inert(memory.id)}: the envelope hashes to {recomputed}, not {memory.hash}: it was changed",
                )
            else:
                self.out.hashed += 1
        self._dated(number, f"memory {inert(memory.id)} was created", memory.envelope.get("createdAt"))
        if memory.batch is not None:
            self.out.anchored += 1
            self._member(number, memory.id, memory.hash, memory.batch, memory.proof)
            self.manifests.member(memory.batch, memory.seq, memory.id, memory=True)
        elif memory.proof:
            self._find(
                number, "proof", f"memory {inert(memory.id)} is not anchored (no batch), yet carries a proof"
            )

    def _dated(self, number: int, what: str, instant: object) -> None:
        """An instant of the file's content is no later than the file says it was made."""
        header = self.out.header
        if header is not None and isinstance(instant, str) and instant > header.exportedAt:
            self._find(
                number,
                "time",
                f"{what} at {inert(instant)}, after the file says it was made ({header.exportedAt})",
            )

    def _tombstone(self, number: int, tombstone: TombstoneLine) -> None:
        self.out.tombstones += 1
        if tombstone.id <= self._last_id:
            self._find(number, "order", f"tombstone {inert(tombstone.id)!r} after {inert(self._last_id)!r}")
        self._last_id = tombstone.id
        self._unique(number, tombstone.id)
        if tombstone.seq is not None:
            self._position(number, tombstone.seq, f"tombstone {inert(tombstone.id)}")
        self._member(number, tombstone.id, tombstone.hash, tombstone.batch, tombstone.proof)
        self._dated(number, f"memory {inert(tombstone.id)} was forgotten", tombstone.forgottenAt)
        if self.out.header is not None:
            self.manifests.tombstone(number, self.out.header.graph, tombstone)

    def _member(self, number: int, memory_id: str, memory_hash: str, root: str, proof: list[str]) -> None:
        seen = self.out.batches.get(root)
        if seen is None:
            self._find(
                number, "batch", f"{inert(memory_id)} names batch {root}, which the export does not list"
            )
            return
        seen.members += 1
        leaf = memory_leaf(memory_id, bytes.fromhex(memory_hash[2:]))
        if verify(bytes.fromhex(root[2:]), leaf, [bytes.fromhex(p[2:]) for p in proof]):
            self.out.proofs += 1
        else:
            self._find(
                number, "proof", f"{inert(memory_id)}: the proof does not fold its leaf to batch {root}"
            )

    def _trailer(self, number: int, trailer: Trailer) -> None:
        self.out.trailer = trailer
        if trailer.lines != number - 1 or trailer.sha256 != self._digest.hexdigest():
            self._find(
                number,
                "trailer",
                f"the trailer is of {trailer.lines:,} lines with another digest: "
                f"{number - 1:,} lines precede it, so a line was added, removed or changed",
            )
        said = trailer.counts.model_dump()
        found = self.out.counts()
        if said != found and not self.out.rules() & {"json", "schema"}:  # unread lines: counts unknown
            self._find(
                number,
                "trailer",
                f"the trailer counts {_counted(said)}; the file holds {_counted(found)}",
            )

    def finish(self) -> Checked:
        out = self.out
        if out.header is None and out.lines == 0:
            self._find(None, "truncated", "the file is empty")
        if out.trailer is None and out.lines:
            self._find(None, "truncated", f"no trailer after line {out.lines:,}: the file ends early")
        if out.header is not None:
            self.manifests.finish(out.header.graph)
        for seen in out.batches.values():
            if seen.members != seen.batch.count:
                self._find(
                    seen.line,
                    "members",
                    f"batch {seen.batch.root} holds {plural(seen.batch.count, 'leaf', 'leaves')}; "
                    f"the export has {seen.members} of its members (memories, tombstones, forget records "
                    "and its manifest)",
                )
        m = self.manifests
        out.manifests, out.positions_bound, out.forgets, out.before = (
            m.manifested,
            m.bound,
            m.recorded,
            len(m.before),
        )
        if out.header is not None and out.header.lastSeq <= MAX_POSITIONS:
            self._gaps(out.header.lastSeq)
        self.shape.finish()
        out.extracted = self.shape.extracted
        return out

    def _gaps(self, last: int) -> None:
        for seq in range(1, last + 1):
            byte, bit = divmod(seq, 8)
            if not self._seen[byte] >> bit & 1:
                self.out.positions_missing += 1
                if self.out.positions_missing <= 20:
                    self._find(
                        None,
                        "position",
                        f"position {seq} is neither a memory, a tombstone nor forgotten before it was anchored: "
                        "a memory is missing",
                    )
        if self.out.positions_missing > 20:
            self._find(None, "position", f"… {self.out.positions_missing - 20:,} more positions missing")


def _first_error(error: ValidationError, whole: str, within: str = "") -> str:
    """`where: what` of a validation error's first problem (`whole`: where, when it is the value;
    `within`: what the place is in)."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or whole
    return f"{within}{inert(where)}: {inert(first['msg'])}"


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {kind}" for kind, n in counts.items())


def _memory_prop(props: Mapping[str, object]) -> Callable[[str], bool]:
    """What a memory's `props` may hold: the carried properties (strings; `data` a JSON object remember
    would keep), and the derived ones an older export wrote (ignored by an import)."""

    def allowed(name: str) -> bool:
        value = props[name]
        if name == "data" and isinstance(value, str):
            try:
                carried_data(value)
            except ValueError:
                return False
        return (name in MEMORY_CARRIED and isinstance(value, str)) or name in MEMORY_DERIVED

    return allowed


def check_lines(
    lines: Iterable[bytes], visit: Any = None, extractors: Mapping[str, Extract] | None = None
) -> Checked:
    """Run every file rule over `lines` (a binary file's lines: lines.bounded_lines of a file);
    `visit(number, record)` sees each record that could be read; `extractors` (by `<name>/<version>`)
    derive extracted edges again (none: each memory's are counted as not derived)."""
    checker = _Pass(extractors or {})
    number = 0
    for raw in lines:
        first, number = number + 1, number + (len(raw) if raw[:1] == b"\n" else 1)  # a run of LFs: lines
        record = checker.feed(first, raw)
        if visit is not None and record is not None:
            visit(first, record)
    return checker.finish()
