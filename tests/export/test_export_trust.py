"""Completeness is bound outside the file: a de-anchored forgery (batches and tombstones removed, the
graph tag nulled or made fresh, every memory marked unanchored, a text rewritten and rehashed) fails the
audit and is refused by import whenever the auditor brings any trust root of the graph (its tag, a root
or a proof bundle); without one, the verdict claims nothing complete. An import confirms every batch
on chain, or (--no-chain) imports none as final."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphsvc.config import Settings
from graphsvc.domain.hashing import envelope_hash
from graphsvc.domain.merkle import memory_leaf
from graphsvc.domain.models import IdInput
from graphsvc.exports import render as audit_render
from graphsvc.exports.chain_reads import Pins
from graphsvc.exports.format import seal
from graphsvc.exports.importer import ExportRejected
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import count_nodes
from tests.exports import anchoring, audited, export, fill, importer, wipe

pytestmark = pytest.mark.neo4j
__all__ = ["anchoring"]  # a fixture of this module's tests
Record = dict[str, Any]


def _records(lines: list[bytes]) -> list[Record]:
    return [json.loads(line) for line in lines[:-1]]


def _sealed(records: list[Record]) -> list[bytes]:
    return seal([json.dumps(r).encode() + b"\n" for r in records])


def _deanchored(lines: list[bytes], tag: str | None) -> list[bytes]:
    """Every batch and tombstone gone, the tag `tag`, every memory unanchored, one text rewritten and
    rehashed, the counts made to agree: a file consistent with itself that the chain cannot place."""
    records = [r for r in _records(lines) if r["type"] not in ("batch", "tombstone")]
    header, memories = records[0], [r for r in records if r["type"] == "memory"]
    header["graphTag"] = tag
    header["forgottenUnanchored"] = sorted(
        {*header["forgottenUnanchored"], *(r["seq"] for r in _records(lines) if r["type"] == "tombstone")}
    )
    for memory in memories:
        memory["batch"], memory["proof"] = None, []
    memories[0]["envelope"]["text"] = "Pool MON/USDC-A is deep after 18:00"
    memories[0]["hash"] = envelope_hash(memories[0]["envelope"])
    return _sealed(records)


@pytest.fixture
async def genuine(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> dict[str, Any]:
    ids = await fill(memory, anchoring, graph)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    bundle = await anchoring.bundle(IdInput(id=ids["anchored"][0], graph=graph))
    return {"lines": lines, "tag": _records(lines)[0]["graphTag"], "bundle": bundle}


async def test_a_deanchored_forgery_fails_the_audit_against_every_trust_root_and_claims_nothing_without(
    settings: Settings, genuine: dict[str, Any]
) -> None:
    lines, tag, bundle = genuine["lines"], genuine["tag"], genuine["bundle"]
    for forged_tag in (None, "0x" + "5a" * 32):
        forged = _deanchored(lines, forged_tag)
        unpinned = audited(forged, settings)
        shown = audit_render.render(unpinned)
        assert unpinned.exit_code == 0 and unpinned.complete is None, shown
        assert "complete and unchanged" not in shown and "Audited" not in shown, shown
        assert audit_render.as_json(unpinned)["memories"]["anchored"] == 0
        for pins in (
            Pins(graph_tag=tag),
            Pins(roots=(bundle.root,)),
            Pins(bundles=(bundle,)),
            Pins(contract=settings.chain.contract, graph_tag=tag),
        ):
            report = audited(forged, settings, pins)
            assert report.exit_code == 1, (pins, audit_render.render(report))
            assert {"pin", "missing-batch"} <= {f.rule for f in report.findings}, audit_render.render(report)
    honest = audited(lines, settings, Pins(bundles=(bundle,)))
    assert honest.exit_code == 0 and honest.complete is True, audit_render.render(honest)
    assert audit_render.verdict(honest).startswith(
        "✓ Audited"
    ) and "complete and unchanged" in audit_render.verdict(honest)
    sources = {t["name"]: t["source"] for t in audit_render.as_json(honest)["trustRoots"]}
    assert sources == {"contract": "bundle", "graph tag": "chain"}


async def test_import_refuses_a_deanchored_forgery_given_a_trust_root_and_writes_nothing(
    store: GraphStore, memory: MemoryService, settings: Settings, graph: str, genuine: dict[str, Any]
) -> None:
    await wipe(store, graph)
    forged = _deanchored(genuine["lines"], None)
    pins = Pins(contract=settings.chain.contract, graph_tag=genuine["tag"])
    with pytest.raises(ExportRejected) as refused:
        await importer(store, settings, memory, pins).run(forged)
    assert {"pin", "missing-batch"} <= {f.rule for f in refused.value.findings}
    assert await count_nodes(store, graph) == 0


async def test_import_refuses_a_batch_never_anchored_and_without_the_chain_imports_nothing_as_final(
    store: GraphStore, memory: MemoryService, settings: Settings, graph: str, genuine: dict[str, Any]
) -> None:
    await wipe(store, graph)
    records = _records(genuine["lines"])
    waiting = next(r for r in records if r["type"] == "memory" and r["batch"] is None)
    last = [r for r in records if r["type"] == "batch"][-1]
    leaf = memory_leaf(waiting["id"], bytes.fromhex(waiting["hash"][2:]))  # a one-leaf tree: root = leaf
    made = last | {
        "root": "0x" + leaf.hex(),
        "seq": last["seq"] + 1,
        "count": 1,
        "graphTag": None,
        "prevRoot": None,
    }
    made.pop("manifestProof")  # a batch as sealed before manifests
    waiting["batch"] = made["root"]
    records.insert(records.index(last) + 1, made)
    forged = _sealed(records)
    assert audited(forged, settings).exit_code == 1  # the audit: not anchored
    with pytest.raises(ExportRejected) as refused:
        await importer(store, settings, memory).run(forged)
    assert "anchored" in {f.rule for f in refused.value.findings}
    assert await count_nodes(store, graph) == 0
    done = await importer(store, settings, memory, chain=False).run(genuine["lines"])
    assert not done.final and done.said == []
    statuses, _, _ = await store._driver.execute_query(
        "MATCH (b:Batch {graph: $g}) RETURN collect(DISTINCT b.status) AS s",
        g=graph,
        database_=store._database,
    )
    assert statuses[0]["s"] == ["INCLUDED"]  # on chain per the file: not final until this server finds it so


async def test_anchor_now_and_graph_tag_publish_the_tag_an_auditor_pins(
    store: GraphStore, memory: MemoryService, anchoring: AnchoringService, graph: str
) -> None:
    from graphsvc.domain.models import GraphInput, RememberInput

    await memory.remember(RememberInput(text="a note to anchor", graph=graph))
    anchored = await anchoring.anchor_now(GraphInput(graph=graph))
    [row] = await store.run("export/graph_tag", graph=graph)
    assert anchored.graphTag is not None and anchored.graphTag == row["graphTag"]
