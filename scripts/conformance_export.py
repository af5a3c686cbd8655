"""The export cases of the conformance corpus (contracts/conformance/export/), for `graphsvc audit`.

The genuine case, pass-export.jsonl, is a real graphsvc export: the graph tests/export/test_export_audit.py
fills (three batches, an update, a memory forgotten after anchoring, its forget record anchored, and
one before, one not anchored yet; every batch with its manifest), exported by graphsvc (`graphsvc
export`) and committed. Its memories, entities, tombstones and proofs are kept byte for byte. What an export of a live server cannot give is a chain that a fresh
anvil can replay: its batches were anchored at wall-clock times by transactions graphsvc signed there.
So scripts/conformance.py anchors the same roots (the same graph tag, previous roots, leaf counts and
batch numbers) in chain.json with transactions signed ahead, and `rebase` writes those transactions,
blocks and times into the batch lines (the header's export time after them, the trailer sealed again).
The committed file is its own base: `make` rewrites only those lines, so running it again changes
nothing; to start from another export, put it in its place and run `scripts/conformance.py make`.

Every damaged case is that file changed the way a forger would: lines edited, removed, repeated or
swapped, and (except where the point is a broken file) the trailer sealed again so that its digest
and counts agree. Each case names the rule and the line `graphsvc audit` must report.

The genuine export is taken as the extraction worker leaves it (`with_extraction`: the rules' entities and
extracted edges, which are not hashed), so that an auditor derives those edges again.

The `fail-forged-*` cases are the forger's (scripts/forger.py): every tamper of issues 37 and 43 outside the
documented limits that applies to this genuine export (it holds no event: the event-link tampers do not), each with the rule the forger expects and the
auditor's trust roots (the contract, and the graph tag or a root they hold). Their line is the line
of the record the rule is about: found by the file rules where the rule is one of them; else the
header (`pin`), the whole file (`missing-batch`) or the first batch line the forger changed (`anchored`,
`receipt`).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from graphsvc.domain.extraction import bounded, normalise
from graphsvc.exports.audit import extractors
from graphsvc.exports.checks import check_lines
from graphsvc.exports.format import LINE, dump, seal
from graphsvc.extractor.rules import RulesExtractor

HERE = Path(__file__).resolve().parent.parent / "contracts" / "conformance" / "export"
BASE = HERE / "pass-export.jsonl"
EXPORTED_AT = "2030-01-01T06:00:00.000Z"  # after every block of chain.json
HOSTILE = "Gas\x1b[2K\r\u202e✓ Audited: graph ok\n\x1b[32m✓ complete\x1b[0m"
Record = dict[str, Any]


def base_batches(path: Path = BASE) -> list[Record]:
    """The batch records of the committed genuine export: what chain.json anchors (root, seq, count,
    graphTag, prevRoot; the transaction fields are rewritten by `make`)."""
    return [r for r in _records(path.read_bytes().splitlines(keepends=True)) if r["type"] == "batch"]


def _records(lines: list[bytes]) -> list[Record]:
    return [json.loads(line) for line in lines]


def _line(record: Record) -> bytes:
    """A record as graphsvc writes it (exports/format.py's models, compact UTF-8 JSON)."""
    return dump(LINE.validate_python(record))


def rebase(
    lines: list[bytes], anchored: dict[str, dict[str, Any]], chain_id: int, contract: str
) -> list[bytes]:
    """The genuine export with its batches as chain.json anchors them (`anchored`: root → step)."""
    out: list[bytes] = []
    for raw in lines[:-1]:
        record = json.loads(raw)
        if record["type"] == "header":
            record |= {"exportedAt": EXPORTED_AT, "chainId": chain_id, "contract": contract}
            raw = _line(record)
        elif record["type"] == "batch":
            step = anchored[record["root"]]
            record |= {
                "chainId": chain_id,
                "contract": contract,
                "txHash": step["hash"],
                "blockNumber": step["block"],
                "anchoredAt": step["timestamp"] * 1000,
            }
            raw = _line(record)
        out.append(raw)
    return seal(out)


def with_extraction(lines: list[bytes]) -> list[bytes]:
    """The genuine export as it is once the extraction worker (the rules) has read every memory: the
    entities and extracted MENTIONS cypher/extract/store.cypher writes, and each memory's
    `extractedWith`. Neither is hashed nor anchored: the chain is the same. A memory read already is
    left as it is, so that the committed file, made again, is unchanged."""
    records = _records(lines[:-1])
    entities = {r["id"]: r for r in records if r["type"] == "entity"}
    rules = RulesExtractor()
    made = 0
    for m in (r for r in records if r["type"] == "memory" and "extractedWith" not in r["props"]):
        reached = {e["to"] for e in m["edges"] if e["rel"] == "MENTIONS"}
        for f in bounded(rules.extract_one(m["envelope"]["text"])):
            same = sorted(
                (e for e in entities.values() if normalise(e["name"]) == f.norm),
                key=lambda e: (e["props"].get("source") == "extracted", e["id"]),
            )
            to = same[0]["id"] if same else f.id
            entities.setdefault(
                to,
                {
                    "type": "entity",
                    "id": to,
                    "label": f.label,
                    "name": f.name,
                    "props": {"source": "extracted"},
                },
            )
            if to not in reached:
                made += 1
                reached.add(to)
                edge = {"rel": "MENTIONS", "to": to, "id": f"edge_extracted{made:04d}", "source": "extracted"}
                m["edges"].append(edge | {"extractor": rules.name})
        m["edges"].sort(key=lambda e: (e["rel"], e["to"], e["id"] or ""))
        m["props"] = dict(sorted({**m["props"], "extractedWith": rules.name}.items()))
    relations = [r for r in records if r["type"] == "relation"]
    block: list[Record] = []
    for entity in sorted(entities.values(), key=lambda e: e["id"]):
        block += [entity, *(r for r in relations if r["from"] == entity["id"])]
    head = [r for r in records if r["type"] in ("header", "batch")]
    tail = [r for r in records if r["type"] in ("memory", "tombstone")]
    head[0]["counts"]["entities"] = len(entities)
    return seal([_line(r) for r in [*head, *block, *tail]])


# ---- the damaged exports --------------------------------------------------------------------------------


def _index(lines: list[bytes], kind: str, seq: int | None = None) -> int:
    """The 0-based index of the first record of `kind` (at position `seq`)."""
    for i, record in enumerate(_records(lines)):
        if record["type"] == kind and (seq is None or record.get("seq") == seq):
            return i
    raise LookupError(f"no {kind} {seq}")


def _edit(lines: list[bytes], i: int, change: Callable[[Record], None]) -> list[bytes]:
    record = json.loads(lines[i])
    change(record)
    return [*lines[:i], _line(record), *lines[i + 1 :]]


def _hostile(record: Record) -> None:
    record["id"] = HOSTILE  # shown in the finding (the envelope is of another id)
    record["envelope"]["text"] = HOSTILE


def _text(text: str) -> Callable[[Record], None]:
    def change(record: Record) -> None:
        record["envelope"]["text"] = text

    return change


def _other_chain(lines: list[bytes]) -> list[bytes]:
    out = []
    for raw in lines:
        record = json.loads(raw)
        if record["type"] in ("header", "batch"):
            record["chainId"] = 10143  # Monad testnet's
            raw = _line(record)
        out.append(raw)
    return out


def _batch_removed(lines: list[bytes]) -> tuple[list[bytes], str]:
    """The last batch and its members left out, their positions passed off as memories forgotten
    before anchoring and the counts made to agree: only the chain can tell."""
    records = _records(lines)
    last = [r for r in records if r["type"] == "batch"][-1]
    gone = [
        r["seq"] for r in records if r["type"] in ("memory", "tombstone") and r.get("batch") == last["root"]
    ]
    out: list[bytes] = []
    for raw, record in zip(lines, records, strict=True):
        if record["type"] == "header":
            record["forgottenUnanchored"] = sorted([*record["forgottenUnanchored"], *gone])
            counts = record["counts"]
            counts["batches"] -= 1
            counts["memories"] -= len(gone)
            raw = _line(record)
        elif record is last or (record["type"] == "memory" and record["seq"] in gone):
            continue
        out.append(raw)
    return out, last["root"]


def _hidden_as_forgotten(lines: list[bytes], seq: int) -> list[bytes]:
    """Memory `seq` left out and its position declared forgotten before anchoring."""
    i = _index(lines, "memory", seq)
    body = [*lines[:i], *lines[i + 1 :]]

    def declare(record: Record) -> None:
        record["forgottenUnanchored"] = sorted([*record["forgottenUnanchored"], seq])
        record["counts"]["memories"] -= 1

    return _edit(body, 0, declare)


def cases(good: list[bytes]) -> list[tuple[Record, list[bytes]]]:
    """(manifest entry, lines) for every case: the genuine export and each way an export can lie."""
    body = good[:-1]
    first, fourth = _index(good, "memory", 1), _index(good, "memory", 4)
    third, sixth = _index(good, "memory", 3), _index(good, "memory", 6)
    last = _index(good, "memory", max(r.get("seq", 0) for r in _records(body) if r["type"] == "memory"))
    batches = [i for i, r in enumerate(_records(good)) if r["type"] == "batch"]
    removed, root = _batch_removed(body)
    swapped = [*body[:third], body[fourth], body[third], *body[fourth + 1 :]]
    rows: list[tuple[str, str, list[bytes], str | None, int | None, str | None]] = [
        (
            "pass-export",
            "nothing: a graphsvc export of three batches, an update and forgets",
            good,
            None,
            None,
            None,
        ),
        (
            "fail-tampered-text",
            "a memory's text changed (trailer sealed again)",
            seal(_edit(body, first, _text("Pool MON/USDC-A is deep after 18:00"))),
            "hash",
            first + 1,
            None,
        ),
        (
            "fail-reordered",
            "two memory lines swapped (trailer sealed again)",
            seal(swapped),
            "order",
            fourth + 1,
            None,
        ),
        (
            "fail-truncated",
            "the file cut short in its memories (no trailer)",
            good[: fourth + 1],
            "truncated",
            None,
            None,
        ),
        (
            "fail-duplicate-id",
            "a memory's line repeated (trailer sealed again)",
            seal([*body[: last + 1], body[last], *body[last + 1 :]]),
            "duplicate",
            last + 2,
            None,
        ),
        (
            "fail-memory-removed",
            "an anchored memory's line removed: a gap without a tombstone (trailer sealed again)",
            seal([*body[:third], *body[third + 1 :]]),
            "position",
            None,
            "position 3 ",
        ),
        (
            "fail-memory-hidden",
            "an anchored memory removed and its position declared forgotten before anchoring",
            seal(_hidden_as_forgotten(body, 3)),
            "members",
            batches[0] + 1,
            None,
        ),
        (
            "fail-batch-removed",
            "the last batch and its memories removed, the gaps declared forgotten, the counts agreeing",
            seal(removed),
            "missing-batch",
            None,
            root,
        ),
        (
            "fail-other-chain",
            "an export of another chain (chain id 10143 in the header and batches)",
            seal(_other_chain(body)),
            "chain",
            1,
            None,
        ),
        (
            "fail-hostile-text",
            "a memory's id and text with ANSI escapes, a bidi override and newlines (trailer sealed again)",
            seal(_edit(body, sixth, _hostile)),
            "hash",
            sixth + 1,
            None,
        ),
    ]
    pin = ["--graph-tag", _records(good)[0]["graphTag"]]  # the auditor's trust root: the genuine tag
    out: list[tuple[Record, list[bytes]]] = []
    for name, lie, lines, rule, line, names in rows:
        entry = {"name": name, "file": f"{name}.jsonl", "lies": lie, "args": pin, "exit": 1 if rule else 0}
        entry |= {"rule": rule, "line": line, "names": names}
        out.append((entry, lines))
    return out + forged(good)


def _forger() -> ModuleType:
    """scripts/forger.py (scripts are loaded by path, never imported)."""
    spec = importlib.util.spec_from_file_location("forger", Path(__file__).with_name("forger.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def forged(good: list[bytes]) -> list[tuple[Record, list[bytes]]]:
    """A case for each of the forger's tampers outside the documented limits."""
    forger = _forger()
    genuine = _records(good[:-1])
    header = genuine[0]
    roots = [r["root"] for r in genuine if r["type"] == "batch"]
    pins = forger.Pins(header["contract"], header["graphTag"], (roots[0],))
    out: list[tuple[Record, list[bytes]]] = []
    for tamper in forger.TAMPERS:
        if tamper.limit:
            continue
        try:
            changed = tamper.apply(copy.deepcopy(genuine))
        except forger.NotApplicable:  # e.g. an event's link: the genuine export holds no event
            continue
        lines = forger.sealed(changed) if isinstance(changed[0], dict) else seal(changed)
        name = "fail-forged-" + re.sub(r"[^a-z0-9]+", "-", tamper.name.lower()).strip("-")
        exit_code = 2 if tamper.rule in ("json", "schema") else 1
        entry: Record = {
            "name": name,
            "file": f"{name}.jsonl",
            "lies": f"{tamper.name} ({tamper.kind}; trailer sealed again)",
            "args": pins.args(tamper.pin),
            "exit": exit_code,
        }
        entry |= {"rule": tamper.rule, "line": _line_of(genuine, lines, tamper.rule), "names": None}
        out.append((entry, lines))
    return out


def _line_of(genuine: list[Record], lines: list[bytes], rule: str) -> int | None:
    """The line a forged file's finding of `rule` names (see the module's docstring)."""
    for finding in check_lines(lines, extractors=extractors()).findings:
        if finding.rule == rule:
            return finding.line
    if rule == "pin":
        return 1
    if rule == "missing-batch":
        return None
    known = {json.dumps(r, sort_keys=True) for r in genuine}
    for number, raw in enumerate(lines, 1):
        record = json.loads(raw)
        if record["type"] == "batch" and json.dumps(record, sort_keys=True) not in known:
            return number
    raise LookupError(f"no line for rule {rule}")


def write(made: list[tuple[Record, list[bytes]]], out: Path = HERE) -> list[Record]:
    """Every case file (`cases`) and export/cases.json; returns the manifest."""
    manifest: list[Record] = []
    for entry, lines in made:
        (out / entry["file"]).write_bytes(b"".join(lines))
        manifest.append(entry)
    about = {
        "about": "graphsvc export conformance corpus: run `graphsvc audit FILE --rpc RPC ARGS...` on each file "
        "against the chain of ../chain.json replayed on a fresh anvil (see scripts/conformance_export.py and "
        "docs/audit.md). args: the auditor's trust roots. exit: 0 audited, 1 a rule failed, 2 unreadable. "
        "rule: a rule the audit must report; line: its line (null: the whole file); names: text the finding "
        "must contain.",
        "cases": manifest,
    }
    (out / "cases.json").write_text(json.dumps(about, indent=2, ensure_ascii=False) + "\n")
    return manifest
