"""The standalone verifier (graphsvc.verifier, `graphsvc verify-bundle`) on bundles of real anchors:
it recomputes every value itself and trusts nothing in the bundle but what it checks on chain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from graphsvc import cli
from graphsvc.chain.anchor import AnchorContract, load_artifact
from graphsvc.config import Settings
from graphsvc.devstack import chain as local_chain
from graphsvc.devstack.chain import DEV_PRIVATE_KEY
from graphsvc.domain.checklist import CHECKS
from graphsvc.domain.merkle import memory_leaf
from graphsvc.domain.models import GraphInput, IdInput, RememberInput
from graphsvc.domain.proof import VERIFIER_ABI, ProofBundle, json_schema
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.verifier import (
    EXIT_UNCHECKED,
    BundleError,
    Rpc,
    inert,
    load_bundle,
    read_bundle,
    render,
    verify_bundle,
)
from tests.conftest import REPO, free_port
from tests.conftest import mine as local_chain_mine

pytestmark = pytest.mark.neo4j


@pytest.fixture
async def anchoring(store, settings: Settings):
    c = settings.chain
    assert c.rpc_url and c.private_key
    chain = AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)
    yield AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
    await chain.close()


async def _anchored(memory: MemoryService, anchoring: AnchoringService, graph: str, *texts: str) -> list[str]:
    ids = [(await memory.remember(RememberInput(text=t, tags=["b", "a"], graph=graph))).id for t in texts]
    assert (await anchoring.anchor_now(GraphInput(graph=graph))).status == "anchored"
    return ids


@pytest.fixture
async def bundle(memory: MemoryService, anchoring: AnchoringService, graph: str) -> dict[str, Any]:
    ids = await _anchored(memory, anchoring, graph, "USDC is the quote token", "a sibling", "and a third")
    return (await anchoring.bundle(IdInput(id=ids[0], graph=graph))).model_dump(mode="json")


def _check(bundle: dict[str, Any], rpc_url: str, contract: str | None = None) -> dict[str, bool | None]:
    report = verify_bundle(ProofBundle.model_validate(bundle), Rpc(rpc_url), contract)
    return {c.key: c.ok for c in report.checks}


ALL_PASS = dict.fromkeys(CHECKS, True)


def test_a_good_bundle_passes_every_check_and_says_where_the_contract_came_from(
    bundle: dict[str, Any], settings: Settings
) -> None:
    rpc = settings.chain.rpc_url or ""
    report = verify_bundle(ProofBundle.model_validate(bundle), Rpc(rpc))
    assert {c.key: c.ok for c in report.checks} == ALL_PASS and report.verified
    text = render(report)
    assert text.startswith(f"✓ Verified: memory {bundle['id']} is unchanged")
    assert "comes from the bundle only" in text
    pinned = verify_bundle(ProofBundle.model_validate(bundle), Rpc(rpc), settings.chain.contract)
    assert pinned.verified and "comes from the bundle only" not in render(pinned)


def test_one_changed_character_of_the_text_fails_at_the_hash(
    bundle: dict[str, Any], settings: Settings
) -> None:
    bundle["envelope"]["text"] = bundle["envelope"]["text"].replace("USDC", "USDT")
    assert _check(bundle, settings.chain.rpc_url or "") == dict.fromkeys(CHECKS) | {"hash": False}


def test_a_changed_proof_step_fails_at_the_proof(bundle: dict[str, Any], settings: Settings) -> None:
    step = bundle["proof"][0]
    bundle["proof"][0] = step[:-1] + ("0" if step[-1] != "0" else "1")
    assert _check(bundle, settings.chain.rpc_url or "") == dict.fromkeys(CHECKS) | {
        "hash": True,
        "proof": False,
    }


def test_a_root_never_anchored_fails_on_chain(bundle: dict[str, Any], settings: Settings) -> None:
    # internally consistent (a one-leaf tree of this memory), but that root was never anchored
    bundle["root"] = "0x" + memory_leaf(bundle["id"], bytes.fromhex(bundle["hash"][2:])).hex()
    bundle["proof"] = []
    result = _check(bundle, settings.chain.rpc_url or "")
    assert result == ALL_PASS | {"root": False, "event": None}


async def test_a_swapped_or_wrongly_pinned_contract_fails(bundle: dict[str, Any], settings: Settings) -> None:
    rpc = settings.chain.rpc_url or ""
    deployer = AnchorContract(rpc, None, DEV_PRIVATE_KEY)
    try:
        other = (await deployer.deploy()).lower()
    finally:
        await deployer.close()
    assert _check(bundle, rpc, contract=other) == ALL_PASS | {"contract": False, "root": None, "event": None}
    swapped = {**bundle, "anchor": {**bundle["anchor"], "contract": other}}
    assert _check(swapped, rpc) == ALL_PASS | {"root": False, "event": None}
    empty = {**bundle, "anchor": {**bundle["anchor"], "contract": "0x" + "12" * 20}}
    assert _check(empty, rpc) == ALL_PASS | {"contract": False, "root": None, "event": None}


def test_a_bundle_of_another_chain_fails_with_a_clear_message(
    bundle: dict[str, Any], settings: Settings
) -> None:
    bundle["anchor"]["chainId"] = 10143
    report = verify_bundle(ProofBundle.model_validate(bundle), Rpc(settings.chain.rpc_url or ""))
    assert {c.key: c.ok for c in report.checks} == {
        "hash": True,
        "proof": True,
        "chain": False,
        "contract": None,
        "root": None,
        "event": None,
    }
    assert render(report).startswith(
        "✗ Not verified: the RPC serves chain 31337; the bundle was anchored on chain 10143."
    )


def test_an_unreachable_rpc_could_not_check_and_runs_no_other(bundle: dict[str, Any]) -> None:
    report = verify_bundle(ProofBundle.model_validate(bundle), Rpc(f"http://127.0.0.1:{free_port()}"))
    assert {c.key: c.ok for c in report.checks} == {
        "hash": True,
        "proof": True,
        "chain": None,
        "contract": None,
        "root": None,
        "event": None,
    }
    assert report.unchecked and not report.verified and report.exit_code == EXIT_UNCHECKED
    assert render(report).startswith("? Could not check: cannot reach the RPC at ")


async def test_a_forgotten_memorys_bundle_says_it_was_forgotten_and_its_anchor_still_checks(
    memory: MemoryService, anchoring: AnchoringService, graph: str, settings: Settings
) -> None:
    ids = await _anchored(memory, anchoring, graph, "to be forgotten", "kept")
    await memory.forget(IdInput(id=ids[0], graph=graph))
    forgotten = await anchoring.bundle(IdInput(id=ids[0], graph=graph))
    assert forgotten.envelope is None and forgotten.forgotten is not None
    report = verify_bundle(forgotten, Rpc(settings.chain.rpc_url or ""))
    assert {c.key: c.ok for c in report.checks} == ALL_PASS | {"hash": None}
    assert report.verified and report.exit_code == 0
    assert render(report).startswith(f"✓ Verified: memory {ids[0]} was anchored ")
    assert "    forgotten  " in render(report)


async def test_anchor_now_answers_not_final_when_finality_outlasts_its_timeout(
    memory: MemoryService, store, graph: str, tmp_path: Path
) -> None:
    # a chain that mines transactions but no empty blocks: nothing ever becomes final on it
    node = local_chain.start(tmp_path, port=free_port())
    deployer = AnchorContract(node.rpc_url, None, DEV_PRIVATE_KEY)
    address = await deployer.deploy()
    await deployer.close()
    chain = AnchorContract(node.rpc_url, address, DEV_PRIVATE_KEY)
    try:
        patient = AnchoringService(store, chain, receipt_timeout_s=10, finality_timeout_s=0.5, lease_ttl_s=5)
        await memory.remember(RememberInput(text="final soon", graph=graph))
        result = await patient.anchor_now(GraphInput(graph=graph))
        assert result.status == "not_final" and result.root and result.txHash and result.blockNumber
        assert "not final after 0.5 s" in (result.reason or "")
        local_chain_mine(node.rpc_url, 2)  # two more blocks: final now, and verify says so
        assert (await patient.verify(IdInput(id=(await _ids(store, graph))[0], graph=graph))).verified
    finally:
        await chain.close()
        local_chain.stop(tmp_path)


async def _ids(store, graph: str) -> list[str]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $g}) RETURN m.id AS id", g=graph, database_=store._database
    )
    return [r["id"] for r in records]


def test_the_committed_json_schema_is_the_models_and_describes_real_bundles(bundle: dict[str, Any]) -> None:
    committed = (REPO / "contracts" / "proof-bundle.schema.json").read_text()
    assert committed == json_schema(), (
        "run: python -m graphsvc.domain.proof > contracts/proof-bundle.schema.json"
    )
    jsonschema.validate(bundle, json.loads(committed))


def test_the_bundles_abi_fragments_are_the_compiled_contracts() -> None:
    def strip(fragment: dict[str, Any]) -> str:
        return json.dumps(fragment, sort_keys=True)

    compiled = {strip(f) for f in load_artifact()["abi"]}
    assert all(strip(f) in compiled for f in VERIFIER_ABI)


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        (b"{", "not JSON"),
        (b'{"schema": "graphsvc.proof/v2", "id": "mem_1"', "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[]", "expected a JSON object"),
        (b'{"schema": "graphsvc.proof/v1"}', "graphsvc.proof/v2"),
        # the default recursion limit again (graphsvc/__init__.py), as the JS verifier says it
        (b"[" * 50_000 + b"]" * 50_000, "nested too deeply"),
        (b'{"schema": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested too deeply"),
        (b" " * 10_000_001, "at most"),
    ],
)
def test_an_unreadable_bundle_is_one_clear_error(data: bytes, complaint: str) -> None:
    with pytest.raises(BundleError, match=complaint):
        load_bundle(data)


def test_a_deeply_nested_envelope_fails_the_hash_check_clearly(
    bundle: dict[str, Any], settings: Settings
) -> None:
    deep: Any = "x"
    for _ in range(50_000):
        deep = [deep]
    bundle["envelope"]["text"] = deep
    assert _check(bundle, settings.chain.rpc_url or "")["hash"] is False


def test_wrong_field_types_name_the_field(bundle: dict[str, Any]) -> None:
    bundle["anchor"]["blockNumber"] = "twelve"
    with pytest.raises(BundleError, match=r"^anchor\.blockNumber: "):
        load_bundle(json.dumps(bundle).encode())
    bundle["anchor"]["blockNumber"] = "12"  # a number in a string is not a JSON integer either
    with pytest.raises(BundleError, match=r"^anchor\.blockNumber: "):
        load_bundle(json.dumps(bundle).encode())
    del bundle["anchor"]
    with pytest.raises(BundleError, match=r"^anchor: "):
        load_bundle(json.dumps(bundle).encode())


def _cli(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """`graphsvc` with no graphsvc settings at all, outside the repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHSVC_", "MONAD_", "ANCHOR_"))}
    command = [sys.executable, "-m", "graphsvc.cli", *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=stdin is None, input=stdin, timeout=60
    )


def test_verify_bundle_command_needs_only_the_bundle_and_an_rpc(
    bundle: dict[str, Any], settings: Settings, tmp_path: Path
) -> None:
    rpc = settings.chain.rpc_url or ""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(bundle))
    done = _cli(
        ["verify-bundle", str(good), "--rpc", rpc, "--contract", settings.chain.contract or ""], tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    marks = [line.split()[0] for line in lines if line.startswith(("  ✓ ", "  ✗ ", "  · "))]
    assert lines[0].startswith("✓ Verified") and marks == ["✓"] * 6
    assert (
        f"    text       {json.dumps(bundle['envelope']['text'], ensure_ascii=False)}" in lines
    )  # what was verified

    bundle["envelope"]["text"] += "!"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bundle))
    done = _cli(["verify-bundle", str(bad), "--rpc", rpc], tmp_path)
    assert done.returncode == 1 and done.stdout.startswith("✗ Not verified: the envelope hashes to ")

    (tmp_path / "cut.json").write_text(json.dumps(bundle)[:200])
    for args in (
        ["cut.json", "--rpc", rpc],
        ["missing.json", "--rpc", rpc],
        ["good.json", "--rpc", "ftp://x"],
    ):
        done = _cli(["verify-bundle", *args], tmp_path)
        assert done.returncode == 2 and done.stdout == "" and len(done.stderr.strip().splitlines()) == 1


async def test_rest_and_cli_give_the_same_bundle(
    memory: MemoryService, anchoring: AnchoringService, graph: str, settings: Settings, server_url: str
) -> None:
    [memory_id] = await _anchored(memory, anchoring, graph, "one bundle, two doors")
    async with httpx.AsyncClient(base_url=server_url) as http:
        rest = (await http.get(f"/v1/memories/{memory_id}/proof", params={"graph": graph})).json()
    c = settings.chain
    env = os.environ | {
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "MONAD_RPC_URL": c.rpc_url or "",
        "ANCHOR_CONTRACT": c.contract or "",
        "GRAPHSVC_CHAIN_NETWORK": "local",
    }
    done = subprocess.run(
        [sys.executable, "-m", "graphsvc.cli", "proof", memory_id, "--graph", graph],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == rest
    assert rest["schema"] == "graphsvc.proof/v2" and rest["anchor"]["explorerUrl"] is None


def test_strings_from_a_bundle_are_shown_inert() -> None:
    hostile = "a\x1b[31mb\nc\r\u202ed\u200be é ☕ \x7f\U000e0001"
    assert inert(hostile) == "a\\x1b[31mb\\x0ac\\x0d\\u202ed\\u200be é ☕ \\x7f\\U000e0001"
    assert inert("Zoë met Ægir in Kraków") == "Zoë met Ægir in Kraków"


@pytest.mark.processes
def test_an_oversize_bundle_is_refused_with_its_real_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * 1_010_010 + b"}")
    assert cli.main(["verify-bundle", str(big), "--rpc", "http://127.0.0.1:9"]) == 2
    assert "1,010,012 bytes: a proof bundle is at most 1,000,000 bytes" in capsys.readouterr().err
    with pytest.raises(BundleError, match=r"^1,000,001 bytes"):
        load_bundle(b" " * 1_000_001)
    # from a pipe only the first 1,000,001 bytes are read: its size is unknown
    feeder = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b' ' * 1_010_012)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert feeder.stdout
    with feeder.stdout as pipe, pytest.raises(BundleError, match=r"^over 1,000,000 bytes"):
        read_bundle(pipe)
    feeder.wait(10)
