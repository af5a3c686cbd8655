"""Tenant walls: no name a tenant chooses reaches graphsvc's own nodes, another graph, or the workers.

A seeded fuzzer of names: every string field a tenant controls in remember, remember_batch,
store_event, link, recall and explore is tried with every label, relationship type and property key
graphsvc's statements use (domain/reserved.py, and every key cypher/ names), and with the names of the
other graphs, over REST and MCP with a token of one graph, on a server whose embedding and extraction
workers run; every name an import takes goes through the importer. Afterwards nothing outside the
writer's graph changed, no entity carries a label graphsvc reserves, every worker is well and has
drained, and no answer was a server error.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphsvc.config import AuthSettings, EmbeddingsSettings, ExtractionSettings, Settings
from graphsvc.domain.models import RESERVED_PROPS, RememberInput
from graphsvc.domain.reserved import ENTITY_LABELS, NAMES, RELATION_KEYS
from graphsvc.exports.importer import ExportRejected
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.services.index.term_fold import fold
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import REPO, _serve
from tests.exports import export, importer, wipe
from tests.transports import Caller, ToolFailure, connect

pytestmark = pytest.mark.neo4j

SEED = 43
# Every property key a statement of cypher/ names (`n.key`, `{key: ...}`): what a tenant's key must not
# turn into on graphsvc's nodes.
_CYPHER = "\n".join(path.read_text() for path in sorted((REPO / "cypher").rglob("*.cypher")))
_CYPHER = re.sub(r"//[^\n]*|'[^']*'", "", _CYPHER)
KEYS = sorted(
    set(re.findall(r"\b[a-z]\w*\.([A-Za-z_]\w*)", _CYPHER)) | set(re.findall(r"[{,]\s*(\w+):\s", _CYPHER))
)
LABELS = sorted(NAMES | ENTITY_LABELS)
Case = tuple[str, Callable[[str], dict[str, Any]]]


def _entity(label: str = "Person", name: str = "Ada") -> dict[str, str]:
    return {"label": label, "name": name}


# (tool, arguments with the name in one field): fields whose value becomes a label or a type
LABEL_FIELDS: list[Case] = [
    ("remember", lambda n: {"text": "a label", "entities": [_entity(label=n)]}),
    ("remember_batch", lambda n: {"items": [{"text": "a label", "entities": [_entity(label=n)]}]}),
    ("link", lambda n: {"from": _entity(label=n), "type": "KNOWS", "to": _entity()}),
    ("link", lambda n: {"from": _entity(), "type": "KNOWS", "to": _entity(label=n, name="Bo")}),
]
TYPE_FIELDS: list[Case] = [
    (
        "remember",
        lambda n: {
            "text": "a type",
            "entities": [_entity(), _entity(name="Bo")],
            "relations": [{"from": "Ada", "type": n, "to": "Bo"}],
        },
    ),
    ("link", lambda n: {"from": _entity(), "type": n, "to": _entity(name="Bo")}),
]
KEY_FIELDS: list[Case] = [
    ("link", lambda n: {"from": _entity(), "type": "KNOWS", "to": _entity(name="Bo"), "props": {n: 1}}),
    ("remember", lambda n: {"text": "a key", "data": {n: "x", "nested": {n: [n]}}}),
    ("store_event", lambda n: {"event_kind": "fact", "payload": {n: n}, "context_id": "k:x"}),
]
VALUE_FIELDS: list[Case] = [
    ("remember", lambda n: {"text": n, "tags": [n], "entities": [_entity(name=n)]}),
    ("remember", lambda n: {"text": "a name", "entities": [_entity(label="Context", name=n)]}),
    ("store_event", lambda n: {"event_kind": "fact", "payload": n, "context_id": f"{n}:{n}"}),
    ("store_event", lambda n: {"event_kind": "fact", "payload": "x", "reinforces": [f"t:{n}"]}),
    ("link", lambda n: {"from": _entity(name=n), "type": "KNOWS", "to": _entity(), "props": {"p": n}}),
    ("recall", lambda n: {"query": n, "entity": n}),
    ("recall", lambda n: {"entity": f"{n}:{n}", "hops": 3}),
    ("explore", lambda n: {"start": [n, f"{n}:{n}", f"Entity:{n}"], "types": [n.upper()], "maxDepth": 3}),
    ("retrieve_memories", lambda n: {"query": n, "context_ids": [f"{n}:{n}"]}),
    ("list_contexts", lambda n: {"context_type": n, "context_name": n}),
]


@pytest.fixture(scope="module")
def walled(settings: Settings) -> Iterator[str]:
    """graphsvc with auth on and both workers running."""
    served = settings.model_copy(
        update={
            "auth": AuthSettings(required=True),
            "embeddings": EmbeddingsSettings(enabled=True, model="all-MiniLM-L6-v2", interval_s=0.2),
            "extraction": ExtractionSettings(enabled=True, interval_s=0.2),
        }
    )
    yield from _serve(served)


async def _graphs(store: GraphStore, *graphs: str) -> list[str]:
    """Each graph's nodes (its own, its state, statistics and deltas) with their labels, properties and
    degree, its pending statistics folded first; and graphsvc's own singletons (the anchoring state's
    batch count, the schema's mark; not the lease, which a server's workers take and give back)."""
    for graph in graphs:
        await fold(store, graph)
    records, _, _ = await store._driver.execute_query(
        "MATCH (n) WHERE n.graph IN $graphs OR (n.graph IS NULL AND (n.name IN $graphs OR n.graphName IN $graphs)) "
        "RETURN [labels(n), properties(n), COUNT { (n)--() }] AS node "
        "UNION ALL MATCH (s) WHERE s:AnchorState OR s:GraphsvcSchema RETURN [labels(s), s {.id, .seq, .version}] AS node",
        graphs=list(graphs),
        database_=store._database,
    )
    return sorted(json.dumps(r["node"], sort_keys=True) for r in records)


async def _planted(store: GraphStore) -> int:
    records, _, _ = await store._driver.execute_query(
        "MATCH (e:Entity) WHERE any(l IN labels(e) WHERE l IN $names AND l <> 'Entity') RETURN count(e) AS n",
        names=sorted(NAMES),
        database_=store._database,
    )
    return records[0]["n"]


async def _backlog(store: GraphStore, graphs: list[str]) -> int:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory) WHERE m.graph IN $graphs AND (m:Unembedded OR m:Unextracted) RETURN count(m) AS n",
        graphs=graphs,
        database_=store._database,
    )
    return records[0]["n"]


async def _drained(store: GraphStore, graphs: list[str], within_s: float = 120) -> None:
    async with asyncio.timeout(within_s):
        while await _backlog(store, graphs):
            await asyncio.sleep(0.2)


def _cases(rng: random.Random, others: list[str]) -> list[tuple[str, str, dict[str, Any], bool, str]]:
    """(transport, tool, arguments, whether the name must be refused as reserved, the name), shuffled."""
    names = [*LABELS, *others]
    cases = [(tool, make(n), n in NAMES, n) for tool, make in LABEL_FIELDS for n in names]
    cases += [(tool, make(n), n in NAMES, n) for tool, make in TYPE_FIELDS for n in names if n.isupper()]
    cases += [(tool, make(n), False, n) for tool, make in KEY_FIELDS for n in KEYS]
    cases += [(tool, make(n), False, n) for tool, make in VALUE_FIELDS for n in names]
    rng.shuffle(cases)
    transports = ("rest", "mcp-streamable-http")
    return [
        ("rest" if tool == "remember_batch" else rng.choice(transports), tool, args, reserved, name)
        for tool, args, reserved, name in cases
    ]


async def _tried(call: Caller, tool: str, args: dict[str, Any], name: str) -> str:
    """What came of one case: "ok", "refused" (invalid_input naming the name; remember_batch refuses its
    item alone), "server error", or another failure's code."""
    try:
        reply = await call(tool, args)
    except ToolFailure as failure:
        if (failure.status or 400) >= 500 or failure.code in ("internal", "unavailable"):
            return "server error"
        return "refused" if failure.code == "invalid_input" and name in failure.detail else failure.code
    receipts = reply.data.get("receipts", [])
    return "refused" if any(r["status"] == "rejected" and name in r["error"] for r in receipts) else "ok"


async def test_no_name_a_tenant_chooses_reaches_another_graph_graphsvcs_nodes_or_the_workers(
    walled: str, store: GraphStore, memory: MemoryService
) -> None:
    mine, theirs, unused = (f"{p}-{secrets.token_hex(4)}" for p in ("a", "b", "c"))
    access = AccessService(store, required=True)
    token = (await access.create(mine, [READ, WRITE]))[0]
    their_token = (await access.create(theirs, [READ, WRITE]))[0]
    headers = {"authorization": f"Bearer {token}"}
    async with connect("rest", walled, {"authorization": f"Bearer {their_token}"}) as call:
        for text in ("Ada met Bo in Lisbon", "the pool MON/USDC-A is thin"):
            await call("remember", {"text": text, "entities": [_entity(name="Ada")]})
    await _drained(store, [theirs])
    before = await _graphs(store, theirs, unused)
    cases = _cases(random.Random(SEED), [theirs, unused, "default"])
    limit = asyncio.Semaphore(8)
    async with (
        connect("rest", walled, headers) as rest,
        connect("mcp-streamable-http", walled, headers) as mcp,
    ):

        async def tried(transport: str, tool: str, args: dict[str, Any], name: str) -> str:
            async with limit:
                return await _tried(rest if transport == "rest" else mcp, tool, args, name)

        outcomes = await asyncio.gather(*(tried(*case[:3], case[4]) for case in cases))
    server_errors = [case for case, outcome in zip(cases, outcomes, strict=True) if outcome == "server error"]
    misread = [
        case for case, outcome in zip(cases, outcomes, strict=True) if case[3] and outcome != "refused"
    ]
    print(f"name fuzzer: {len(cases)} cases, {collections.Counter(outcomes)}")  # the closing note's figures
    assert server_errors == []
    assert misread == []
    await _drained(store, [mine, theirs])
    assert await _planted(store) == 0
    after = await _graphs(store, theirs, unused)
    assert (sorted(set(after) - set(before)), sorted(set(before) - set(after))) == ([], [])
    async with httpx.AsyncClient(base_url=walled, timeout=10) as http:
        health = (await http.get("/health")).json()
    assert [health["workers"][w]["ok"] for w in ("embeddings", "extraction")] == [True, True], health


async def test_an_entity_named_like_graphsvcs_state_is_refused_and_the_graph_it_names_keeps_its_own(
    secured_url: str, store: GraphStore
) -> None:
    """The takeover the issue found: an entity `GraphState:<a graph not used yet>` would have become that
    graph's state, and forgetting it would have deleted the state."""
    attacker, victim = (f"{p}-{secrets.token_hex(4)}" for p in ("a", "v"))
    access = AccessService(store, required=True)
    tokens = [(await access.create(g, [READ, WRITE]))[0] for g in (attacker, victim)]
    async with connect("rest", secured_url, {"authorization": f"Bearer {tokens[0]}"}) as call:
        for label in ("GraphState", "GraphStats", "TermDelta", "Unembedded", "Unextracted", "GraphsvcSchema"):
            with pytest.raises(ToolFailure) as refused:
                await call("remember", {"text": "planted", "entities": [_entity(label=label, name=victim)]})
            assert refused.value.status == 422 and label in refused.value.detail
    async with connect("rest", secured_url, {"authorization": f"Bearer {tokens[1]}"}) as call:
        ids = [(await call("remember", {"text": f"victim note {n}"})).data["id"] for n in range(4)]
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g}) RETURN m.id AS id, m.seq AS seq ORDER BY seq",
        g=victim,
        database_=store._database,
    )
    assert [(r["id"], r["seq"]) for r in records] == list(zip(ids, range(1, 5), strict=True))


async def test_entities_planted_before_labels_were_checked_are_mended_at_start_up(
    store: GraphStore, memory: MemoryService, graph: str
) -> None:
    """A database written before the check: an entity labelled GraphState that a second graph took for
    its state keeps being the entity, and the graph gets its state back as a node of its own."""
    victim = "v-" + secrets.token_hex(4)
    await store._driver.execute_query(
        "CREATE (:Entity:GraphState {graph: $g, id: 'GraphState:' + $v, label: 'GraphState', name: $v, "
        "seq: 7, graphTag: '0xabc'}), (:Entity:Unembedded {graph: $g, id: 'Unembedded:x', "
        "label: 'Unembedded', name: 'x', embedClaimUntil: 1})",
        g=graph,
        v=victim,
        database_=store._database,
    )
    await store.apply_schema()
    assert await _planted(store) == 0
    records, _, _ = await store._driver.execute_query(
        "MATCH (s:GraphState {name: $v}) RETURN labels(s) AS labels, s.seq AS seq, s.graphTag AS tag, "
        "COUNT { MATCH (e:Entity {graph: $g}) WHERE size(keys(e)) = 4 } AS entities",
        v=victim,
        g=graph,
        database_=store._database,
    )
    assert [r.data() for r in records] == [
        {"labels": ["GraphState"], "seq": 7, "tag": "0xabc", "entities": 2}
    ]
    made = await memory.remember(RememberInput(text="the victim writes again", graph=victim))
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $v, id: $id}) RETURN m.seq AS seq",
        v=victim,
        id=made.id,
        database_=store._database,
    )
    assert records[0]["seq"] == 8


def _mutated(lines: list[bytes], kind: str, change: Callable[[dict[str, Any]], None]) -> list[bytes]:
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("type") == kind:
            change(record)
        out.append(json.dumps(record).encode() + b"\n")
    return out


IMPORT_FIELDS: list[tuple[str, str, Callable[[str], Callable[[dict[str, Any]], None]]]] = [
    ("entity", "label", lambda n: lambda r: r.update(label=n, id=f"{n}:{r['name']}")),
    ("relation", "rel", lambda n: lambda r: r.update(rel=n)),
    ("relation", "props", lambda n: lambda r: r["props"].update({n: 1})),
    ("entity", "props", lambda n: lambda r: r["props"].update({n: 1})),
]


async def test_an_import_refuses_every_name_graphsvc_reserves_and_writes_nothing(
    store: GraphStore, settings: Settings, memory: MemoryService, graph: str, tmp_path: Path
) -> None:
    await memory.remember(
        RememberInput(
            text="Ada trades on MON",
            graph=graph,
            entities=[_entity(), _entity(label="Token", name="MON")],
            relations=[{"from": "Ada", "type": "TRADES_ON", "to": "MON"}],
        )
    )
    lines = await export(store, settings, graph, tmp_path / "export.jsonl")
    await wipe(store, graph)
    before = await _graphs(store, graph)
    imports = importer(store, settings, memory, chain=False)
    for kind, field, change in IMPORT_FIELDS:
        names = (
            sorted(NAMES) if field in ("label", "rel") else sorted(RELATION_KEYS - {"source", "writerToken"})
        )
        for name in names:
            if field == "rel" and not name.isupper():
                continue
            with pytest.raises(ExportRejected) as refused:
                imports.check(_mutated(lines, kind, change(name)), graph)
            assert any(f.rule in ("schema", "reserved") and name in str(f) for f in refused.value.findings), (
                kind,
                name,
            )
    with pytest.raises(ExportRejected) as refused:
        await imports.run(iter(_mutated(lines, "entity", IMPORT_FIELDS[0][2]("GraphState"))), graph)
    assert "GraphState" in str(refused.value)
    assert await _graphs(store, graph) == before
    assert await _planted(store) == 0


def test_the_docs_list_every_reserved_name_and_key() -> None:
    page = (REPO / "docs" / "tenants.md").read_text()
    listed = page.split("Reserved today (labels and types):")[1].split("`Context` stays open")[0]
    keys = page.split("Reserved relationship keys:")[1].split("\n\n")[0]
    assert set(re.findall(r"`(\w+)`", listed)) == NAMES
    assert set(re.findall(r"`(\w+)`", keys.split(".")[0])) == RESERVED_PROPS
