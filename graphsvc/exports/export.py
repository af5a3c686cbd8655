"""Export a graph as `graphsvc.export/v1` JSON lines (exports/format.py), streamed page by page.

Memory use is bounded by a page, whatever the graph's size: memories are read in remember order with
keyset pagination on the (graph, seq) index, entities and tombstones by id. The export is of the graph
as it was when it started: memories remembered later (a position past the header's `lastSeq`) and
tombstones made later are left out. A graph with a batch not on chain yet is refused: its memories
would be exported as not anchored while the batch may still be anchored later; so is one with a forget
record not anchored yet (domain/manifest.py): an audit could not tell that forget from a memory removed.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

from graphsvc.domain.hashing import format_timestamp, stored_envelope
from graphsvc.domain.merkle import unpack_proof
from graphsvc.errors import Conflict, NotFound
from graphsvc.exports.format import (
    MEMORY_CARRIED,
    RELATION_RESERVED,
    BatchLine,
    Counts,
    Edge,
    EntityLine,
    Forget,
    Header,
    MemoryLine,
    Props,
    RelationLine,
    TombstoneLine,
    Trailer,
    dump,
)
from graphsvc.services.ports import Reader, Row

PAGE = 1000
COUNTED = ("batches", "entities", "relations", "memories", "tombstones")
NOT_ON_CHAIN = ["SEALED", "SIGNED", "SUBMITTED"]  # an INCLUDED batch is on chain, final in seconds
Progress = Callable[[int, int], None]  # (memories written, memories in all)


def _hexes(packed: bytes | None) -> list[str]:
    return ["0x" + step.hex() for step in unpack_proof(packed or b"")]


class Exporter:
    """One export of one graph: `lines()` yields the file's lines, trailer last."""

    def __init__(
        self,
        store: Reader,
        graph: str,
        *,
        chain_id: int | None = None,
        contract: str | None = None,
        page: int = PAGE,
        progress: Progress | None = None,
    ):
        self._store, self.graph, self._page = store, graph, page
        self._chain_id, self._contract = chain_id, contract
        self._progress = progress
        self._digest = hashlib.sha256()
        self._lines = 0
        self._counts: dict[str, int] = dict.fromkeys(COUNTED, 0)
        self._total = 0

    def _emit(self, line: Any, kind: str | None = None) -> bytes:
        data = dump(line)
        self._digest.update(data)
        self._lines += 1
        if kind:
            self._counts[kind] += 1
        return data

    @property
    def lines_written(self) -> int:
        return self._lines + 1  # and the trailer

    async def lines(self) -> AsyncIterator[bytes]:
        """Raises:
        NotFound: the graph holds nothing.
        Conflict: a batch of the graph is not on chain yet.
        """
        batches = [
            BatchLine(
                **row["batch"], manifestProof=_hexes(row["manifestProof"]) if row["manifestProof"] else None
            )
            for row in await self._store.run("export/batches", graph=self.graph)
        ]
        if batches:  # the chain the batches were anchored on, whatever this server is configured with
            self._chain_id, self._contract = batches[-1].chainId, batches[-1].contract
        header = await self._header()
        yield self._emit(header)
        on_chain = {b.root for b in batches}
        for batch in batches:
            yield self._emit(batch, "batches")
        async for line in self._entities():
            yield line
        async for line in self._memories(header, on_chain):
            yield line
        async for line in self._tombstones(header.exportedAt):
            yield line
        yield dump(Trailer(lines=self._lines, sha256=self._digest.hexdigest(), counts=Counts(**self._counts)))

    async def _header(self) -> Header:
        [row] = await self._store.run("export/header", graph=self.graph, unfinished=NOT_ON_CHAIN)
        if row["memories"] == 0 and row["tombstones"] == 0 and row["entities"] == 0:
            raise NotFound(f"graph {self.graph!r} holds nothing to export")
        if row["unfinished"]:
            raise Conflict(
                f"graph {self.graph!r} has {row['unfinished']} batch(es) not on chain yet: finish them "
                "(anchor_now) and export again"
            )
        if row["unrecorded"]:  # an audit could not tell those forgets from memories removed
            raise Conflict(
                f"graph {self.graph!r} has {row['unrecorded']} forget(s) not anchored yet: anchor them "
                "(anchor_now) and export again"
            )
        self._total = row["memories"]
        return Header(
            graph=self.graph,
            graphTag=row["graphTag"],
            chainId=self._chain_id,
            contract=self._contract,
            exportedAt=format_timestamp(datetime.now(UTC)),
            lastSeq=row["lastSeq"],
            forgottenUnanchored=sorted(row["forgotten"]),
            counts=Counts(
                **{k: row[k] for k in ("batches", "entities", "relations", "memories", "tombstones")}
            ),
        )

    async def _entities(self) -> AsyncIterator[bytes]:
        after = ""
        while rows := await self._store.run(
            "export/entities", graph=self.graph, after=after, limit=self._page
        ):
            for row in rows:
                made: Props = {"source": "extracted"} if row["source"] == "extracted" else {}
                entity = EntityLine(id=row["id"], label=row["label"], name=row["name"], props=made)
                yield self._emit(entity, "entities")
                for rel in sorted(row["relations"], key=lambda r: (r["rel"], r["to"], r["id"] or "")):
                    extra = {k: v for k, v in rel["props"].items() if k not in RELATION_RESERVED}
                    line = RelationLine.model_validate(
                        {
                            "id": rel["id"],
                            "rel": rel["rel"],
                            "from": row["id"],
                            "to": rel["to"],
                            "props": extra,
                        }
                    )
                    yield self._emit(line, "relations")
            after = rows[-1]["id"]

    async def _memories(self, header: Header, on_chain: set[str]) -> AsyncIterator[bytes]:
        after = 0
        while after < header.lastSeq and (
            rows := await self._store.run(
                "export/memories",
                graph=self.graph,
                after=after,
                limit=self._page,
                carried=sorted(MEMORY_CARRIED),
            )
        ):
            for row in rows:
                if row["memory"]["seq"] > header.lastSeq:
                    return
                yield self._emit(_memory_line(row, on_chain), "memories")
            after = rows[-1]["memory"]["seq"]
            if self._progress:
                self._progress(self._counts["memories"], self._total)

    async def _tombstones(self, exported_at: str) -> AsyncIterator[bytes]:
        after = ""
        while rows := await self._store.run(
            "export/tombstones", graph=self.graph, after=after, limit=self._page
        ):
            for row in rows:
                t = row["tombstone"]
                if row["batch"] is not None and t["forgottenAt"] <= exported_at:
                    recorded = row["recordedIn"]
                    line = TombstoneLine(
                        id=t["id"],
                        hash=t["hash"],
                        seq=t["seq"],
                        forgottenAt=t["forgottenAt"],
                        batch=row["batch"],
                        proof=_hexes(row["proof"]),
                        forget=Forget(batch=recorded, proof=_hexes(row["recordProof"])) if recorded else None,
                    )
                    yield self._emit(line, "tombstones")
            after = rows[-1]["tombstone"]["id"]


async def graph_tag(store: Reader, graph: str) -> str | None:
    """The graph's tag (what an auditor pins: `graphsvc audit --graph-tag`); None before its first batch."""
    rows = await store.run("export/graph_tag", graph=graph)
    return rows[0]["graphTag"] if rows else None


def _read_with(extractor: str | None) -> list[tuple[str, str]]:
    """`extractedWith`, what read the memory's text: its extracted edges are derived again with it."""
    return [("extractedWith", extractor)] if extractor else []


def _memory_line(row: Row, on_chain: set[str]) -> MemoryLine:
    m = row["memory"]
    anchored = row["batch"] if row["batch"] in on_chain else None
    envelope = stored_envelope(m)
    edges = sorted(
        (Edge.model_validate(e) for e in row["edges"]),
        key=lambda e: (e.rel, e.to, e.id or ""),
    )
    return MemoryLine(
        seq=m["seq"],
        id=m["id"],
        hash=m["hash"],
        envelope=envelope,
        batch=anchored,
        proof=_hexes(row["proof"]) if anchored else [],
        edges=edges,
        props=dict(sorted([*((k, v) for k, v in row["props"]), *_read_with(row["extractedWith"])])),
    )
