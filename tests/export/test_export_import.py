"""An import cannot be turned against another tenant: on a server that holds another tenant's graph,
every property an import must not take from a file is refused (nothing written), every property the
server derives is derived again whatever the file says, the file is read once (a pipe works, and a
file that changes between two reads cannot change what is written), and nothing is reported imported
that the store did not write."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphsvc.config import Settings
from graphsvc.domain.models import GraphInput, LinkInput, RecallInput, RememberInput
from graphsvc.exports import render as audit_render
from graphsvc.exports.format import seal
from graphsvc.exports.importer import ExportRejected
from graphsvc.exports.lines import bounded_lines
from graphsvc.exports.rows import derived
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import count_nodes, recounted, term_stats
from tests.exports import MON, POOL, anchoring, audited, comparable, export, fill, importer, wipe

pytestmark = pytest.mark.neo4j
__all__ = ["anchoring"]  # a fixture of this module's tests

# What a node holds that a file must never set: each tried as a memory's, an entity's and (the edge
# keys) a relation's property.
MEMORY_RESERVED = [
    "graph",
    "id",
    "hash",
    "seq",
    "text",
    "tags",
    "createdAt",
    "supersedes",
    "validFrom",
    "validTo",
    "occurredAt",
    "window",
    "embedding",
    "embedClaim",
    "embedClaimUntil",
    "embedLock",
    "lock",
    "importing",
    "unknownKey",
]
ENTITY_RESERVED = ["graph", "id", "label", "name", "writerToken", "unknownKey"]
RELATION_RESERVED = ["graph", "id"]
# What the importing server derives itself: each forged with the other tenant's values.
DERIVED = ["title", "contentKey", "graphKey", "timeFrom", "timeTo", "occurredFrom", "occurredTo"]
Record = dict[str, Any]


async def _other_tenant(memory: MemoryService, anchoring: AnchoringService, graph: str) -> None:
    await memory.remember(
        RememberInput(text="the other tenant's own note about MON", entities=[MON], graph=graph)
    )
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.remember(RememberInput(text="the other tenant's pending note", graph=graph))


async def _snapshot(store: GraphStore, graph: str) -> list[Any]:
    """Every node of `graph` (and its GraphState), its labels and properties, and its edges."""
    records, _, _ = await store._driver.execute_query(
        "MATCH (n) WHERE n.graph = $g OR (n:GraphState AND n.name = $g) "
        "OPTIONAL MATCH (n)-[r]-(x) "
        "WITH n, collect([type(r), properties(r), elementId(x)]) AS edges "
        "RETURN labels(n) AS labels, properties(n) AS props, edges ORDER BY elementId(n)",
        g=graph,
        database_=store._database,
    )
    return [(sorted(r["labels"]), r["props"], sorted(map(str, r["edges"]))) for r in records]


async def _stray(store: GraphStore, graph: str, other: str) -> int:
    """Nodes that carry `other`'s graph key but are not of `other`'s graph, or a graph of neither."""
    records, _, _ = await store._driver.execute_query(
        "MATCH (n) WHERE (n.graphKey = $key AND n.graph <> $other) "
        "OR (n:Memory AND n.graph IS NULL) OR (n:Entity AND n.graph IS NULL) RETURN count(n) AS n",
        key=graph_key(other),
        other=other,
        database_=store._database,
    )
    return records[0]["n"]


def _forge(lines: list[bytes], kind: str, change: Callable[[Record], None]) -> list[bytes]:
    """`lines` with the first record of `kind` changed and the trailer sealed again, as a forger would."""
    body = [json.loads(line) for line in lines[:-1]]
    change(next(r for r in body if r["type"] == kind))
    return seal([json.dumps(r).encode() + b"\n" for r in body])


def _prop(key: str, value: object) -> Callable[[Record], None]:
    def change(record: Record) -> None:
        record["props"][key] = value

    return change


@pytest.fixture
async def two_tenants(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> tuple[str, list[bytes]]:
    """Graph `graph`'s export (then the graph wiped, so it may be imported again) and another tenant's
    graph on the same server; returns the other graph's name and the export."""
    await memory.remember(
        RememberInput(
            text="Pool MON/USDC-A is thin after 18:00",
            entities=[POOL, MON],
            relations=[{"from": "MON/USDC-A", "type": "QUOTES", "to": "MON"}],
            graph=graph,
        )
    )
    await memory.link(
        LinkInput.model_validate(
            {"from": POOL, "type": "LISTS", "to": MON, "props": {"venue": "dex"}, "graph": graph}
        )
    )
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.remember(
        RememberInput(text="a pending note", occurredAt="2026-05-07", data={"k": [1, "x"]}, graph=graph)
    )
    other = graph + "-other"
    await _other_tenant(memory, anchoring, other)
    lines = await export(store, settings, graph, tmp_path / "a.jsonl")
    await wipe(store, graph)
    return other, lines


async def test_every_reserved_key_in_a_file_is_refused_and_another_tenant_is_left_as_it_was(
    store: GraphStore,
    memory: MemoryService,
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
) -> None:
    other, lines = two_tenants
    before = await _snapshot(store, other)
    forged = [("memory", key, other if key == "graph" else "x") for key in MEMORY_RESERVED]
    forged += [("entity", key, other if key == "graph" else "x") for key in ENTITY_RESERVED]
    forged += [("relation", key, other if key == "graph" else "x") for key in RELATION_RESERVED]
    forged += [("memory", "data", bad) for bad in ("not JSON", "[1]", '{"n": 9007199254740993}')]
    for kind, key, value in forged:
        with pytest.raises(ExportRejected) as refused:
            await importer(store, settings, memory).run(_forge(lines, kind, _prop(key, value)))
        assert "reserved" in {f.rule for f in refused.value.findings}, (kind, key)
        assert await _snapshot(store, graph) == [], (kind, key)  # nothing written, not even a GraphState
    assert await _snapshot(store, other) == before
    assert await _stray(store, graph, other) == 0


async def test_properties_the_server_derives_are_derived_again_whatever_the_file_says(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
) -> None:
    other, lines = two_tenants
    before = await _snapshot(store, other)
    planted = {key: f"forged {key}" for key in DERIVED} | {"graphKey": graph_key(other), "timeFrom": 0}
    planted |= {"embeddingModel": "forged", "extractedWith": "forged/1"}

    def plant(record: Record) -> None:
        record["props"] |= planted

    done = await importer(store, settings, memory).run(_forge(lines, "memory", plant))
    assert done.memories == 2
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g}) RETURN properties(m) AS props ORDER BY m.seq",
        g=graph,
        database_=store._database,
    )
    for row, line in zip(records, [r for r in map(json.loads, lines) if r["type"] == "memory"], strict=True):
        props, expected = row["props"], derived(line["envelope"], graph, line["props"].get("data"))
        assert {k: props[k] for k in expected} == expected
        assert props.get("data") == line["props"].get("data")
        assert "embeddingModel" not in props and "extractedWith" not in props and "embedding" not in props
    assert await _snapshot(store, other) == before
    assert await _stray(store, graph, other) == 0
    # what the other tenant's token reaches: its recall, its batch
    recalled = await memory.recall(RecallInput(query="Pool MON thin", graph=other))
    assert all(m.text.startswith("the other tenant") for m in recalled.memories)
    await anchoring.anchor_now(GraphInput(graph=other))
    assert await _snapshot(store, graph) and await _stray(store, graph, other) == 0


async def test_a_file_read_from_a_pipe_imports_once_and_a_second_read_never_happens(
    store: GraphStore,
    memory: MemoryService,
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
) -> None:
    _, lines = two_tenants
    changed = [line.replace(b"thin after 18:00", b"deep after 18:00") for line in lines]

    class TwoFaced:
        """The genuine file to the first read, a changed one to any later read (a named pipe could)."""

        reads = 0

        def __iter__(self) -> Iterator[bytes]:
            self.reads += 1
            return iter(lines if self.reads == 1 else changed)

    source = TwoFaced()
    done = await importer(store, settings, memory).run(source)
    assert source.reads == 1 and done.memories == 2
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g}) RETURN m.text AS text", g=graph, database_=store._database
    )
    assert "Pool MON/USDC-A is thin after 18:00" in {r["text"] for r in records}


def test_import_export_reads_a_named_pipe_and_writes_every_memory_it_reports(
    settings: Settings, graph: str, two_tenants: tuple[str, list[bytes]], tmp_path: Path
) -> None:
    import argparse

    from graphsvc.app import Services
    from graphsvc.cli import export as cli_export
    from graphsvc.cli.common import with_services

    _, lines = two_tenants
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as pipe:  # blocks until the import opens it
            pipe.write(b"".join(lines))

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    args = argparse.Namespace(file=fifo, graph=None, graph_tag=None, known_root=[], bundle=[], no_chain=False)
    assert cli_export.cmd_import_export(args, settings) == 0
    writer.join(timeout=10)

    async def count(services: Services) -> int:
        rows = await services.store.run("memory/known_ids", graph=graph, ids=_ids(lines))
        return len(rows[0]["ids"])

    assert with_services(count, settings) == 2


def _malformed(lines: list[bytes]) -> dict[str, tuple[list[bytes], int]]:
    """Malformed copies of a genuine export, trailers sealed again: (the file, the line to be named)."""
    body = lines[:-1]
    i = next(n for n, line in enumerate(body) if json.loads(line)["type"] == "memory")
    memory = body[i]
    record = json.loads(memory)
    first_hash = memory.replace(b'"hash":"', b'"hash":"0x' + b"ab" * 32 + b'","hash":"', 1)

    def at(raw: bytes) -> list[bytes]:  # sealed with the genuine counts (seal reads every line)
        changed = [*body[:i], raw, *body[i + 1 :]]
        end = json.loads(lines[-1]) | {"sha256": hashlib.sha256(b"".join(changed)).hexdigest()}
        return [*changed, json.dumps(end).encode() + b"\n"]

    return {
        "a key twice": (at(first_hash), i + 1),
        "CR LF": (at(memory[:-1] + b"\r\n"), i + 1),
        "a line of 10 MB": (at(memory[:-2] + b" " * 10_000_000 + b"}\n"), i + 1),
        "nested 100,000 deep": (at(b"[" * 100_000 + b"]" * 100_000 + b"\n"), i + 1),
        "a negative position": (at(json.dumps(record | {"seq": -1}).encode() + b"\n"), i + 1),
        "a hostile type": (at(memory.replace(b'"type":"memory"', b'"type":"\\u001b[2J\\u202e"')), i + 1),
    }


def test_import_export_refuses_a_malformed_export_with_exit_2_naming_the_line_and_writes_nothing(
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import argparse

    from graphsvc.app import Services
    from graphsvc.cli import export as cli_export
    from graphsvc.cli.common import with_services

    _, lines = two_tenants

    async def nodes(services: Services) -> int:
        rows, _, _ = await services.store._driver.execute_query(  # pyright: ignore[reportPrivateUsage]
            "MATCH (n) WHERE n.graph = $g OR (n:GraphState AND n.name = $g) RETURN count(n) AS n",
            g=graph,
            database_=services.store._database,  # pyright: ignore[reportPrivateUsage]
        )
        return rows[0]["n"]

    for what, (forged, line) in _malformed(lines).items():
        path = tmp_path / "malformed.jsonl"
        path.write_bytes(b"".join(forged))
        args = argparse.Namespace(
            file=path, graph=None, graph_tag=None, known_root=[], bundle=[], no_chain=False
        )
        assert cli_export.cmd_import_export(args, settings) == 2, what
        shown = capsys.readouterr()
        assert f"line {line}: [" in shown.err and "Traceback" not in shown.out + shown.err, what
        assert all(c == "\n" or c.isprintable() for c in shown.out + shown.err), what
        assert with_services(nodes, settings) == 0, what


def _ids(lines: list[bytes]) -> list[str]:
    return [r["id"] for r in map(json.loads, lines) if r["type"] == "memory"]


class _Refusing:
    """The real store, but the `nth` page of one statement reaches Neo4j as it would refuse it, or a row
    short (a seam a failure the file's rules do not know comes through); `meanwhile` runs as the import
    reaches its relations (its batches and entities written, its memories not yet)."""

    def __init__(
        self,
        store: GraphStore,
        statement: str,
        how: str,
        nth: int = 1,
        meanwhile: Callable[[], Any] | None = None,
    ):
        self._store, self._statement, self._how, self._nth = store, statement, how, nth
        self._meanwhile = meanwhile

    def params(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        if name != self._statement:
            return params
        self._nth -= 1
        if self._nth:
            return params
        rows = [dict(r) for r in params["rows"]]
        if self._how == "short":  # a row that never reaches Neo4j: the page is written short
            del rows[0]
        elif "memory" in rows[0]:  # a value Neo4j cannot hold as a property: it refuses the statement
            rows[0]["memory"] = rows[0]["memory"] | {"title": {"not": "a property value"}}
        else:
            rows[0]["hash"] = {"not": "a property value"}
        return params | {"rows": rows}

    async def run(self, name: str, **params: Any) -> Any:
        if name == "import/relations" and self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            await meanwhile()
        return await self._store.run(name, **self.params(name, params))

    async def write_transaction(self, work: Any, *, bounded: bool = True) -> Any:
        async def refusing(tx: Any) -> Any:
            return await work(_RefusingTx(tx, self))

        return await self._store.write_transaction(refusing, bounded=bounded)


class _RefusingTx:
    def __init__(self, tx: Any, store: _Refusing):
        self._tx, self._store = tx, store

    async def run(self, name: str, **params: Any) -> Any:
        return await self._tx.run(name, **self._store.params(name, params))


async def _left(store: GraphStore, graph: str, lines: list[bytes]) -> dict[str, Any]:
    """What is left in `graph` of the file `lines`, and the graph's state."""
    records = [json.loads(line) for line in lines[:-1]]
    ids = [r["id"] for r in records if r["type"] in ("memory", "tombstone", "entity")]
    roots = [r["root"] for r in records if r["type"] == "batch"]
    found, _, _ = await store._driver.execute_query(
        "OPTIONAL MATCH (s:GraphState {name: $g}) "
        "RETURN COLLECT { MATCH (n {graph: $g}) WHERE n.id IN $ids RETURN n.id } AS records, "
        "COLLECT { MATCH (b:Batch) WHERE b.root IN $roots RETURN b.status } AS batches, "
        "s {.importing, .seq, .graphTag, .forgottenSeqs} AS state",
        g=graph,
        ids=ids,
        roots=roots,
        database_=store._database,
    )
    return found[0].data()


@pytest.mark.parametrize(
    ("statement", "how", "nth"), [("import/tombstones", "refused", 1), ("import/memories", "short", 2)]
)
async def test_a_page_the_store_refuses_takes_the_import_back_and_the_graph_then_imports_the_file(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
    statement: str,
    how: str,
    nth: int,
) -> None:
    other = graph + "-other"
    await _other_tenant(memory, anchoring, other)
    await fill(memory, anchoring, graph)  # three batches, an update, forgets, a memory pending
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    await wipe(store, graph)
    before = await _snapshot(store, other)
    with pytest.raises(ExportRejected) as refused:
        await importer(_Refusing(store, statement, how, nth), settings, memory).run(lines)
    [finding] = refused.value.findings
    kind = {"import/tombstones": "tombstone", "import/memories": "memory"}[statement]
    assert finding.rule == "write" and json.loads(lines[(finding.line or 0) - 1])["type"] == kind
    left = await _left(store, graph, lines)
    assert left == {
        "records": [],
        "batches": [],
        "state": {"importing": None, "seq": 0, "graphTag": None, "forgottenSeqs": None},
    }
    assert await count_nodes(store, graph) == 0  # no memory, entity, batch or tombstone of the graph
    assert await term_stats(store, graph) == await recounted(store, graph)  # what was added, taken back
    assert await _snapshot(store, other) == before and await _stray(store, graph, other) == 0
    done = await importer(store, settings, memory).run(lines)  # the same file, whole this time
    memories = sum(json.loads(line)["type"] == "memory" for line in lines)
    assert (done.memories, done.resumed, done.final) == (memories, False, True)
    assert audited(lines, settings).exit_code == 0
    assert await term_stats(store, graph) == await recounted(store, graph)
    assert comparable(await export(store, settings, graph, tmp_path / "again.jsonl")) == comparable(lines)


async def test_an_import_taken_back_keeps_what_an_agent_remembered_meanwhile_which_no_batch_sealed(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
    tmp_path: Path,
) -> None:
    other, lines = two_tenants
    before = await _snapshot(store, other)
    said: dict[str, Any] = {}

    async def an_agent_writes() -> None:  # the file's batches and entities are in the graph by now
        stored = await memory.remember(
            RememberInput(text="an agent's note on MON", entities=[MON], graph=graph)
        )
        said["id"], said["anchor"] = stored.id, await anchoring.anchor_now(GraphInput(graph=graph))

    with pytest.raises(ExportRejected):
        refusing = _Refusing(store, "import/memories", "refused", meanwhile=an_agent_writes)
        await importer(refusing, settings, memory).run(lines)
    assert said["anchor"].status == "nothing_pending"  # no batch is sealed for a graph being imported
    left = await _left(store, graph, lines)
    last = json.loads(lines[0])["lastSeq"]
    assert left["records"] == ["Token:MON"]  # the file's entity the agent's memory reaches, and no more
    assert left["batches"] == []
    assert left["state"] == {
        "importing": None,
        "seq": last + 1,
        "graphTag": None,
        "forgottenSeqs": list(range(1, last + 1)),
    }
    recalled = await memory.recall(RecallInput(query="agent note MON", graph=graph))
    assert [m.id for m in recalled.memories] == [said["id"]]
    assert await term_stats(store, graph) == await recounted(store, graph)
    assert await _snapshot(store, other) == before and await _stray(store, graph, other) == 0
    anchored = await anchoring.anchor_now(GraphInput(graph=graph))  # the import over: the agent's turn
    assert anchored.status == "anchored"
    again = await export(store, settings, graph, tmp_path / "after.jsonl")
    report = audited(again, settings)
    assert report.exit_code == 0 and report.checked.memories == 1, audit_render.render(report)


async def test_a_relation_property_neo4j_cannot_hold_is_refused_by_the_check_before_anything_is_written(
    store: GraphStore,
    memory: MemoryService,
    settings: Settings,
    graph: str,
    two_tenants: tuple[str, list[bytes]],
) -> None:
    """An integer past 64 bits passed every rule and failed the import's write (the driver cannot pack it)."""
    _, lines = two_tenants
    for value in (2**63, [2**64], -(2**63) - 1):
        with pytest.raises(ExportRejected) as refused:
            await importer(store, settings, memory).run(_forge(lines, "relation", _prop("n", value)))
        assert {f.rule for f in refused.value.findings} == {"schema"}, value
        assert await _snapshot(store, graph) == [], value


async def test_extracted_edges_are_exported_apart_audited_and_never_imported(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    stored = await memory.remember(RememberInput(text="Gas on Monad spiked", entities=[MON], graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    await store._driver.execute_query(  # what the extraction worker writes (cypher/extract/store)
        "MATCH (m:Memory {graph: $g, id: $id}) SET m.extractedWith = 'rules/1' "
        "CREATE (e:Entity:Topic {graph: $g, id: 'Topic:gas', label: 'Topic', name: 'gas', normName: 'gas', "
        "source: 'extracted'}) CREATE (m)-[:MENTIONS {id: 'edge_x', source: 'extracted', extractor: 'rules/1'}]->(e)",
        g=graph,
        id=stored.id,
        database_=store._database,
    )
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    records = [json.loads(line) for line in lines]
    assert {"source": "extracted"} in [r["props"] for r in records if r["type"] == "entity"]
    report = audited(lines, settings)
    assert report.exit_code == 0 and report.checked.extracted == 1, audit_render.render(report)
    await wipe(store, graph)
    await importer(store, settings, memory).run(lines)
    edges, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g})-[r:MENTIONS]->(e:Entity) RETURN e.id AS to, r.source AS source, "
        "m.extractedWith AS read",
        g=graph,
        database_=store._database,
    )
    assert [(r["to"], r["source"], r["read"]) for r in edges] == [("Token:MON", "agent", None)]
    made, _, _ = await store._driver.execute_query(
        "MATCH (e:Entity {graph: $g}) RETURN e.id AS id, e.source AS source, e.normName AS norm ORDER BY e.id",
        g=graph,
        database_=store._database,
    )
    assert [tuple(r.values()) for r in made] == [
        ("Token:MON", None, "mon"),
        ("Topic:gas", "extracted", "gas"),
    ]


async def test_a_flood_of_line_feeds_through_a_pipe_is_refused_in_constant_memory_and_writes_nothing(
    store: GraphStore, memory: MemoryService, settings: Settings, graph: str, tmp_path: Path
) -> None:
    """Issue 43: 50 MB of line feeds through a pipe took an import to 2.3 GB, still reading."""
    fifo = tmp_path / "flood"
    os.mkfifo(fifo)
    megabytes = 50

    def feed() -> None:
        with fifo.open("wb") as pipe:  # blocks until the import opens it
            for _ in range(megabytes):
                pipe.write(b"\n" * 1_000_000)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    tracemalloc.start()
    try:
        with fifo.open("rb") as source, pytest.raises(ExportRejected) as refused:
            await importer(store, settings, memory).run(bounded_lines(source), graph)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    writer.join(timeout=10)
    assert refused.value.unreadable and refused.value.rules == {"json", "truncated"}
    assert len(refused.value.findings) + refused.value.more == megabytes * 1_000_000 + 1
    assert peak < 16_000_000, peak
    assert await count_nodes(store, graph) == 0 and await _snapshot(store, graph) == []
