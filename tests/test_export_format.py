"""The export format and the audit's file rules, without Neo4j or a chain: the committed JSON Schema,
and each way a file can be cut, reordered, repeated or changed, named with its line and rule."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from graphsvc import audit
from graphsvc.devstack.chain import CONTRACTS
from graphsvc.domain import export
from graphsvc.domain.export_check import check_lines, inert
from graphsvc.domain.hashing import memory_envelope, memory_hash
from graphsvc.domain.merkle import MerkleTree, memory_leaf

GRAPH = "ops"


def test_the_committed_json_schema_is_the_models() -> None:
    assert (CONTRACTS / "export.schema.json").read_text() == export.json_schema()


def _file(memories: int = 3) -> list[dict[str, Any]]:
    """A consistent export of one batch holding every memory (no chain needed for the file rules)."""
    rows = []
    for n in range(1, memories + 1):
        fields = {
            "id": f"mem_{n:04d}",
            "graph": GRAPH,
            "text": f"note {n}",
            "tags": [],
            "entities": [],
            "created_at": "2026-12-05T00:00:00.000Z",
        }
        rows.append((n, fields["id"], memory_hash(**fields), memory_envelope(**fields)))
    leaves = [memory_leaf(i, bytes.fromhex(h[2:])) for _, i, h, _ in rows]
    tree = MerkleTree.build(leaves)
    root = "0x" + tree.root.hex()
    contract = "0x" + "ab" * 20
    counts = {"batches": 1, "entities": 0, "relations": 0, "memories": memories, "tombstones": 0}
    records: list[dict[str, Any]] = [
        {
            "type": "header",
            "format": "graphsvc.export/v1",
            "graph": GRAPH,
            "graphTag": "0x" + "11" * 32,
            "chainId": 31337,
            "contract": contract,
            "exportedAt": "2026-12-05T01:00:00.000Z",
            "lastSeq": memories,
            "forgottenUnanchored": [],
            "counts": counts,
        },
        {
            "type": "batch",
            "root": root,
            "seq": 1,
            "count": memories,
            "graphTag": "0x" + "11" * 32,
            "prevRoot": "0x" + "00" * 32,
            "chainId": 31337,
            "contract": contract,
            "txHash": "0x" + "22" * 32,
            "blockNumber": 5,
            "anchoredAt": 1_700_000_000_000,
        },
    ]
    for (seq, memory_id, h, envelope), leaf in zip(rows, leaves, strict=True):
        records.append(
            {
                "type": "memory",
                "seq": seq,
                "id": memory_id,
                "hash": h,
                "envelope": envelope,
                "batch": root,
                "proof": ["0x" + p.hex() for p in tree.proof(leaf)],
                "edges": [],
                "props": {},
            }
        )
    return records


def _lines(records: list[dict[str, Any]], trailer: bool = True) -> list[bytes]:
    body = [json.dumps(r).encode() + b"\n" for r in records]
    if not trailer:
        return body
    kinds = [r["type"] for r in records]
    counts = {
        "batches": kinds.count("batch"),
        "entities": kinds.count("entity"),
        "relations": kinds.count("relation"),
        "memories": kinds.count("memory"),
        "tombstones": kinds.count("tombstone"),
    }
    end = {
        "type": "trailer",
        "lines": len(body),
        "sha256": hashlib.sha256(b"".join(body)).hexdigest(),
        "counts": counts,
    }
    return [*body, json.dumps(end).encode() + b"\n"]


def _rules(lines: list[bytes]) -> set[tuple[int | None, str]]:
    return {(f.line, f.rule) for f in check_lines(lines).findings}


def test_a_consistent_file_passes_every_file_rule() -> None:
    checked = check_lines(_lines(_file()))
    assert checked.ok, checked.findings
    assert (checked.memories, checked.hashed, checked.proofs) == (3, 3, 3)


def test_each_way_a_file_lies_is_named_with_its_line_and_rule() -> None:
    records = _file()
    changed = json.loads(json.dumps(records))
    changed[3]["envelope"]["text"] = "note 9"
    assert (4, "hash") in _rules(_lines(changed))
    swapped = [records[0], records[1], records[3], records[2], records[4]]
    assert (4, "order") in _rules(_lines(swapped))
    twice = [*records, {**records[4], "seq": 4}]
    assert (6, "duplicate") in _rules(_lines(twice))
    assert (None, "truncated") in _rules(_lines(records, trailer=False))
    gone = [r for r in records if r.get("seq") != 2]
    assert {(2, "members"), (None, "position")} <= _rules(_lines(gone))
    bad_proof = json.loads(json.dumps(records))
    bad_proof[2]["proof"] = ["0x" + "33" * 32]
    assert (3, "proof") in _rules(_lines(bad_proof))
    other_graph = json.loads(json.dumps(records))
    other_graph[0]["graph"] = "elsewhere"
    assert (3, "graph") in _rules(_lines(other_graph))
    edited = _lines(records)
    edited[2] = edited[2].replace(b'"props": {}', b'"props": {"x": 1}')
    assert (6, "trailer") in _rules(edited)
    assert (1, "json") in _rules([b"{not json\n"])
    assert (1, "schema") in _rules([b'{"type": "header"}\n'])


def test_strings_from_the_file_are_shown_inert() -> None:
    hostile = "mem_\x1b[2J\u202eevil\nline"
    assert inert(hostile) == "mem_\\x1b[2J\\u202eevil\\nline"
    records = _file()
    records[0]["graph"] = "ops\x1b[31m"
    report = audit.audit(_lines(records), None)
    assert "\x1b" not in audit.render(report) and report.exit_code == 1


def test_every_property_a_link_accepts_fits_an_export_line() -> None:
    # link's props take strings, numbers, booleans or lists of one of those; an export line holds them
    # all (a list of booleans once broke the export stream mid-way: the fuzzer found it).
    props = {"s": "x", "b": True, "i": 3, "f": 0.5, "ls": ["a"], "lb": [True, False], "li": [1], "lf": [0.5]}
    line = export.RelationLine.model_validate(
        {"type": "relation", "id": None, "rel": "KNOWS", "from": "Person:a", "to": "Person:b", "props": props}
    )
    assert line.props == props and isinstance(line.props["lb"], list)
    assert [type(v) for v in line.props["lb"]] == [bool, bool]
