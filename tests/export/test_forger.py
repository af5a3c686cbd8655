"""The forger (scripts/forger.py, issue 37's target): a genuine export of an anchored graph (four
batches, an update, a forgotten anchored memory whose forget record is anchored, one forgotten before
anchoring, entities with relations and their properties, a memory the extraction worker read, an event with a typed link, a memory not anchored yet)
tampered every way the issue lists, each with the trailer sealed again, and audited with the auditor's
trust roots (the contract and the graph tag the operator publishes, or a root the auditor holds).
No tamper outside the documented limits may pass; each documented limit is named in docs/audit.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphsvc.config import Settings
from graphsvc.domain.locus import StoreEventInput
from graphsvc.domain.models import GraphInput, LinkInput, RememberInput
from graphsvc.extractor.rules import RulesExtractor
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import REPO
from tests.exports import MON, POOL, anchoring, export, fill, forger_script

pytestmark = pytest.mark.neo4j
__all__ = ["anchoring"]  # a fixture of this module's tests


async def _genuine(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    path: Path,
) -> list[bytes]:
    await fill(memory, anchoring, graph)  # three batches, an update, forgets, one memory pending
    await memory.link(
        LinkInput.model_validate(
            {"from": POOL, "type": "LISTS", "to": MON, "props": {"venue": "dex"}, "graph": graph}
        )
    )
    extraction = ExtractionService(store, RulesExtractor(), "ok")  # the worker, reading what is remembered
    try:
        reading = MemoryService(store, extraction=extraction)
        await reading.remember(RememberInput(text="Gas on Monad spiked at noon", graph=graph))
        for _ in range(100):  # bounded: each step stores a batch of the backlog, or finds it empty
            if not await extraction.extract_pending():
                break
    finally:
        await extraction.close()
    event = {"event_kind": "observation", "payload": "gas spiked again", "reinforces": ["topic:gas"]}
    await LocusService(memory, store).store_event(StoreEventInput.model_validate(event | {"graph": graph}))
    await anchoring.anchor_now(GraphInput(graph=graph))  # a fourth batch, after the forget record's
    await memory.remember(RememberInput(text="pending at export", graph=graph))
    return await export(store, settings, graph, path)


async def test_no_tamper_outside_the_documented_limits_passes_the_audit(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    forger = forger_script()
    lines = await _genuine(store, memory, anchoring, settings, graph, tmp_path / "g.jsonl")
    records = [json.loads(line) for line in lines]
    kinds = [r["type"] for r in records]
    assert kinds.count("batch") == 4 and kinds.count("tombstone") == 1 and kinds.count("relation") == 2
    assert any(e.get("source") == "extracted" for r in records if r["type"] == "memory" for e in r["edges"])
    [row] = await store.run("export/graph_tag", graph=graph)  # what the operator publishes
    first_root = next(r["root"] for r in records if r["type"] == "batch")
    assert settings.chain.rpc_url
    pins = forger.Pins(settings.chain.contract, row["graphTag"], (first_root,))
    outcomes = forger.forge(lines, settings.chain.rpc_url, pins)
    shown = forger.table(outcomes) + "\n" + forger.details(outcomes)
    print(shown)  # the closing note's table, in the test's output
    tried = [o for o in outcomes if o.exit_code is not None]
    assert not [o.tamper.name for o in outcomes if o.exit_code is None], shown  # all applicable
    assert {o.tamper.kind for o in tried} >= {*forger.CLASSES, *forger.LIMITS}, shown
    passed = [o.tamper.name for o in tried if o.passed and not o.tamper.limit]
    assert passed == [], shown
    caught = [o for o in tried if not o.tamper.limit]
    assert all(o.exit_code in (1, 2) for o in caught), shown  # never 3: the chain answered
    assert [o.tamper.name for o in caught if o.tamper.rule not in o.rules] == [], shown  # by its own rule
    # what a limit changes is unseen: each passes (else the limit is not one, and the docs overstate it)
    assert [o.tamper.name for o in tried if o.tamper.limit and not o.passed] == [], shown
    unreadable = {o.tamper.name for o in tried if o.exit_code == 2}
    assert unreadable == {
        "a key twice in a memory (the first forged)",
        "exportedAt not ISO",
        "exportedAt without a zone",
    }


def test_each_documented_limit_is_named_in_the_audit_page() -> None:
    forger = forger_script()
    page = (REPO / "docs" / "audit.md").read_text()
    section = page.split("## What the audit cannot show", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^- \*\*`([a-z-]+)`\*\*", section, re.MULTILINE))
    assert named == set(forger.LIMITS)
