"""Export a graph, import it into an empty graph on a second, fresh Neo4j server, audit it against the
chain alone: on real Neo4j servers and a real local chain, with updates, forgets and several batches. Removing any batch or memory from the
export fails the audit and names it; a tampered export is refused by import, which writes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphsvc.config import Settings
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.errors import Conflict
from graphsvc.exports import audit
from graphsvc.exports import render as audit_render
from graphsvc.exports.format import seal
from graphsvc.exports.importer import ExportRejected
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver
from graphsvc.verifier import Rpc, verify_bundle
from tests.conftest import TEST_DEADLINE_S, count_nodes, free_port, started_neo4j
from tests.exports import MON, anchoring, audited, comparable, contract, export, fill, importer, wipe

pytestmark = pytest.mark.neo4j
__all__ = ["anchoring"]  # a fixture of this module's tests


@dataclass(frozen=True)
class Server:
    """A second graphsvc store: another Neo4j server, empty when the module starts."""

    store: GraphStore
    memory: MemoryService
    anchoring: AnchoringService
    source: str


@pytest.fixture(scope="module")
async def second(tmp_path_factory: pytest.TempPathFactory, settings: Settings) -> AsyncIterator[Server]:
    """One more Neo4j server for the module (the same image as the session's), stopped after it."""
    with started_neo4j(tmp_path_factory.mktemp("second-neo4j"), {}) as target:
        driver = create_driver(target.uri, target.user, target.password, deadline_s=TEST_DEADLINE_S)
        store = GraphStore(driver, "neo4j", deadline_s=TEST_DEADLINE_S)
        await store.apply_schema()
        chain, memory = contract(settings), MemoryService(store)
        try:
            yield Server(
                store,
                memory,
                AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5),
                target.source,
            )
        finally:
            await memory.close()
            await chain.close()
            await store.close()


def _kinds(lines: list[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, line in enumerate(lines):
        yield i, json.loads(line)


def _sent(settings: Settings) -> int:
    """Transactions the service's key has sent on the chain (its nonce)."""
    from eth_account import Account

    from graphsvc.devstack.chain import DEV_PRIVATE_KEY

    assert settings.chain.rpc_url
    key = Account.from_key(DEV_PRIVATE_KEY).address
    return int(str(Rpc(settings.chain.rpc_url)("eth_getTransactionCount", key, "latest")), 16)


async def test_an_export_imported_into_a_fresh_second_server_audits_and_verifies_against_the_same_roots(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    second: Server,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    ids = await fill(memory, anchoring, graph)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds.count("batch") == 3 and kinds.count("tombstone") == 1 and kinds.count("memory") == 6
    good = audited(lines, settings)
    print(f"\n{len(lines)} lines, {sum(map(len, lines)):,} bytes\n{audit_render.render(good)}")
    assert good.exit_code == 0, audit_render.render(good)
    assert good.rpc_calls == 2 + 1 + 3 + 3  # chain id, code; lastRootOf; a linkOf and a receipt per batch

    there = second.store
    assert await count_nodes(there, graph) == 0  # another server: it has never seen the graph
    tampered = [line.replace(b"MON staking yields 7%", b"MON staking yields 9%") for line in lines]
    with pytest.raises(ExportRejected) as refused:
        await importer(there, settings, second.memory).run(tampered)
    assert {(f.rule, f.line) for f in refused.value.findings} >= {("hash", _line_of(lines, b"yields 7%"))}
    assert await count_nodes(there, graph) == 0  # nothing written

    sent = _sent(settings)
    done = await importer(there, settings, second.memory).run(lines)
    assert (done.memories, done.tombstones, done.batches, done.resumed) == (6, 1, 3, False)
    assert settings.chain.rpc_url
    rpc = Rpc(settings.chain.rpc_url)
    for memory_id in [*ids["anchored"], ids["forgotten"]]:
        moved = await second.anchoring.bundle(IdInput(id=memory_id, graph=graph))
        source = await anchoring.bundle(IdInput(id=memory_id, graph=graph))
        assert moved == source  # the same envelope, hash, proof, root and anchor
        report = verify_bundle(moved, rpc)  # what `graphsvc verify-bundle` checks, on the chain alone
        assert report.verified, [c for c in report.checks if c.ok is False]
        assert report.forgotten == (memory_id == ids["forgotten"])
    for memory_id in ids["anchored"]:
        verified = await second.anchoring.verify(IdInput(id=memory_id, graph=graph))
        assert verified.verified, verified.problem
    assert not (await second.anchoring.verify(IdInput(id=ids["forgotten"], graph=graph))).hashValid
    assert _sent(settings) == sent  # no new anchoring
    again = await export(there, settings, graph, tmp_path / "again.jsonl")
    assert comparable(again) == comparable(lines)  # the same graph, line for line (but its export time)
    assert audited(again, settings).exit_code == 0

    with pytest.raises(Conflict):  # no longer empty
        await importer(there, settings, second.memory).run(lines)
    # the moved graph goes on: its next batch follows the imported ones on chain
    await second.memory.remember(RememberInput(text="written on the second server", graph=graph))
    assert (await second.anchoring.anchor_now(GraphInput(graph=graph))).status == "anchored"
    after = await export(there, settings, graph, tmp_path / "after.jsonl")
    assert audited(after, settings).exit_code == 0


def _line_of(lines: list[bytes], needle: bytes) -> int:
    return next(i for i, line in enumerate(lines, 1) if needle in line)


async def test_removing_any_batch_or_memory_from_an_export_fails_the_audit_and_names_it(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    await fill(memory, anchoring, graph)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    records = list(_kinds(lines))
    for i, record in records:
        if record["type"] not in ("batch", "memory"):
            continue
        cut = seal(lines[:i] + lines[i + 1 : -1])
        report = audited(cut, settings)
        assert report.exit_code == 1, f"removing line {i + 1} went unnoticed"
        rules = {(f.rule, f.text) for f in report.findings}
        if record["type"] == "batch":
            assert any(rule == "missing-batch" and record["root"] in text for rule, text in rules), rules
        else:
            assert any(rule == "position" and f"position {record['seq']} " in text for rule, text in rules), (
                rules
            )
        if i == records[1][0]:
            print(audit_render.render(report))


async def test_an_audit_that_cannot_reach_the_chain_says_so_with_its_own_exit_status(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    await memory.remember(RememberInput(text="one memory \u202e with a bidi override", graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    report = audit.audit(lines, Rpc(f"http://127.0.0.1:{free_port()}"))
    assert report.exit_code == 3 and report.unreachable
    assert "\u202e" not in audit_render.render(report)
    truncated = audit.audit(lines[:-2], None)
    assert {f.rule for f in truncated.findings} >= {"truncated"} and truncated.exit_code == 1


async def test_an_import_cut_short_resumes_when_run_again_and_writes_nothing_twice(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    await fill(memory, anchoring, graph)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    before = await count_nodes(store, graph)
    await wipe(store, graph)

    def cut_after_the_first_page(written: int, total: int) -> None:
        raise OSError("the disk went away")

    with pytest.raises(OSError):
        await importer(store, settings, memory).run(lines, progress=cut_after_the_first_page)
    assert 0 < await count_nodes(store, graph) < before
    done = await importer(store, settings, memory).run(lines)
    assert done.resumed and await count_nodes(store, graph) == before
    assert comparable(await export(store, settings, graph, tmp_path / "again.jsonl")) == comparable(lines)


async def test_the_rest_export_and_the_cli_audit_agree_on_a_good_and_a_damagedexport(
    server_url: str,
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import httpx

    from graphsvc.cli import main

    await fill(memory, anchoring, graph)
    async with httpx.AsyncClient(base_url=server_url, timeout=60) as http:
        answer = await http.get("/v1/export", params={"graph": graph})
        missing = await http.get("/v1/export", params={"graph": graph + "-none"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/x-ndjson")
    assert missing.status_code == 404
    path = tmp_path / "rest.jsonl"
    path.write_bytes(answer.content)
    assert settings.chain.rpc_url
    [published] = await store.run("export/graph_tag", graph=graph)  # graphsvc graph-tag
    tag = published["graphTag"]
    assert main(["audit", str(path), "--rpc", settings.chain.rpc_url, "--graph-tag", tag]) == 0
    good = capsys.readouterr().out
    lines = path.read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(
        b"".join(line for line in lines if b'"seq":4,' not in line or b'"memory"' not in line)
    )
    assert main(["audit", str(damaged), "--rpc", settings.chain.rpc_url]) == 1
    bad = capsys.readouterr().out
    print(f"\n{good}\n{bad}")
    assert good.startswith("✓ Audited") and bad.startswith("✗ Not audited") and "position 4 " in bad


async def test_a_batch_sealed_before_chained_roots_gets_its_link_when_it_is_signed(
    store: GraphStore, memory: MemoryService, anchoring: AnchoringService, graph: str
) -> None:
    await memory.remember(RememberInput(text="first", graph=graph))
    await anchoring.anchor_now(GraphInput(graph=graph))
    await memory.remember(RememberInput(text="sealed by an older version", graph=graph))
    fence = await anchoring.lease.acquire()
    sealed = await anchoring.batches.seal(graph, fence)
    assert sealed is not None
    await store._driver.execute_query(
        "MATCH (b:Batch {root: $root}) REMOVE b.graphTag, b.prevRoot",
        root=sealed["root"],
        database_=store._database,
    )
    await anchoring.lease.release()
    result = await anchoring.anchor_now(GraphInput(graph=graph))  # finishes the unlinked batch first
    assert result.status == "anchored" and result.root == sealed["root"]
    records, _, _ = await store._driver.execute_query(
        "MATCH (b:Batch {graph: $g}) RETURN b.root AS root, b.prevRoot AS prev, b.graphTag AS tag ORDER BY b.seq",
        g=graph,
        database_=store._database,
    )
    first, second = records
    assert second["prev"] == first["root"] and second["tag"] == first["tag"] is not None


def test_the_export_and_import_export_commands_move_a_graph_that_then_audits(
    settings: Settings, graph: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from graphsvc.app import Services
    from graphsvc.cli import export as cli_export
    from graphsvc.cli import main
    from graphsvc.cli.common import with_services

    async def seed(services: Services) -> None:
        await services.memory.remember(RememberInput(text="moved by the CLI", entities=[MON], graph=graph))
        await services.anchoring.anchor_now(GraphInput(graph=graph))

    with_services(seed, settings)
    out = tmp_path / "cli.jsonl"
    assert cli_export.cmd_export(argparse.Namespace(graph=graph, out=out), settings) == 0
    assert not out.with_name("cli.jsonl.partial").exists()

    async def clear(services: Services) -> None:
        await wipe(services.store, graph)

    with_services(clear, settings)
    again = argparse.Namespace(file=out, graph=None, graph_tag=None, known_root=[], bundle=[], no_chain=False)
    assert cli_export.cmd_import_export(again, settings) == 0
    with pytest.raises(Conflict):  # the graph is no longer empty (`graphsvc` prints it and exits 1)
        cli_export.cmd_import_export(again, settings)
    capsys.readouterr()
    assert cli_export.cmd_graph_tag(argparse.Namespace(graph=graph), settings) == 0  # the operator's
    tag = capsys.readouterr().out.strip()
    assert tag == json.loads(out.read_bytes().splitlines()[0])["graphTag"]
    assert settings.chain.rpc_url
    assert main(["audit", str(out), "--rpc", settings.chain.rpc_url, "--graph-tag", tag]) == 0
    assert capsys.readouterr().out.startswith("✓ Audited")


async def _writer_of(store: GraphStore, graph: str, memory_id: str) -> dict[str, Any]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g, id: $id}) RETURN m.writerToken AS token, m.writerClient AS client",
        g=graph,
        id=memory_id,
        database_=store._database,
    )
    return records[0].data()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_memory_keeps_the_token_and_client_that_wrote_it_across_export_and_import(
    mode: str,
    secured_url: str,
    store: GraphStore,
    second: Server,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    import httpx
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import Implementation

    from graphsvc.services.access import READ, WRITE, AccessService

    secret, token = await AccessService(store, required=True).create(graph, [READ, WRITE])
    headers = {"authorization": f"Bearer {secret}"}
    me = Implementation(name="provenance-test", version="1.2.0")
    written: dict[str, str] = {}
    async with create_mcp_http_client(headers=headers) as http:
        streamable = streamable_http_client(f"{secured_url}/mcp", http_client=http)
        async with Client(streamable, client_info=me, mode=mode) as client:
            result = await client.call_tool("remember", {"text": "written over streamable HTTP"})
            assert result.structured_content is not None
            written["streamable"] = result.structured_content["id"]
    async with Client(sse_client(f"{secured_url}/sse", headers=headers), client_info=me) as client:
        result = await client.call_tool("remember", {"text": "written over SSE"})
        assert result.structured_content is not None
        written["sse"] = result.structured_content["id"]
    async with httpx.AsyncClient(base_url=secured_url, headers=headers) as rest:
        answer = await rest.post("/v1/memories", json={"text": "written over REST", "graph": graph})
        written["rest"] = answer.json()["id"]
    found = {how: await _writer_of(store, graph, memory_id) for how, memory_id in written.items()}
    assert found["sse"] == {"token": token.id, "client": "provenance-test/1.2.0"}
    assert found["rest"] == {"token": token.id, "client": None}  # REST: the token only
    # streamable HTTP is stateless here: a handshake-era client's call carries no clientInfo (its
    # initialize went in another request); the 2026-07-28 protocol puts it in every request
    expected = "provenance-test/1.2.0" if mode == "auto" else None
    assert found["streamable"] == {"token": token.id, "client": expected}
    assert secret.split("_", 2)[2] not in json.dumps(found)  # its id, never its secret

    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    memories = {r["id"]: r for r in map(json.loads, lines) if r["type"] == "memory"}
    props = {memory_id: r["props"] for memory_id, r in memories.items()}
    assert all(token.id not in json.dumps(r["envelope"]) for r in memories.values())  # not hashed
    assert props[written["sse"]]["writerToken"] == token.id
    assert props[written["sse"]]["writerClient"] == "provenance-test/1.2.0"
    await importer(second.store, settings, second.memory).run(lines)
    for how, memory_id in written.items():
        assert await _writer_of(second.store, graph, memory_id) == found[how]


async def test_a_batch_given_another_batchs_transaction_fails_the_audit_at_its_receipt(
    store: GraphStore,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
    graph: str,
    tmp_path: Path,
) -> None:
    await fill(memory, anchoring, graph)
    lines = await export(store, settings, graph, tmp_path / "g.jsonl")
    records = [json.loads(line) for line in lines[:-1]]
    first, second = [r for r in records if r["type"] == "batch"][:2]
    first["txHash"], second["txHash"] = second["txHash"], first["txHash"]
    swapped = seal([json.dumps(r).encode() + b"\n" for r in records])
    report = audited(swapped, settings)
    assert report.exit_code == 1
    assert {(f.rule, f.line) for f in report.findings} == {("receipt", 2), ("receipt", 3)}
