"""What the export tests share: a graph filled with batches, updates and forgets, its export, a clean
slate, an importer and an audit, on the session's Neo4j and local chain."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import Settings
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.exports import audit
from graphsvc.exports.chain_reads import Pins
from graphsvc.exports.export import Exporter
from graphsvc.exports.importer import ExportImporter, confirmation
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from graphsvc.verifier import Rpc
from tests.conftest import REPO

POOL, MON = {"label": "Pool", "name": "MON/USDC-A"}, {"label": "Token", "name": "MON"}


def contract(settings: Settings) -> AnchorContract:
    c = settings.chain
    assert c.rpc_url and c.private_key
    return AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)


@pytest.fixture
async def anchoring(store: GraphStore, settings: Settings) -> AsyncIterator[AnchoringService]:
    chain = contract(settings)
    yield AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
    await chain.close()


async def fill(memory: MemoryService, anchoring: AnchoringService, graph: str) -> dict[str, Any]:
    """Three batches, an update, a forgotten anchored memory, a memory forgotten before anchoring, and
    one memory not anchored yet."""

    async def remember(text: str, **more: Any) -> str:
        return (await memory.remember(RememberInput(text=text, graph=graph, **more))).id

    first = [
        await remember(
            "Pool MON/USDC-A is thin after 18:00",
            entities=[POOL, MON],
            relations=[{"from": "MON/USDC-A", "type": "QUOTES", "to": "MON"}],
            tags=["liquidity"],
        ),
        await remember("Swap of 10 MON failed", entities=[MON]),
        await remember("MON staking yields 7%", tags=["yield"]),
    ]
    await anchoring.anchor_now(GraphInput(graph=graph))
    update = await remember("MON staking yields 6% now", supersedes=[first[2]], tags=["yield"])
    dropped = await remember("a note forgotten before it was anchored")
    await memory.forget(IdInput(id=dropped, graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.forget(IdInput(id=first[1], graph=graph))  # anchored: leaves a tombstone
    third = [  # one with when it happened (envelope v3)
        await remember(f"Gas on Monad was {n} gwei at noon yesterday", tags=["gas"], occurredAt=when)
        for n, when in ((50, None), (52, "2026-05-07"))
    ]
    await anchoring.anchor_now(GraphInput(graph=graph))
    waiting = await remember("not anchored yet")
    return {"anchored": [first[0], first[2], update, *third], "waiting": waiting, "forgotten": first[1]}


async def export(store: GraphStore, settings: Settings, graph: str, path: Path) -> list[bytes]:
    exporter = Exporter(
        store, graph, chain_id=settings.chain.chain_id, contract=settings.chain.contract, page=2
    )
    lines = [line async for line in exporter.lines()]
    path.write_bytes(b"".join(lines))
    return lines


def comparable(lines: list[bytes]) -> list[dict[str, Any]]:
    """An export's records but its time and the trailer's digest (which covers it): two exports of one
    graph compare equal."""
    records = [json.loads(line) for line in lines]
    for r in records:
        r.pop("exportedAt", None)
        r.pop("sha256", None)
    return records


async def wipe(store: GraphStore, graph: str) -> None:
    """Every node of `graph`, its state and its term statistics (folded or not) gone."""
    await store._driver.execute_query(
        "MATCH (n) WHERE n.graph = $g OR ((n:GraphState OR n:GraphStats) AND n.name = $g) "
        "OR ((n:GraphTerm OR n:TermDelta) AND n.graphName = $g) DETACH DELETE n",
        g=graph,
        database_=store._database,
    )


def importer(
    store: Any, settings: Settings, memory: MemoryService, pins: Pins | None = None, *, chain: bool = True
) -> ExportImporter:
    """An importer as `graphsvc import-export` makes one: the chain part of the audit on the settings'
    chain, its contract pinned (`chain=False`: --no-chain)."""
    c = settings.chain
    assert c.rpc_url
    pins = pins or Pins(contract=c.contract)
    return ExportImporter(
        store,
        chain_id=c.chain_id,
        contract=c.contract,
        confirm=confirmation(c.rpc_url, pins) if chain else None,
        written=lambda g: memory.folder.written([g]),
        page=2,
    )


def audited(lines: list[bytes], settings: Settings, pins: Pins | None = None) -> audit.AuditReport:
    assert settings.chain.rpc_url
    return audit.audit(lines, Rpc(settings.chain.rpc_url), pins)


def forger_script() -> ModuleType:
    """scripts/forger.py as a module (a script, not a package of graphsvc)."""
    spec = importlib.util.spec_from_file_location("forger", REPO / "scripts" / "forger.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
