"""The conformance corpus of proof bundles (contracts/conformance/): make it, or replay its chain.

    .venv/bin/python scripts/conformance.py make      # a fresh anvil, the chain, every case file
    .venv/bin/python scripts/conformance.py replay --rpc http://127.0.0.1:8545   # the chain only

The chain the bundles are anchored on is `chain.json`: every transaction already signed (anvil's
public development key #0, fixed gas and fees) and the timestamp of every block, so replaying it on a
fresh anvil (chain id 31337) gives the same contract address, blocks, timestamps and transaction
hashes, and the committed bundles verify against it. Replaying takes plain JSON-RPC only:
`evm_setNextBlockTimestamp` then `eth_sendRawTransaction` (or `evm_mine`) for each step, in order.

`make` writes chain.json, one JSON file per case and cases.json (the manifest): name, file, what lies,
the verdict, the check expected to fail and the exit code of `graphsvc verify-bundle`. It writes the
export cases for `graphsvc audit` too (export/, scripts/conformance_export.py): chain.json anchors
the batches of the genuine export, export/pass-export.jsonl, on a graph tag of their own.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import sys
import tempfile
import time
import unicodedata
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from eth_abi.abi import encode
from eth_account import Account
from eth_utils.crypto import keccak

from graphsvc.devstack import chain as local_chain
from graphsvc.domain.hashing import envelope_hash, memory_envelope
from graphsvc.domain.merkle import MerkleTree, memory_leaf
from graphsvc.domain.proof import BUNDLE_SCHEMA, AnchorRecord, Forgotten, ProofBundle

HERE = Path(__file__).resolve().parent.parent / "contracts" / "conformance"
ARTIFACT = Path(__file__).resolve().parent.parent / "contracts" / "GraphsvcAnchor.json"
CHAIN_ID = 31337
START = 1_893_456_000  # 2030-01-01T00:00:00Z: after any fresh anvil's genesis block until then
STEP_S = 12
FINALITY_BLOCKS = 70  # finalized lags the head by 2 blocks (--slots-in-an-epoch 1) or 64 (anvil's default)
GWEI = 10**9
ANCHOR = "0x5FbDB2315678afecb367f032d93F642f64180aa3"  # the first contract of dev key #0
REVERTER = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"  # its second: code that reverts every call
REVERTER_INIT = "0x6005600c60003960056000f360006000fd"  # copies and returns `PUSH1 0 PUSH1 0 REVERT`
GRAPH = "conformance"
Bundle = dict[str, Any]


def _sibling(name: str) -> ModuleType:
    """A module of scripts/ (this file is run as a script or loaded by path, never imported)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


exports = _sibling("conformance_export")


# ---- the memories and their batches ------------------------------------------------------------------


def _memories() -> dict[str, dict[str, object]]:
    v1 = memory_envelope(
        id="mem_conformanceV1",
        graph=GRAPH,
        text="Alice prefers tea over coffee.",
        tags=["preferences", "drinks"],
        entities=["Person:Alice", "Drink:Tea"],
        created_at="2030-01-01T00:00:00.000Z",
    )
    v2 = memory_envelope(
        id="mem_conformanceV2",
        graph=GRAPH,
        text="Alice now prefers coffee.",
        tags=["preferences"],
        entities=["Person:Alice", "Drink:Coffee"],
        created_at="2030-01-02T00:00:00.000Z",
        supersedes=["mem_conformanceV1"],
        valid_from="2030-01-02T00:00:00.000Z",
    )
    gone = memory_envelope(
        id="mem_conformanceGone",
        graph=GRAPH,
        text="A secret that was later forgotten.",
        tags=[],
        entities=[],
        created_at="2030-01-01T00:00:01.000Z",
    )
    # code-point order differs from a dictionary's: "Zebra" < "apple" < "Émile"; all NFC
    unicode = memory_envelope(
        id="mem_conformanceNFC",
        graph=GRAPH,
        text=unicodedata.normalize("NFC", "Zoë met Ægir in Kraków ☕"),
        tags=["apple", "Émile", "Zebra"],
        entities=["Person:Zoë", "City:Kraków"],
        created_at="2030-01-01T00:00:02.000Z",
    )
    return {"v1": v1, "v2": v2, "gone": gone, "unicode": unicode}


def _badleaf_memory() -> dict[str, object]:
    return memory_envelope(
        id="mem_conformanceLeaf",
        graph=GRAPH,
        text="This memory's root was built from a leaf hashed once, not twice.",
        tags=[],
        entities=[],
        created_at="2030-01-01T00:00:03.000Z",
    )


def _single_leaf(memory_id: str, digest: str) -> bytes:
    """The wrong leaf: keccak256(abi.encode(id, hash)) hashed once (standard-v1 hashes it twice)."""
    return keccak(encode(["string", "bytes32"], [memory_id, bytes.fromhex(digest[2:])]))


# ---- the chain: signed transactions, replayable anywhere --------------------------------------------


def _sign(nonce: int, to: str | None, data: str, gas: int) -> dict[str, str]:
    tx: dict[str, Any] = {
        "type": 2,
        "chainId": CHAIN_ID,
        "nonce": nonce,
        "gas": gas,
        "maxFeePerGas": 50 * GWEI,
        "maxPriorityFeePerGas": 1 * GWEI,
        "value": 0,
        "data": data,
    }
    if to:
        tx["to"] = to
    signed = Account.sign_transaction(tx, local_chain.DEV_PRIVATE_KEY)
    return {"raw": "0x" + signed.raw_transaction.hex(), "hash": "0x" + signed.hash.hex()}


GRAPH_TAG = keccak(text="graphsvc conformance graph")  # the corpus graph's tag on chain (chained roots)


def _anchor_call(root: bytes, seq: int, leaves: int, prev: bytes = bytes(32), tag: bytes = GRAPH_TAG) -> str:
    """`anchor(root, batchSeq, leafCount, graphTag, prevRoot)`: each root follows the graph's last."""
    selector = keccak(text="anchor(bytes32,uint64,uint32,bytes32,bytes32)")[:4]
    args = encode(["bytes32", "uint64", "uint32", "bytes32", "bytes32"], [root, seq, leaves, tag, prev])
    return "0x" + (selector + args).hex()


def plan() -> tuple[dict[str, Any], dict[str, Any]]:
    """The chain (steps to replay) and the facts the bundles need (trees, hashes, blocks)."""
    memories = _memories()
    hashes = {k: envelope_hash(e) for k, e in memories.items()}
    leaves = {k: memory_leaf(str(memories[k]["id"]), bytes.fromhex(h[2:])) for k, h in hashes.items()}
    batch = MerkleTree.build(list(leaves.values()))
    bad = _badleaf_memory()
    bad_hash = envelope_hash(bad)
    wrong = MerkleTree.build([_single_leaf(str(bad["id"]), bad_hash), keccak(text="conformance filler")])
    late_env = memory_envelope(
        id="mem_conformanceLate",
        graph=GRAPH,
        text="Anchored last: its block is not final yet.",
        tags=[],
        entities=[],
        created_at="2030-01-01T00:00:04.000Z",
    )
    late_hash = envelope_hash(late_env)
    late = MerkleTree.build([memory_leaf(str(late_env["id"]), bytes.fromhex(late_hash[2:]))])
    artifact = json.loads(ARTIFACT.read_text())
    txs = [
        ("deploy", _sign(0, None, artifact["bytecode"], 2_000_000)),
        ("reverter", _sign(1, None, REVERTER_INIT, 100_000)),
        ("batch", _sign(2, ANCHOR, _anchor_call(batch.root, 1, 4), 300_000)),
        ("wrongleaf", _sign(3, ANCHOR, _anchor_call(wrong.root, 2, 2, batch.root), 300_000)),
        # AlreadyAnchored: reverts
        ("reverted", _sign(4, ANCHOR, _anchor_call(batch.root, 1, 4, wrong.root), 300_000)),
        *_export_txs(5),
    ]
    steps: list[dict[str, Any]] = []
    for name, tx in txs:
        steps.append({"block": len(steps) + 1, "timestamp": START + STEP_S * len(steps), "tx": name, **tx})
    for _ in range(FINALITY_BLOCKS):
        steps.append({"block": len(steps) + 1, "timestamp": START + STEP_S * len(steps), "mine": True})
    late_tx = _sign(len(txs), ANCHOR, _anchor_call(late.root, 3, 1, wrong.root), 300_000)
    steps.append({"block": len(steps) + 1, "timestamp": START + STEP_S * len(steps), "tx": "late", **late_tx})
    chain = {
        "about": "Replay on a fresh anvil (chain id 31337): for each step, evm_setNextBlockTimestamp(timestamp), "
        "then eth_sendRawTransaction(raw), or evm_mine for a step with mine; each step is one block.",
        "chainId": CHAIN_ID,
        "contract": ANCHOR,
        "reverter": REVERTER,
        "steps": steps,
    }
    blocks = {s["tx"]: s for s in steps if "tx" in s}
    facts = {
        "memories": memories,
        "hashes": hashes,
        "batch": batch,
        "leaves": leaves,
        "bad": (bad, bad_hash, wrong),
        "late": (late_env, late_hash, late),
        "blocks": blocks,
    }
    return chain, facts


def _export_txs(nonce: int) -> list[tuple[str, dict[str, str]]]:
    """The batches of the export cases (export/pass-export.jsonl), anchored as graphsvc anchored them:
    the same root, batch number, leaf count, graph tag and previous root."""

    def word(hex32: str) -> bytes:
        return bytes.fromhex(hex32[2:])

    return [
        (
            f"export-batch-{b['seq']}",
            _sign(
                nonce + i,
                ANCHOR,
                _anchor_call(word(b["root"]), b["seq"], b["count"], word(b["prevRoot"]), word(b["graphTag"])),
                300_000,
            ),
        )
        for i, b in enumerate(exports.base_batches())
    ]


def rpc(url: str, method: str, *params: object) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    request = urllib.request.Request(url, body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        reply = json.load(response)
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']}")
    return reply["result"]


def _receipt(url: str, tx_hash: str, timeout_s: float = 10.0) -> Any:
    """The receipt, once anvil has mined the transaction (automine answers before it is mined)."""
    deadline = time.monotonic() + timeout_s
    while (receipt := rpc(url, "eth_getTransactionReceipt", tx_hash)) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return receipt


def replay(url: str, chain: dict[str, Any]) -> None:
    """Apply chain.json to a fresh anvil at `url`; check each step landed in its block.

    Raises:
        RuntimeError: the chain is not fresh (or not 31337), or a step did not land where it should.
    """
    if int(rpc(url, "eth_chainId"), 16) != chain["chainId"] or int(rpc(url, "eth_blockNumber"), 16) != 0:
        raise RuntimeError("replay needs a fresh anvil with chain id 31337 (block 0)")
    for step in chain["steps"]:
        rpc(url, "evm_setNextBlockTimestamp", step["timestamp"])
        if step.get("mine"):
            rpc(url, "evm_mine")
        else:
            rpc(url, "eth_sendRawTransaction", step["raw"])
            receipt = _receipt(url, step["hash"])
            if receipt is None or int(receipt["blockNumber"], 16) != step["block"]:
                raise RuntimeError(f"step {step['block']} ({step['tx']}) was not mined in its block")
    if int(rpc(url, "eth_blockNumber"), 16) != len(chain["steps"]):
        raise RuntimeError("the chain has more blocks than the steps (is anvil mining on a timer?)")


# ---- the bundles --------------------------------------------------------------------------------------


def _bundle(
    memory_id: str,
    digest: str,
    envelope: dict[str, object] | None,
    proof: list[bytes],
    root: bytes,
    step: dict[str, Any],
    seq: int,
    leaves: int,
    forgotten_at: str | None = None,
) -> Bundle:
    made = ProofBundle(
        schema=BUNDLE_SCHEMA,
        id=memory_id,
        hash=digest,
        envelope=envelope,
        forgotten=Forgotten(forgottenAt=forgotten_at) if forgotten_at else None,
        proof=["0x" + p.hex() for p in proof],
        root="0x" + root.hex(),
        anchor=AnchorRecord(
            chainId=CHAIN_ID,
            contract=ANCHOR,
            txHash=step["hash"],
            blockNumber=step["block"],
            batchSeq=seq,
            leafCount=leaves,
            anchoredAt=step["timestamp"] * 1000,
        ),
    )
    return made.model_dump(mode="json")


def _genuine(facts: dict[str, Any]) -> dict[str, Bundle]:
    memories, hashes, batch, leaves = facts["memories"], facts["hashes"], facts["batch"], facts["leaves"]
    step = facts["blocks"]["batch"]

    def of(key: str, forgotten_at: str | None = None) -> Bundle:
        envelope = None if forgotten_at else memories[key]
        proof = batch.proof(leaves[key])
        return _bundle(
            str(memories[key]["id"]), hashes[key], envelope, proof, batch.root, step, 1, 4, forgotten_at
        )

    bad, bad_hash, wrong = facts["bad"]
    late_env, late_hash, late = facts["late"]
    wrong_leaf = _single_leaf(str(bad["id"]), bad_hash)
    return {
        "v1": of("v1"),
        "v2": of("v2"),
        "unicode": of("unicode"),
        "forgotten": of("gone", "2030-01-05T00:00:00.000Z"),
        "wrongleaf": _bundle(
            str(bad["id"]),
            bad_hash,
            bad,
            wrong.proof(wrong_leaf),
            wrong.root,
            facts["blocks"]["wrongleaf"],
            2,
            2,
        ),
        "late": _bundle(
            str(late_env["id"]), late_hash, late_env, [], late.root, facts["blocks"]["late"], 3, 1
        ),
    }


Edit = Callable[[Bundle], None]


def _set(path: str, value: object) -> Edit:
    def edit(bundle: Bundle) -> None:
        *parents, last = path.split(".")
        node: Any = bundle
        for key in parents:
            node = node[key]
        node[last] = value

    return edit


def _flip(hex32: str) -> str:
    return hex32[:-1] + ("0" if hex32[-1] != "0" else "1")


def _cases(good: dict[str, Bundle], facts: dict[str, Any]) -> list[dict[str, Any]]:
    """(name, base, edit, lie, verdict, check, exit): every way a bundle can lie, and the genuine ones."""
    blocks = facts["blocks"]
    one_leaf = memory_leaf(good["v1"]["id"], bytes.fromhex(good["v1"]["hash"][2:]))
    nfd = unicodedata.normalize("NFD", str(good["unicode"]["envelope"]["text"]))

    def both(*edits: Edit) -> Edit:
        def edit(bundle: Bundle) -> None:
            for e in edits:
                e(bundle)

        return edit

    def reorder(bundle: Bundle) -> None:
        bundle["proof"].reverse()

    rows: list[tuple[str, str, Edit | None, str, str, str | None, int]] = [
        ("pass-v1", "v1", None, "nothing: a graphsvc.memory/v1 envelope", "verified", None, 0),
        (
            "pass-v2",
            "v2",
            None,
            "nothing: a graphsvc.memory/v2 envelope (supersedes, validFrom, validTo null)",
            "verified",
            None,
            0,
        ),
        (
            "pass-unicode",
            "unicode",
            None,
            "nothing: NFC text, tags and entities sorted by code point",
            "verified",
            None,
            0,
        ),
        (
            "pass-forgotten",
            "forgotten",
            None,
            "nothing: a forgotten memory (no envelope; hash not checkable)",
            "forgotten",
            None,
            0,
        ),
        (
            "fail-text",
            "v1",
            _set("envelope.text", "Alice prefers coffee over tea."),
            "the text",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-text-nfd",
            "unicode",
            _set("envelope.text", nfd),
            "the text in NFD (the same words, other code points)",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-envelope-id",
            "v1",
            _set("envelope.id", "mem_conformanceV2"),
            "envelope.id (another memory's)",
            "failed",
            "hash",
            1,
        ),
        ("fail-graph", "v1", _set("envelope.graph", "other"), "envelope.graph", "failed", "hash", 1),
        (
            "fail-tags",
            "v1",
            _set("envelope.tags", ["drinks", "preferences", "secret"]),
            "a tag added",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-tags-order",
            "v1",
            _set("envelope.tags", ["preferences", "drinks"]),
            "tags not in code-point order",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-entities",
            "v1",
            _set("envelope.entities", ["Drink:Tea"]),
            "an entity removed",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-created-at",
            "v1",
            _set("envelope.createdAt", "2030-01-01T00:00:00Z"),
            "createdAt without milliseconds (the same instant, another text)",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-envelope-schema",
            "v1",
            _set("envelope.schema", "graphsvc.memory/v2"),
            "envelope.schema",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-supersedes",
            "v2",
            _set("envelope.supersedes", []),
            "v2 supersedes emptied",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-valid-from",
            "v2",
            _set("envelope.validFrom", "2030-01-01T00:00:00.000Z"),
            "v2 validFrom",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-valid-to",
            "v2",
            _set("envelope.validTo", "2031-01-01T00:00:00.000Z"),
            "v2 validTo (null → a date)",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-leaf-encoding",
            "wrongleaf",
            None,
            "the anchored root was built from leaves hashed once (keccak256(abi.encode(id, hash))), not twice",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-proof-sibling",
            "v1",
            lambda b: b["proof"].__setitem__(0, _flip(b["proof"][0])),
            "one proof sibling",
            "failed",
            "proof",
            1,
        ),
        ("fail-proof-order", "v1", reorder, "the proof's steps reordered", "failed", "proof", 1),
        (
            "fail-proof-step-dropped",
            "v1",
            lambda b: b["proof"].pop(),
            "the proof's last step dropped",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-hash",
            "v1",
            lambda b: b.__setitem__("hash", _flip(b["hash"])),
            "the hash",
            "failed",
            "hash",
            1,
        ),
        (
            "fail-root",
            "v1",
            lambda b: b.__setitem__("root", _flip(b["root"])),
            "the root",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-root-not-anchored",
            "v1",
            both(_set("root", "0x" + one_leaf.hex()), _set("proof", [])),
            "a consistent one-leaf root that was never anchored",
            "failed",
            "root",
            1,
        ),
        ("fail-leaf-count", "v1", _set("anchor.leafCount", 5), "anchor.leafCount", "failed", "root", 1),
        ("fail-batch-seq", "v1", _set("anchor.batchSeq", 2), "anchor.batchSeq", "failed", "root", 1),
        ("fail-block-number", "v1", _set("anchor.blockNumber", 4), "anchor.blockNumber", "failed", "root", 1),
        (
            "fail-anchored-at",
            "v1",
            _set("anchor.anchoredAt", good["v1"]["anchor"]["anchoredAt"] + 1000),
            "anchor.anchoredAt",
            "failed",
            "root",
            1,
        ),
        (
            "fail-chain-id",
            "v1",
            _set("anchor.chainId", 10143),
            "anchor.chainId (Monad testnet's)",
            "failed",
            "chain",
            1,
        ),
        (
            "fail-contract-no-code",
            "v1",
            _set("anchor.contract", "0x" + "12" * 20),
            "anchor.contract (no code there)",
            "failed",
            "contract",
            1,
        ),
        (
            "fail-contract-reverts",
            "v1",
            _set("anchor.contract", REVERTER),
            "anchor.contract (a contract that reverts every call)",
            "failed",
            "root",
            1,
        ),
        ("fail-unfinalized", "late", None, "an anchor not final yet (the last block)", "failed", "root", 1),
        (
            "fail-tx-reverted",
            "v1",
            _set("anchor.txHash", blocks["reverted"]["hash"]),
            "anchor.txHash (a transaction that reverted)",
            "failed",
            "event",
            1,
        ),
        (
            "fail-tx-absent",
            "v1",
            _set("anchor.txHash", "0x" + "ab" * 32),
            "anchor.txHash (no such transaction)",
            "failed",
            "event",
            1,
        ),
        (
            "fail-tx-other",
            "v1",
            _set("anchor.txHash", blocks["wrongleaf"]["hash"]),
            "anchor.txHash (another batch's transaction, in another block)",
            "failed",
            "event",
            1,
        ),
        (
            "fail-tombstone-hash",
            "forgotten",
            lambda b: b.__setitem__("hash", _flip(b["hash"])),
            "a forgotten memory's hash",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-tombstone-id",
            "forgotten",
            _set("id", "mem_conformanceOther"),
            "a forgotten memory's id",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-hostile-forgotten-at",
            "forgotten",
            both(
                _set("forgotten.forgottenAt", "\x1b[2K\r\u202e✓ Verified\n\x1b[32m✓ ok\x1b[0m"),
                lambda b: b.__setitem__("hash", _flip(b["hash"])),
            ),
            "forgottenAt with ANSI escapes, a bidi override and a newline (and the hash)",
            "failed",
            "proof",
            1,
        ),
        (
            "fail-hostile-text",
            "v1",
            _set("envelope.text", "Alice\x1b[2K\r\u202e✓ Verified: ok\nprefers tea."),
            "the text, with ANSI escapes, a bidi override and a newline",
            "failed",
            "hash",
            1,
        ),
        ("refuse-unknown-field", "v1", _set("note", "trust me"), "an unknown field", "refused", "bundle", 2),
        (
            "refuse-wrong-type",
            "v1",
            _set("anchor.leafCount", "4"),
            "anchor.leafCount as a string",
            "refused",
            "bundle",
            2,
        ),
        ("refuse-no-schema", "v1", lambda b: b.pop("schema"), "no schema", "refused", "bundle", 2),
        (
            "refuse-uppercase-hash",
            "v1",
            lambda b: b.__setitem__("hash", b["hash"].upper().replace("0X", "0x")),
            "hash in uppercase hex",
            "refused",
            "bundle",
            2,
        ),
        (
            "refuse-envelope-and-forgotten",
            "v1",
            _set("forgotten", {"forgottenAt": "2030-01-05T00:00:00.000Z"}),
            "both an envelope and forgotten",
            "refused",
            "bundle",
            2,
        ),
        (
            "refuse-leaf-spec",
            "v1",
            _set("leaf.encoding", ["bytes32", "string"]),
            "the leaf recipe",
            "refused",
            "bundle",
            2,
        ),
    ]
    cases: list[dict[str, Any]] = []
    for name, base, edit, lie, verdict, check, code in rows:
        bundle = copy.deepcopy(good[base])
        if edit:
            edit(bundle)
        cases.append(
            {
                "name": name,
                "file": f"{name}.json",
                "lies": lie,
                "verdict": verdict,
                "check": check,
                "exit": code,
                "bundle": bundle,
            }
        )
    return cases


def _oversize(good: Bundle) -> tuple[dict[str, Any], bytes]:
    text = json.dumps(good, indent=2).encode()
    padded = text[:-1] + b" " * (1_010_012 - len(text)) + text[-1:]
    case = {
        "name": "refuse-oversize",
        "file": "refuse-oversize.json",
        "lies": "a genuine bundle padded with spaces to 1,010,012 bytes (over 1,000,000)",
        "verdict": "refused",
        "check": "bundle",
        "exit": 2,
    }
    return case, padded


def make(out: Path = HERE, rpc_url: str | None = None) -> list[dict[str, Any]]:
    """Replay the chain on a fresh anvil (`rpc_url`, else one started here), write every case; returns
    the manifest."""
    chain, facts = plan()
    if rpc_url:
        replay(rpc_url, chain)
    else:
        with tempfile.TemporaryDirectory() as home:
            started = local_chain.start(Path(home), port=18545)
            try:
                replay(started.rpc_url, chain)
            finally:
                local_chain.stop(Path(home))
    good = _genuine(facts)
    out.mkdir(parents=True, exist_ok=True)
    (out / "chain.json").write_text(json.dumps(chain, indent=2) + "\n")
    manifest: list[dict[str, Any]] = []
    for case in _cases(good, facts):
        bundle = case.pop("bundle")
        (out / case["file"]).write_text(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n")
        manifest.append(case)
    oversize, data = _oversize(good["v1"])
    (out / oversize["file"]).write_bytes(data)
    manifest.append(oversize)
    about = {
        "about": "graphsvc proof-bundle conformance corpus: run each file against the chain of chain.json "
        "(see scripts/conformance.py and the README); exit as graphsvc verify-bundle: 0 verified, 1 a check "
        "failed, 2 bundle unreadable, 3 could not check. check: the first check that fails (bundle: refused).",
        "rpcChainId": CHAIN_ID,
        "contract": ANCHOR,
        "cases": manifest,
    }
    (out / "cases.json").write_text(json.dumps(about, indent=2, ensure_ascii=False) + "\n")
    exports.write(export_cases(chain), out / "export")
    return manifest


def export_cases(chain: dict[str, Any]) -> list[tuple[dict[str, Any], list[bytes]]]:
    """The export cases (manifest entry, lines): the genuine export with its batches as `chain` anchors
    them, and every damaged one made from it."""
    anchored = {step["tx"]: step for step in chain["steps"] if "tx" in step}
    roots = {b["root"]: anchored[f"export-batch-{b['seq']}"] for b in exports.base_batches()}
    genuine = exports.with_extraction(exports.BASE.read_bytes().splitlines(keepends=True))
    return exports.cases(exports.rebase(genuine, roots, CHAIN_ID, ANCHOR))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/conformance.py")
    sub = parser.add_subparsers(dest="action", required=True)
    made = sub.add_parser(
        "make", help="a fresh anvil, the chain, and every case file in contracts/conformance/"
    )
    made.add_argument("--rpc", help="a fresh anvil to use (chain id 31337), else one is started")
    again = sub.add_parser("replay", help="replay contracts/conformance/chain.json on a fresh anvil")
    again.add_argument("--rpc", default="http://127.0.0.1:8545")
    args = parser.parse_args(argv)
    if args.action == "make":
        print(f"{len(make(rpc_url=args.rpc))} cases in {HERE}")
    else:
        replay(args.rpc, json.loads((HERE / "chain.json").read_text()))
        print("replayed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
