"""Forgets are anchored and positions bound: forgetting an anchored memory makes a forget record that
the graph's next batch holds, and every batch carries a manifest of its members' positions (and, in the
graph's first, the tombstones from before forget records). A forget that did not happen, a tombstone
passed off as older, or two positions swapped fail the audit; a graph whose forgets are not anchored
yet is not exported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphsvc.config import Settings
from graphsvc.domain.manifest import manifest_leaf
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.errors import Conflict
from graphsvc.exports import render as audit_render
from graphsvc.exports.chain_reads import Pins
from graphsvc.exports.format import seal
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.exports import anchoring, audited, export, fill

pytestmark = pytest.mark.neo4j
__all__ = ["anchoring"]  # a fixture of this module's tests
Record = dict[str, Any]


def _records(lines: list[bytes]) -> list[Record]:
    return [json.loads(line) for line in lines[:-1]]


def _sealed(records: list[Record]) -> list[bytes]:
    return seal([json.dumps(r).encode() + b"\n" for r in records])


def _tombstoned(records: list[Record], memory: Record, forget: Record | None) -> list[Record]:
    """`memory` turned into a tombstone (id, hash, position and proof kept, content gone)."""
    tombstone = {
        "type": "tombstone",
        "id": memory["id"],
        "hash": memory["hash"],
        "seq": memory["seq"],
        "forgottenAt": "2026-12-05T00:00:00.000Z",
        "batch": memory["batch"],
        "proof": memory["proof"],
    } | ({"forget": forget} if forget else {})
    kept = [r for r in records if r is not memory]
    tombstones = sorted([r for r in kept if r["type"] == "tombstone"] + [tombstone], key=lambda r: r["id"])
    return [r for r in kept if r["type"] != "tombstone"] + tombstones


@pytest.fixture
async def filled(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> list[bytes]:
    await fill(memory, anchoring, graph)
    return await export(store, settings, graph, tmp_path / "g.jsonl")


def _rules(lines: list[bytes], settings: Settings) -> set[str]:
    report = audited(lines, settings, Pins(contract=settings.chain.contract))
    assert report.exit_code == 1, audit_render.render(report)
    return {f.rule for f in report.findings}


async def test_a_genuine_export_binds_its_forgets_and_its_positions(
    filled: list[bytes], settings: Settings
) -> None:
    report = audited(filled, settings)
    c = report.checked
    assert report.exit_code == 0, audit_render.render(report)
    assert (c.manifests, c.forgets, c.before, c.positions_bound, c.anchored) == (3, 1, 0, 5, 5)
    batches = [r for r in _records(filled) if r["type"] == "batch"]
    assert [b["count"] for b in batches] == [3 + 1, 1 + 1, 2 + 1 + 1]  # memories, forget records, manifest
    checks = {k: ok for k, ok, _ in audit_render.checks(report)}
    assert checks["forgets"] is True and checks["positions"] is True


async def test_a_forget_that_did_not_happen_fails_however_it_is_dressed(
    filled: list[bytes], settings: Settings
) -> None:
    records = _records(filled)
    anchored = next(r for r in records if r["type"] == "memory" and r["batch"])
    real = next(r for r in records if r["type"] == "tombstone")
    # passed off as a tombstone from before forget records: the graph's first manifest lists none
    assert "manifest" in _rules(_sealed(_tombstoned(records, anchored, None)), settings)
    # given the forget record of another tombstone's batch and proof: it does not fold
    borrowed = dict(real["forget"])
    assert "forget" in _rules(_sealed(_tombstoned(_records(filled), anchored, borrowed)), settings)
    # a real forget record dropped (the tombstone passed off as older)
    del real["forget"]
    assert {"manifest", "members"} <= _rules(_sealed(records), settings)


async def test_two_memories_of_different_batches_swapping_positions_fail_at_the_manifests(
    filled: list[bytes], settings: Settings
) -> None:
    records = _records(filled)
    memories = [r for r in records if r["type"] == "memory" and r["batch"]]
    first, last = memories[0], memories[-1]
    assert first["batch"] != last["batch"]
    first["seq"], last["seq"] = last["seq"], first["seq"]
    i, j = records.index(first), records.index(last)
    records[i], records[j] = records[j], records[i]  # the lines too, so the order rule holds
    assert "manifest" in _rules(_sealed(records), settings)


async def test_a_graph_is_not_exported_while_a_forget_waits_and_its_batch_holds_the_record(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    kept = await memory.remember(RememberInput(text="kept", graph=graph))
    gone = await memory.remember(RememberInput(text="forgotten after it was anchored", graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.forget(IdInput(id=gone.id, graph=graph))
    with pytest.raises(Conflict):
        await export(store, settings, graph, tmp_path / "g.jsonl")
    recorded = await anchoring.anchor_now(GraphInput(graph=graph))  # a batch of a forget record alone
    assert (recorded.status, recorded.count) == ("anchored", 0)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    report = audited(lines, settings)
    assert report.exit_code == 0 and report.checked.forgets == 1, audit_render.render(report)
    assert kept.id in {r.get("id") for r in _records(lines)}


async def test_tombstones_from_before_forget_records_are_listed_by_the_first_manifest_and_no_other(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    old = await memory.remember(RememberInput(text="forgotten by an older graphsvc", graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.forget(IdInput(id=old.id, graph=graph))
    await store._driver.execute_query(  # as an older graphsvc left it: no forget record, none waiting
        "MATCH (t:Tombstone {graph: $g}) REMOVE t:Pending WITH t MATCH (b:Batch {graph: $g}) "
        "REMOVE b.manifestProof, b.manifestHash",
        g=graph,
        database_=store._database,
    )
    later = await memory.remember(RememberInput(text="after the upgrade", graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))  # the graph's first manifest lists the tombstone
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g, id: $id})-[:IN_BATCH]->(b:Batch) RETURN m.seq AS seq, b.manifestHash AS h",
        g=graph,
        id=later.id,
        database_=store._database,
    )
    [row] = records
    assert row["h"] == manifest_leaf(graph, [(row["seq"], later.id)], [], [old.id])[0]
