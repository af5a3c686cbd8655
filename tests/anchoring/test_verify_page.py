"""The verify page (graphsvc/web/verify.html) in real Chromium against real anvil: it checks what the
Python verifier (graphsvc.verifier) checks and agrees with it check by check on real and tampered
bundles, refuses bad input naming the same field, and its form works at /verify and from disk."""

from __future__ import annotations

import asyncio
import copy
import json
import socket
import subprocess
import time
import unicodedata
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Page

from graphsvc.chain.anchor import AnchorContract
from graphsvc.config import Settings
from graphsvc.devstack.chain import DEV_PRIVATE_KEY
from graphsvc.domain.checklist import CHECKS
from graphsvc.domain.merkle import memory_leaf
from graphsvc.domain.models import EntityIn, GraphInput, IdInput, RememberInput
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.memory import MemoryService
from graphsvc.verifier import BundleError, Rpc, load_bundle, verify_bundle
from tests.conftest import REPO, free_port

pytestmark = pytest.mark.neo4j

PAGE_FILE = REPO / "graphsvc" / "web" / "verify.html"
ALL_PASS = dict.fromkeys(CHECKS, True)
NOT_RUN = dict.fromkeys(CHECKS)
Bundle = dict[str, Any]
Outcome = dict[str, Any]  # {"checks": {key: ok}, "texts": {key: text}, "pinned": bool} or {"error", "field"}

# Run graphsvcVerify on many cases, six at a time (a browser holds six connections to a host; more would
# wait in its queue, on the clock of each call's timeout). Each case gives its checks, or the error it raised.
PAGE_RUN = """async ([cases, timeoutMs]) => {
  const one = ([bundle, rpc, pin]) => graphsvcVerify(bundle, rpc, pin, {timeoutMs}).then(
    (r) => ({checks: Object.fromEntries(r.checks.map((c) => [c.key, c.ok])),
             texts: Object.fromEntries(r.checks.map((c) => [c.key, c.text])), pinned: r.pinned}),
    (e) => ({error: e.name, field: e.field ?? null, message: e.message}));
  const out = [];
  let next = 0;
  const worker = async () => { while (next < cases.length) { const i = next++; out[i] = await one(cases[i]); } };
  await Promise.all([1, 2, 3, 4, 5, 6].map(worker));
  return out;
}"""


async def run_page(
    page: Page, cases: list[tuple[str | Bundle, str, str | None]], timeout_ms: int = 10_000
) -> list[Outcome]:
    return await page.evaluate(PAGE_RUN, [cases, timeout_ms])


def run_python(bundle: str | Bundle, rpc: str, pin: str | None = None, timeout_s: float = 10) -> Outcome:
    text = bundle if isinstance(bundle, str) else json.dumps(bundle)
    try:
        report = verify_bundle(load_bundle(text.encode()), Rpc(rpc, timeout_s), pin)
    except BundleError as e:
        return {"error": "BundleError", "message": str(e)}
    return {
        "checks": {c.key: c.ok for c in report.checks},
        "texts": {c.key: c.text for c in report.checks},
        "pinned": report.pinned,
    }


async def both(page: Page, bundle: Bundle, rpc: str, pin: str | None = None) -> list[Outcome]:
    return [run_python(bundle, rpc, pin), *await run_page(page, [(json.dumps(bundle), rpc, pin)])]


# ---- real anchors on the test anvil -----------------------------------------------------------------


@pytest.fixture(scope="module")
async def anchoring(store, settings: Settings) -> AsyncIterator[AnchoringService]:
    c = settings.chain
    assert c.rpc_url and c.private_key
    chain = AnchorContract(c.rpc_url, c.contract, c.private_key.get_secret_value(), c.chain_id)
    yield AnchoringService(store, chain, receipt_timeout_s=10, lease_ttl_s=5)
    await chain.close()


@pytest.fixture(scope="module")
async def other_contract(settings: Settings) -> str:
    """A second anchor contract on the same chain, where none of the test roots is anchored."""
    deployer = AnchorContract(settings.chain.rpc_url or "", None, DEV_PRIVATE_KEY)
    try:
        return (await deployer.deploy()).lower()
    finally:
        await deployer.close()


async def anchor_batch(
    memory: MemoryService, anchoring: AnchoringService, graph: str, inputs: list[RememberInput]
) -> list[Bundle]:
    """Remember `inputs` in `graph`, anchor them as one batch, and return each memory's bundle."""
    receipts = await memory.remember_many(inputs)
    assert {r.status for r in receipts} == {"created"}
    assert (await anchoring.anchor_now(GraphInput(graph=graph))).status == "anchored"
    made = await asyncio.gather(*(anchoring.bundle(IdInput(id=r.id, graph=graph)) for r in receipts))
    return [bundle.model_dump(mode="json") for bundle in made]


@dataclass(frozen=True)
class Scenario:
    good: Bundle  # one of a batch of three
    forgotten: Bundle  # another of that batch, forgotten after anchoring


@pytest.fixture(scope="module")
async def scenario(memory: MemoryService, anchoring: AnchoringService) -> Scenario:
    graph = "vp-scenario-" + str(time.time_ns())
    texts = ["USDC is the quote token", "to be forgotten", "and a third"]
    bundles = await anchor_batch(
        memory, anchoring, graph, [RememberInput(text=t, tags=["b", "a"], graph=graph) for t in texts]
    )
    await memory.forget(IdInput(id=bundles[1]["id"], graph=graph))
    forgotten = (await anchoring.bundle(IdInput(id=bundles[1]["id"], graph=graph))).model_dump(mode="json")
    return Scenario(bundles[0], forgotten)


@pytest.fixture(scope="module")
async def verify_page(chromium: Browser, server_url: str) -> AsyncIterator[Page]:
    """The page as graphsvc serves it at /verify."""
    page = await chromium.new_page()
    await page.goto(f"{server_url}/verify")
    yield page
    await page.close()


def rpc_of(settings: Settings) -> str:
    return settings.chain.rpc_url or ""


def flip(hex_text: str) -> str:
    return hex_text[:-1] + ("0" if hex_text[-1] != "0" else "1")


# ---- the cases, for both verifiers -------------------------------------------------------------


async def test_a_good_bundle_verifies_in_both_and_both_say_whether_the_contract_was_pinned(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    unpinned = await both(verify_page, scenario.good, rpc_of(settings))
    pinned = await both(verify_page, scenario.good, rpc_of(settings), settings.chain.contract)
    assert [(o["checks"], o["pinned"]) for o in unpinned] == [(ALL_PASS, False)] * 2
    assert [(o["checks"], o["pinned"]) for o in pinned] == [(ALL_PASS, True)] * 2


async def test_both_count_the_batch_manifest_as_a_leaf_beside_its_memories(
    verify_page: Page,
    scenario: Scenario,
    memory: MemoryService,
    anchoring: AnchoringService,
    settings: Settings,
) -> None:
    graph = "vp-one-" + str(time.time_ns())
    [alone] = await anchor_batch(
        memory, anchoring, graph, [RememberInput(text="a batch of one", graph=graph)]
    )
    # a batch sealed since forgets were anchored holds its manifest as one more leaf (domain/manifest.py)
    for bundle, count in ((alone, "2 leaves"), (scenario.good, "4 leaves")):
        anchor = bundle["anchor"]
        said = f"root anchored at the finalized block: batch {anchor['batchSeq']}, {count}, block {anchor['blockNumber']}"
        assert [o["texts"]["root"] for o in await both(verify_page, bundle, rpc_of(settings))] == [said, said]


async def test_one_changed_character_of_the_text_fails_at_the_hash_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    bundle = copy.deepcopy(scenario.good)
    bundle["envelope"]["text"] = bundle["envelope"]["text"].replace("USDC", "USDT")
    assert [o["checks"] for o in await both(verify_page, bundle, rpc_of(settings))] == [
        NOT_RUN | {"hash": False}  # the first check that fails stops the run
    ] * 2


async def test_a_changed_proof_step_fails_at_the_proof_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    bundle = copy.deepcopy(scenario.good)
    bundle["proof"][0] = flip(bundle["proof"][0])
    assert [o["checks"] for o in await both(verify_page, bundle, rpc_of(settings))] == [
        NOT_RUN | {"hash": True, "proof": False}
    ] * 2


async def test_a_root_never_anchored_fails_on_chain_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    bundle = copy.deepcopy(scenario.good)  # a consistent one-leaf tree of this memory, never anchored
    bundle["root"] = "0x" + memory_leaf(bundle["id"], bytes.fromhex(bundle["hash"][2:])).hex()
    bundle["proof"] = []
    expected = ALL_PASS | {"root": False, "event": None}
    assert [o["checks"] for o in await both(verify_page, bundle, rpc_of(settings))] == [expected] * 2


async def test_a_swapped_or_wrongly_pinned_contract_fails_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings, other_contract: str
) -> None:
    rpc, good = rpc_of(settings), scenario.good
    swapped = {**good, "anchor": {**good["anchor"], "contract": other_contract}}
    no_code = {**good, "anchor": {**good["anchor"], "contract": "0x" + "12" * 20}}
    refused = ALL_PASS | {"contract": False, "root": None, "event": None}
    assert [o["checks"] for o in await both(verify_page, good, rpc, other_contract)] == [refused] * 2
    assert [o["checks"] for o in await both(verify_page, swapped, rpc)] == [
        ALL_PASS | {"root": False, "event": None}
    ] * 2
    assert [o["checks"] for o in await both(verify_page, no_code, rpc)] == [refused] * 2


async def test_a_bundle_of_another_chain_fails_at_the_chain_check_naming_both_chains_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    bundle = copy.deepcopy(scenario.good)
    bundle["anchor"]["chainId"] = 10143  # Monad testnet's bundle, checked against the local chain (31337)
    expected = {"hash": True, "proof": True, "chain": False, "contract": None, "root": None, "event": None}
    for outcome in await both(verify_page, bundle, rpc_of(settings)):
        assert outcome["checks"] == expected
        assert "31337" in outcome["texts"]["chain"] and "10143" in outcome["texts"]["chain"]


async def test_a_forgotten_memorys_bundle_says_when_it_was_forgotten_and_its_anchor_still_checks_in_both(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    forgotten_at = scenario.forgotten["forgotten"]["forgottenAt"]
    assert scenario.forgotten["envelope"] is None
    for outcome in await both(verify_page, scenario.forgotten, rpc_of(settings)):
        assert outcome["checks"] == ALL_PASS | {"hash": None}  # not checkable; the rest run and pass
        assert forgotten_at in outcome["texts"]["hash"]


# ---- the agreement corpus -----------------------------------------------------------------------------

SAMPLES = [
    "café crème brûlée",  # precomposed in NFC, decomposed in NFD
    "Ångström, Øresund, Łódź",
    "한국어 문장",  # Hangul syllables: NFD splits each into jamo
    "Tiếng Việt có dấu",
    "مرحبا بالعالم، السيولة في المجمع",  # Arabic
    "שָׁלוֹם עוֹלָם",  # Hebrew with niqqud (combining marks)
    "mixed עברית and العربية with 123 and \u200fRLM\u200e",
    "👩\u200d💻🚀 emoji 🇫🇷 👍🏽 🏳️\u200d🌈",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 astral plane",  # noqa: RUF001 (lookalikes on purpose)
    "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǵ̴̩͆o̷ combining marks",
    'quotes " and \\ backslash \t tab\nnewline\r\n',
    "line\u2028separator\u2029paragraph",
    "</script><!-- not html --> & <b>",
    "日本語のテキスト、中文文本",
    "Ελληνικά κείμενα ΐ",
    "\ufeffa byte-order mark and zero\u200bwidth\u200djoiner",
]
ENTITY_NAMES = ["Ålice", "محمد", "דוד", "東京", "Zoë", "😀 Smiley", "e\u0301clair", "Ünïcødé"]


def _remember_input(i: int, graph: str) -> RememberInput:
    sample = SAMPLES[i % len(SAMPLES)]
    text = unicodedata.normalize("NFD" if i % 2 else "NFC", sample)  # stored NFC either way
    if i % 9 == 4:  # long texts, 4000 characters
        text = (text + " ") * (3990 // (len(text) + 1))
        text = text[:3990]
    text = f"{text} #{i}"
    tags = [] if i % 3 == 0 else [f"t{i % 5}", "étiquette", "标签", "وسم"][: 1 + i % 4]
    count = 100 if i % 10 == 7 else i % 4  # many entities now and then, else a few or none
    entities = [
        EntityIn(label=["Person", "Token", "Place"][j % 3], name=f"{ENTITY_NAMES[j % len(ENTITY_NAMES)]} {j}")
        for j in range(count)
    ]
    # now and then a graphsvc.memory/v2 envelope (validity given; null where not)
    temporal = {"validFrom": datetime(2020 + i % 5, 1 + i % 12, 1, tzinfo=UTC)} if i % 6 == 5 else {}
    if i % 12 == 11:
        temporal["validTo"] = datetime(2031, 1, 1, tzinfo=UTC)
    return RememberInput(text=text, tags=tags, entities=entities, graph=graph, **temporal)


# (name, tamper): each makes one change to a copy of a bundle; `ctx` has other bundles' values to borrow
TAMPERINGS: list[tuple[str, Callable[[Bundle, dict[str, Any]], None]]] = [
    ("text: one character", lambda b, ctx: b["envelope"].update(text="X" + b["envelope"]["text"][1:])),
    (
        "text: NFD form",
        lambda b, ctx: b["envelope"].update(text=unicodedata.normalize("NFD", b["envelope"]["text"])),
    ),
    ("text: trailing space", lambda b, ctx: b["envelope"].update(text=b["envelope"]["text"] + " ")),
    ("tags: one added", lambda b, ctx: b["envelope"].update(tags=[*b["envelope"]["tags"], "extra"])),
    ("tags: unsorted", lambda b, ctx: b["envelope"].update(tags=["z", *b["envelope"]["tags"]])),
    (
        "entities: one dropped",
        lambda b, ctx: b["envelope"].update(entities=b["envelope"]["entities"][1:] or ["Person:x"]),
    ),
    (
        "createdAt: a millisecond later",
        lambda b, ctx: b["envelope"].update(createdAt=b["envelope"]["createdAt"][:-2] + "9Z"),
    ),
    ("envelope: a key added", lambda b, ctx: b["envelope"].update(extra="x")),
    ("envelope: an integer beyond 2^53", lambda b, ctx: b["envelope"].update(n=2**60)),
    ("envelope: a float", lambda b, ctx: b["envelope"].update(n=1.5)),
    ("envelope: another memory's id", lambda b, ctx: b["envelope"].update(id=ctx["other"]["id"])),
    ("id: another memory's", lambda b, ctx: b.update(id=ctx["other"]["id"])),
    ("hash: another memory's", lambda b, ctx: b.update(hash=ctx["other"]["hash"])),
    (
        "proof: a step changed",
        lambda b, ctx: b.update(
            proof=[flip(p) for p in b["proof"][:1]] + b["proof"][1:] or [ctx["other"]["hash"]]
        ),
    ),
    (
        "proof: the last step dropped",
        lambda b, ctx: b.update(proof=b["proof"][:-1] or [ctx["other"]["hash"]]),
    ),
    ("proof: steps reversed", lambda b, ctx: b.update(proof=b["proof"][::-1])),
    ("root: another batch's", lambda b, ctx: b.update(root=ctx["other"]["root"])),
    (
        "root: its own leaf, never anchored",
        lambda b, ctx: b.update(
            root="0x" + memory_leaf(b["id"], bytes.fromhex(b["hash"][2:])).hex(), proof=[]
        ),
    ),
    ("anchor: next block", lambda b, ctx: b["anchor"].update(blockNumber=b["anchor"]["blockNumber"] + 1)),
    ("anchor: another batch number", lambda b, ctx: b["anchor"].update(batchSeq=b["anchor"]["batchSeq"] + 1)),
    ("anchor: one more leaf", lambda b, ctx: b["anchor"].update(leafCount=b["anchor"]["leafCount"] + 1)),
    (
        "anchor: a millisecond later",
        lambda b, ctx: b["anchor"].update(anchoredAt=b["anchor"]["anchoredAt"] + 1),
    ),
    (
        "anchor: another batch's transaction",
        lambda b, ctx: b["anchor"].update(txHash=ctx["other"]["anchor"]["txHash"]),
    ),
    ("anchor: a transaction that never was", lambda b, ctx: b["anchor"].update(txHash="0x" + "ab" * 32)),
    ("anchor: another contract", lambda b, ctx: b["anchor"].update(contract=ctx["other_contract"])),
    ("anchor: an address without code", lambda b, ctx: b["anchor"].update(contract="0x" + "12" * 20)),
    (
        "anchor: the contract in upper case",
        lambda b, ctx: b["anchor"].update(contract="0x" + b["anchor"]["contract"][2:].upper()),
    ),
    ("anchor: another chain", lambda b, ctx: b["anchor"].update(chainId=10143)),
    (
        "optional parts left out",
        lambda b, ctx: [b.pop(k) for k in ("abi", "hashRecipe", "leaf", "forgotten")],
    ),
]


@pytest.fixture(scope="module")
async def corpus(
    memory: MemoryService, anchoring: AnchoringService, other_contract: str, settings: Settings
) -> list[tuple[str, str, str | None]]:
    """257 (bundle text, label, pin) cases: 120 real bundles from five batches (1 to 70 memories, three
    forgotten after anchoring), a tampered copy of each of the other 117, and 20 run with a pin, right
    or wrong."""
    bundles: list[Bundle] = []
    i = 0
    for size in (1, 2, 7, 40, 70):
        graph = f"vp-corpus-{size}-{time.time_ns()}"
        bundles += await anchor_batch(
            memory, anchoring, graph, [_remember_input(i + k, graph) for k in range(size)]
        )
        i += size
    for n in (0, 5, 60):  # forgotten: their bundles carry a tombstone, no envelope
        graph = bundles[n]["envelope"]["graph"]
        await memory.forget(IdInput(id=bundles[n]["id"], graph=graph))
        bundles[n] = (await anchoring.bundle(IdInput(id=bundles[n]["id"], graph=graph))).model_dump(
            mode="json"
        )
    cases: list[tuple[str, str, str | None]] = []
    for n, bundle in enumerate(bundles):
        ascii_only = n % 2 == 0  # \\u escapes and raw UTF-8 both
        cases.append((json.dumps(bundle, ensure_ascii=ascii_only), "real", None))
        if bundle["envelope"] is None:
            continue
        name, tamper = TAMPERINGS[n % len(TAMPERINGS)]
        tampered = copy.deepcopy(bundle)
        tamper(tampered, {"other": bundles[(n + 50) % len(bundles)], "other_contract": other_contract})
        cases.append((json.dumps(tampered, ensure_ascii=ascii_only), name, None))
    contract = settings.chain.contract or ""
    for n in range(0, len(bundles), 12):
        cases.append((json.dumps(bundles[n]), "pinned", contract.upper().replace("0X", "0x")))
        cases.append((json.dumps(bundles[n + 1]), "pinned to another contract", other_contract))
    return cases


async def test_the_page_and_the_python_verifier_agree_on_every_check_of_real_and_tampered_bundles(
    verify_page: Page, corpus: list[tuple[str, str, str | None]], settings: Settings
) -> None:
    rpc = rpc_of(settings)
    assert len(corpus) == 257
    python, page = await asyncio.gather(
        asyncio.gather(*(asyncio.to_thread(run_python, text, rpc, pin) for text, _, pin in corpus)),
        run_page(verify_page, [(text, rpc, pin) for text, _, pin in corpus]),
    )
    disagreements = [
        (label, p, b)
        for (_, label, _), p, b in zip(corpus, python, page, strict=True)
        if p.get("checks") != b.get("checks") or p.get("pinned") != b.get("pinned")
    ]
    assert not disagreements, json.dumps(disagreements, indent=1, ensure_ascii=False)
    # the corpus exercises every check: verified bundles, and failures first at each of the six checks
    first_failures = {next((k for k, ok in p["checks"].items() if ok is False), "verified") for p in python}
    assert first_failures == {*CHECKS, "verified"}


# ---- bad input ----------------------------------------------------------------------------------------


def _edit(change: Callable[[Bundle], Any]) -> Callable[[Bundle], str]:
    def build(bundle: Bundle) -> str:
        edited = copy.deepcopy(bundle)
        change(edited)
        return json.dumps(edited)

    return build


# (what, bundle text from a good bundle, the field both name, or the start of both messages)
BAD_BUNDLES: list[tuple[str, Callable[[Bundle], str], str]] = [
    ("not JSON", lambda b: "{", "not JSON"),
    ("truncated", lambda b: json.dumps(b)[:200], "not JSON"),
    ("10 MB", lambda b: " " * 10_000_001, "10,000,001 bytes"),
    ("a list", lambda b: "[]", "not a proof bundle"),
    (
        "bundle v1",
        lambda b: json.dumps({**b, "schema": "graphsvc.proof/v1"}),
        "schema is 'graphsvc.proof/v1'",
    ),
    ("block as text", _edit(lambda b: b["anchor"].update(blockNumber="twelve")), "anchor.blockNumber"),
    ("chain id as a numeric string", _edit(lambda b: b["anchor"].update(chainId="31337")), "anchor.chainId"),
    ("batch number true", _edit(lambda b: b["anchor"].update(batchSeq=True)), "anchor.batchSeq"),
    ("no leaves", _edit(lambda b: b["anchor"].update(leafCount=0)), "anchor.leafCount"),
    ("block 2^64", _edit(lambda b: b["anchor"].update(blockNumber=2**64)), "anchor.blockNumber"),
    ("block 1e20, a float", _edit(lambda b: b["anchor"].update(blockNumber=1e20)), "anchor.blockNumber"),
    ("hash in upper case", _edit(lambda b: b.update(hash=b["hash"].upper().replace("0X", "0x"))), "hash"),
    ("a short proof step", _edit(lambda b: b.update(proof=["0x12"])), "proof.0"),
    ("65 proof steps", _edit(lambda b: b.update(proof=[b["hash"]] * 65)), "proof"),
    ("an extra field", _edit(lambda b: b.update(note="trust me")), "note"),
    ("an extra anchor field", _edit(lambda b: b["anchor"].update(gas=1)), "anchor.gas"),
    ("no anchor", _edit(lambda b: b.pop("anchor")), "anchor"),
    ("an id of 301 characters", _edit(lambda b: b.update(id="😀" * 301)), "id"),
    ("a lone surrogate in the id", _edit(lambda b: b.update(id="mem_\ud800")), "id"),
    ("envelope and forgotten", _edit(lambda b: b.update(forgotten={"forgottenAt": "now"})), "bundle"),
    ("envelope a list", _edit(lambda b: b.update(envelope=[])), "envelope"),
    ("abi null", _edit(lambda b: b.update(abi=None)), "abi"),
    (
        "a long explorer URL",
        _edit(lambda b: b["anchor"].update(explorerUrl="https://x/" + "a" * 503)),
        "anchor.explorerUrl",
    ),
]


async def test_bad_bundles_are_refused_by_both_naming_the_same_field(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    texts = [build(scenario.good) for _, build, _ in BAD_BUNDLES]
    page = await run_page(verify_page, [(text, rpc_of(settings), None) for text in texts])
    for (what, _, expected), text, browser in zip(BAD_BUNDLES, texts, page, strict=True):
        python = run_python(text, rpc_of(settings))
        assert python["error"] == browser["error"] == "BundleError", what
        if expected[0].islower() and " " not in expected:  # a field path
            assert (python["message"].split(": ")[0], browser["field"]) == (expected, expected), what
        else:
            assert python["message"].startswith(expected) and browser["message"].startswith(expected), what


async def test_an_id_of_300_emoji_is_read_by_both_as_python_counts_characters(
    verify_page: Page, scenario: Scenario, settings: Settings
) -> None:
    bundle = {**scenario.good, "id": "😀" * 300}  # 600 UTF-16 code units in JavaScript
    expected = NOT_RUN | {"hash": False}
    assert [o["checks"] for o in await both(verify_page, bundle, rpc_of(settings))] == [expected] * 2


async def test_an_unreachable_silent_or_wrong_rpc_could_not_check_the_chain_in_both_within_the_timeout(
    verify_page: Page, scenario: Scenario, server_url: str
) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        rpcs = [
            f"http://127.0.0.1:{free_port()}",
            f"http://127.0.0.1:{silent.getsockname()[1]}",
            f"{server_url}/health",  # answers, but HTTP 405: not a JSON-RPC endpoint
        ]
        started = time.monotonic()
        page = await run_page(verify_page, [(scenario.good, rpc, None) for rpc in rpcs], timeout_ms=1000)
        python = [run_python(scenario.good, rpc, timeout_s=1) for rpc in rpcs]
        assert time.monotonic() - started < 10
    expected = {"hash": True, "proof": True, "chain": None, "contract": None, "root": None, "event": None}
    assert [o["checks"] for o in page + python] == [expected] * 6
    assert all(o["texts"]["chain"].startswith("could not check: ") for o in page + python)


async def test_an_rpc_url_that_is_not_http_is_refused_before_any_check(
    verify_page: Page, scenario: Scenario
) -> None:
    [outcome] = await run_page(verify_page, [(scenario.good, "ftp://127.0.0.1/", None)])
    assert outcome["error"] == "RpcError"
    [outcome] = await run_page(verify_page, [(scenario.good, "http://127.0.0.1:1/", "0x1234")])
    assert outcome["error"] == "InputError"  # a pin is 0x and 40 hex digits


# ---- the form, served at /verify and opened from disk ----------------------------------------------------


async def _verify_in_form(page: Page, bundle: str, rpc: str, contract: str = "") -> dict[str, str]:
    """Paste, type, click Verify; the checklist shown, {key: "true" | "false" | "null"}."""
    await page.fill("#bundle", bundle)
    await page.fill("#rpc", rpc)
    await page.fill("#contract", contract)
    await page.click("#verify")
    await page.wait_for_selector("#result:not([hidden])", timeout=30_000)
    items = await page.query_selector_all("#checks li")
    return {await li.get_attribute("data-key") or "": await li.get_attribute("data-ok") or "" for li in items}


async def test_the_form_at_verify_ticks_a_good_bundle_crosses_a_tampered_one_and_talks_only_to_the_rpc(
    chromium: Browser, server_url: str, scenario: Scenario, settings: Settings, tmp_path: Path
) -> None:
    page = await chromium.new_page(viewport={"width": 1000, "height": 900})
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    await page.goto(f"{server_url}/verify")
    shown = await _verify_in_form(page, json.dumps(scenario.good, indent=2), rpc_of(settings))
    assert shown == dict.fromkeys(CHECKS, "true")
    assert await page.is_visible("#note")  # the contract came from the bundle only, and the page says so
    await page.screenshot(path=tmp_path / "good.png", full_page=True)

    tampered = copy.deepcopy(scenario.good)
    tampered["envelope"]["text"] = tampered["envelope"]["text"].replace("USDC", "USDT")
    shown = await _verify_in_form(page, json.dumps(tampered, indent=2), rpc_of(settings))
    assert shown == dict.fromkeys(CHECKS, "null") | {"hash": "false"}  # the rest: not checked
    assert await page.get_attribute("#result", "class") == "failed"
    assert "USDT" in await page.inner_text("#content")  # what the bundle claims is shown
    await page.screenshot(path=tmp_path / "tampered.png", full_page=True)
    assert hosts == {urlsplit(server_url).netloc, urlsplit(rpc_of(settings)).netloc}
    await page.close()


async def test_the_page_opened_from_disk_verifies_a_bundle_with_the_contract_pinned(
    chromium: Browser, scenario: Scenario, settings: Settings
) -> None:
    page = await chromium.new_page()
    await page.goto(PAGE_FILE.as_uri())
    pinned = await _verify_in_form(
        page, json.dumps(scenario.good), rpc_of(settings), settings.chain.contract or ""
    )
    assert pinned == dict.fromkeys(CHECKS, "true")
    assert not await page.is_visible("#note")
    await page.close()


async def test_a_dropped_10_mb_file_is_refused_without_being_read(chromium: Browser, tmp_path: Path) -> None:
    big = tmp_path / "bundle.json"
    big.write_bytes(b" " * 10_000_000)
    page = await chromium.new_page()
    await page.goto(PAGE_FILE.as_uri())
    await page.set_input_files("#file", big)
    await page.wait_for_selector("#error:not([hidden])", timeout=10_000)
    assert await page.input_value("#bundle") == ""
    await page.close()


# ---- how the page is built and served --------------------------------------------------------------------


@pytest.mark.processes
def test_the_committed_page_is_a_fresh_build_of_its_source() -> None:
    done = subprocess.run(
        ["node", "contracts/verifier/build.mjs", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_verify_is_served_as_the_committed_page_and_left_out_of_the_api_schema(server_url: str) -> None:
    served = httpx.get(f"{server_url}/verify")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/html")
    assert served.text == PAGE_FILE.read_text(encoding="utf-8")
    assert "/verify" not in httpx.get(f"{server_url}/openapi.json").json()["paths"]
