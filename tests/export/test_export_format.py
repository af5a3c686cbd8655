"""The export format and the audit's file rules, without Neo4j or a chain: the committed JSON Schema,
and each way a file can be cut, reordered, repeated or changed, named with its line and rule."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from graphsvc.devstack.chain import CONTRACTS
from graphsvc.domain.extraction import Mention, mention
from graphsvc.domain.hashing import memory_envelope, memory_hash
from graphsvc.domain.manifest import manifest_leaf
from graphsvc.domain.merkle import MerkleTree, memory_leaf
from graphsvc.exports import audit
from graphsvc.exports import format as export
from graphsvc.exports import render as audit_render
from graphsvc.exports.checks import check_lines, inert
from graphsvc.exports.findings import MAX_KEPT
from graphsvc.exports.lines import bounded_lines

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
    assert "\x1b" not in audit_render.render(report) and report.exit_code == 2  # not a graph name: unreadable


def test_every_property_a_link_accepts_fits_an_export_line() -> None:
    # link's props take strings, numbers, booleans or lists of one of those; an export line holds them
    # all (a list of booleans once broke the export stream mid-way: the fuzzer found it).
    props = {"s": "x", "b": True, "i": 3, "f": 0.5, "ls": ["a"], "lb": [True, False], "li": [1], "lf": [0.5]}
    line = export.RelationLine.model_validate(
        {"type": "relation", "id": None, "rel": "KNOWS", "from": "Person:a", "to": "Person:b", "props": props}
    )
    assert line.props == props and isinstance(line.props["lb"], list)
    assert [type(v) for v in line.props["lb"]] == [bool, bool]


def _genuine() -> list[bytes]:
    return [json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in _file()]


def _with(body: list[bytes], index: int, raw: bytes) -> list[bytes]:
    """The genuine records with line `index` (0-based) replaced and the trailer sealed over the result,
    as a forger who knows the format would."""
    lines = [*body[:index], raw, *body[index + 1 :]]
    digest = hashlib.sha256(b"".join(lines)).hexdigest()
    counts = {"batches": 1, "entities": 0, "relations": 0, "memories": 3, "tombstones": 0}
    end = {"type": "trailer", "lines": len(lines), "sha256": digest, "counts": counts}
    return [*lines, json.dumps(end).encode() + b"\n"]


@functools.cache
def _malformed() -> dict[str, tuple[list[bytes], int]]:
    """Each way a line can be malformed: (the file, the 1-based line that must be named)."""
    body = _genuine()
    memory = body[2]
    header = json.loads(body[0])
    record = json.loads(memory)

    def header_with(**changes: Any) -> bytes:
        return json.dumps(header | changes).encode() + b"\n"

    def memory_with(**changes: Any) -> bytes:
        return json.dumps(record | changes).encode() + b"\n"

    forged = json.loads(memory)
    genuine_hash = forged["hash"]
    forged_first = memory.replace(
        b'"hash":"' + genuine_hash.encode() + b'"',
        b'"hash":"0x' + b"ab" * 32 + b'","hash":"' + genuine_hash.encode() + b'"',
    )
    deep = 100_000  # as deep as py_ecc's recursion limit let the C parser go: a segfault once
    return {
        "not JSON": (_with(body, 2, b'{"type":"memory",\n'), 3),
        "a key twice (first forged, last genuine)": (_with(body, 2, forged_first), 3),
        "CR LF": (_with(body, 2, memory[:-1] + b"\r\n"), 3),
        "a CR alone": (_with(body, 2, memory[:-1] + b"\r"), 3),
        "a blank line": ([*body[:2], b"\n", *body[2:]], 3),
        "a byte order mark": (_with(body, 0, b"\xef\xbb\xbf" + body[0]), 1),
        "bytes that are not UTF-8": (_with(body, 2, memory.replace(b"note 1", b"note \xff")), 3),
        "a NUL byte": (_with(body, 2, memory.replace(b"note 1", b"note \x00")), 3),
        "a line of 10 MB": (_with(body, 2, memory[:-2] + b" " * 10_000_000 + b"}\n"), 3),
        "arrays nested 100,000 deep": (_with(body, 2, b"[" * deep + b"]" * deep + b"\n"), 3),
        "objects nested 100,000 deep": (_with(body, 2, b'{"a":' * deep + b"1" + b"}" * deep + b"\n"), 3),
        "an array, not an object": (_with(body, 2, b"[1,2]\n"), 3),
        "null, not an object": (_with(body, 2, b"null\n"), 3),
        "a record of no type the format has": (_with(body, 2, memory.replace(b'"memory"', b'"note"')), 3),
        "an unknown field": (_with(body, 2, memory_with(extra=1)), 3),
        "a position as a string": (_with(body, 2, memory.replace(b'"seq":1,', b'"seq":"1",')), 3),
        "a position as a float": (_with(body, 2, memory.replace(b'"seq":1,', b'"seq":1.0,')), 3),
        "a negative position": (_with(body, 2, memory.replace(b'"seq":1,', b'"seq":-1,')), 3),
        "position 0": (_with(body, 2, memory.replace(b'"seq":1,', b'"seq":0,')), 3),
        "the envelope a string": (_with(body, 2, memory_with(envelope="{}")), 3),
        "the proof a string": (_with(body, 2, memory_with(proof="0x" + "ab" * 32)), 3),
        "a proof step not hex": (_with(body, 2, memory_with(proof=["0x" + "zz" * 32])), 3),
        "a hash in capitals": (_with(body, 2, memory_with(hash=genuine_hash.upper().replace("0X", "0x"))), 3),
        "edges an object": (_with(body, 2, memory_with(edges={})), 3),
        "tags of numbers": (
            _with(body, 2, memory_with(envelope=record["envelope"] | {"tags": [1, 2]})),
            3,
        ),
        "lastSeq past 2**53": (_with(body, 0, header_with(lastSeq=2**60)), 1),
        "a negative lastSeq": (_with(body, 0, header_with(lastSeq=-1)), 1),
        "a chain id past 2**64": (_with(body, 0, header_with(chainId=2**64)), 1),
        "a leaf count past 2**32": (_with(body, 1, body[1].replace(b'"count":3', b'"count":4294967296')), 2),
        "a negative block number": (
            _with(body, 1, body[1].replace(b'"blockNumber":5', b'"blockNumber":-5')),
            2,
        ),
        "an integer of 30 digits": (
            _with(body, 1, body[1].replace(b'"blockNumber":5', b'"blockNumber":' + b"9" * 30)),
            2,
        ),
        "a number too large for a double": (
            _with(body, 2, memory.replace(b'"props":{}', b'"props":{"x":1e400}')),
            3,
        ),
        "NaN": (_with(body, 2, memory.replace(b'"props":{}', b'"props":{"x":NaN}')), 3),
        "a lone surrogate": (
            _with(body, 2, memory.replace(b'"props":{}', b'"props":{"source":"\\ud800"}')),
            3,
        ),
        "exportedAt not ISO": (_with(body, 0, header_with(exportedAt="yesterday at noon")), 1),
        "exportedAt without a zone": (_with(body, 0, header_with(exportedAt="2026-12-05T01:00:00")), 1),
        "exportedAt on 30 February": (_with(body, 0, header_with(exportedAt="2026-02-30T01:00:00.000Z")), 1),
        "exportedAt in another zone": (
            _with(body, 0, header_with(exportedAt="2026-12-05T01:00:00.000+02:00")),
            1,
        ),
        "a hostile graph name": (_with(body, 0, header_with(graph="ops\x1b[2J\u202e\n")), 1),
        "a hostile type": (
            _with(body, 2, memory.replace(b'"type":"memory"', b'"type":"\\u001b[31mmemory"')),
            3,
        ),
        "a hostile key": (_with(body, 2, memory_with(**{"\x1b[2J\u202e": 1})), 3),
        "no line feed at the end": ([*_with(body, 2, memory)[:-1], _with(body, 2, memory)[-1][:-1]], 6),
    }


@pytest.mark.parametrize("what", list(_malformed()))
def test_every_malformed_export_cannot_be_read_and_names_its_line_inertly(what: str) -> None:
    lines, line = _malformed()[what]
    report = audit.audit(lines, None)
    shown = audit_render.render(report)
    assert report.exit_code == 2, shown
    assert (line, True) in {(f.line, f.rule in ("json", "schema")) for f in report.findings}, shown
    assert not any(f.rule == "trailer" for f in report.findings), shown  # no spurious digest finding
    assert all(c == "\n" or c.isprintable() for c in shown)
    as_json = json.dumps(audit_render.as_json(report), ensure_ascii=False)
    assert all(c.isprintable() for c in as_json)


@pytest.mark.parametrize("what", list(_malformed()))
def test_the_audit_command_reads_a_malformed_file_without_a_traceback_and_exits_2(
    what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphsvc.cli import main

    lines, line = _malformed()[what]
    path = tmp_path / "malformed.jsonl"
    path.write_bytes(b"".join(lines))
    assert main(["audit", str(path), "--rpc", "http://127.0.0.1:9"]) == 2
    out = capsys.readouterr()
    assert f"line {line}: [" in out.out and "Traceback" not in out.out + out.err
    assert all(c == "\n" or c.isprintable() for c in out.out + out.err)


def test_the_audit_command_names_a_file_it_cannot_open_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphsvc.cli import main

    missing, bundle = tmp_path / "gone.jsonl", tmp_path / "gone-bundle.json"
    assert main(["audit", str(missing), "--rpc", "http://127.0.0.1:9"]) == 2
    assert capsys.readouterr().err == f"graphsvc: {missing}: No such file or directory\n"
    missing.write_bytes(b"")
    assert main(["audit", str(missing), "--rpc", "http://127.0.0.1:9", "--bundle", str(bundle)]) == 2
    assert capsys.readouterr().err == f"graphsvc: {bundle}: No such file or directory\n"


@pytest.mark.processes
def test_a_line_nested_deeper_than_the_parser_recurses_is_refused_in_a_process_of_graphsvc(
    tmp_path: Path,
) -> None:
    """py_ecc (imported with web3) raises the recursion limit to 100,000, and the C JSON parser then
    overflowed the C stack on 100,000 `[`: the process died (SIGSEGV) with no verdict. A process that
    imports all of graphsvc, as `graphsvc audit` and the server do, must refuse the line instead."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(_malformed()["arrays nested 100,000 deep"][0]))
    done = subprocess.run(
        [str(Path(sys.executable).parent / "graphsvc"), "audit", str(path), "--rpc", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "line 3: [json]" in done.stdout and "Traceback" not in done.stderr
    server = subprocess.run(  # the server parses request bodies with the same parser
        [
            sys.executable,
            "-c",
            "import graphsvc.app, json\n"
            "try: json.loads('[' * 200_000 + ']' * 200_000)\n"
            "except RecursionError: print('refused')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (server.returncode, server.stdout.strip()) == (0, "refused"), server.stderr[-2000:]


@pytest.mark.processes
def test_an_audit_whose_reader_leaves_early_exits_with_its_verdict_and_no_traceback(tmp_path: Path) -> None:
    """`graphsvc audit g.jsonl | head -1`: the pipe closes before the verdict is written."""
    lines, _ = _malformed()["not JSON"]
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"".join(lines))
    command = [
        str(Path(sys.executable).parent / "graphsvc"),
        "audit",
        str(path),
        "--rpc",
        "http://127.0.0.1:9",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as running:
        assert running.stdout and running.stderr
        running.stdout.close()  # before graphsvc has imported, let alone written
        err = running.stderr.read().decode()
        code = running.wait(timeout=120)
    assert code == 2 and "Traceback" not in err and "BrokenPipe" not in err, (code, err)


_HOSTILE = "\x1b[2J\u202e\u200b\n\r\x00\x7f\u2028✓ Audited: graph ok"


def _strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, str):
        return [path]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    return [p for k, v in items for p in _strings(v, (*path, k))]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


@pytest.mark.parametrize("kind", ["header", "batch", "entity", "relation", "memory"])
def test_a_hostile_string_in_any_field_is_shown_inert(kind: str) -> None:
    records = _graph_file()
    for i, record in enumerate(records):
        if record["type"] != kind:
            continue
        for path in _strings(record):
            changed = json.loads(json.dumps(records))
            target = changed[i]
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = _HOSTILE
            report = audit.audit(_lines(changed), None)
            shown = audit_render.render(report)
            as_json = json.dumps(audit_render.as_json(report), ensure_ascii=False)
            assert all(c == "\n" or c.isprintable() for c in shown), path
            assert all(c.isprintable() for c in as_json), path


def _graph_file() -> list[dict[str, Any]]:
    """A consistent export with entities, a relation, MENTIONS and SUPERSEDES edges (one batch)."""
    records = _file(2)
    first, second = records[2], records[3]
    for record, fields in (
        (first, {"entities": ["Token:MON"]}),
        (second, {"entities": ["Pool:MON/USDC", "Token:MON"], "supersedes": [first["id"]]}),
    ):
        envelope = memory_envelope(
            id=record["id"],
            graph=GRAPH,
            text=record["envelope"]["text"],
            tags=[],
            entities=fields["entities"],
            created_at="2026-12-05T00:00:00.000Z",
            supersedes=fields.get("supersedes", []),
        )
        record["envelope"], record["hash"] = (
            envelope,
            memory_hash(
                **{
                    "id": record["id"],
                    "graph": GRAPH,
                    "text": record["envelope"]["text"],
                    "tags": [],
                    "entities": fields["entities"],
                    "created_at": "2026-12-05T00:00:00.000Z",
                    "supersedes": fields.get("supersedes", []),
                }
            ),
        )
    first["edges"] = [{"rel": "MENTIONS", "to": "Token:MON", "id": "edge_1"}]
    second["edges"] = [
        {"rel": "MENTIONS", "to": "Pool:MON/USDC", "id": "edge_2", "source": "agent", "writerToken": "tok_1"},
        {"rel": "MENTIONS", "to": "Token:MON", "id": "edge_3"},
        {"rel": "SUPERSEDES", "to": first["id"], "id": "edge_4"},
        {
            "rel": "MENTIONS",
            "to": "Pool:MON/USDC",
            "id": "edge_5",
            "source": "extracted",
            "extractor": "rules/1",
        },
    ]
    leaves = [memory_leaf(r["id"], bytes.fromhex(r["hash"][2:])) for r in (first, second)]
    tree = MerkleTree.build(leaves)
    records[1]["root"] = first["batch"] = second["batch"] = "0x" + tree.root.hex()
    for record, leaf in zip((first, second), leaves, strict=True):
        record["proof"] = ["0x" + p.hex() for p in tree.proof(leaf)]
    entities = [
        {"type": "entity", "id": "Pool:MON/USDC", "label": "Pool", "name": "MON/USDC", "props": {}},
        {
            "type": "relation",
            "id": "edge_9",
            "rel": "QUOTES",
            "from": "Pool:MON/USDC",
            "to": "Token:MON",
            "props": {},
        },
        {"type": "entity", "id": "Token:MON", "label": "Token", "name": "MON", "props": {}},
    ]
    return [records[0], records[1], *entities, first, second]


def _changed(change: Any) -> list[bytes]:
    records = json.loads(json.dumps(_graph_file()))
    change(records)
    return _lines(records)


def _rename(records: list[dict[str, Any]]) -> None:
    """Token:MON renamed Token:ETH everywhere but in the hashed envelopes."""
    text = json.dumps([r for r in records if r["type"] != "memory"]).replace("Token:MON", "Token:ETH")
    others = json.loads(text.replace('"name": "MON"', '"name": "ETH"'))
    memories = [r for r in records if r["type"] == "memory"]
    for m in memories:
        for e in m["edges"]:
            e["to"] = e["to"].replace("Token:MON", "Token:ETH")
    records[:] = [*others, *memories]


def test_edges_entities_and_relations_are_held_to_what_is_hashed() -> None:
    good = check_lines(_lines(_graph_file()))
    assert good.ok, good.findings
    assert good.extracted == 1 and good.relations == 1

    def edge(i: int, change: Any) -> Any:
        return lambda records: change(records[i]["edges"])

    cases = {
        "an entity renamed everywhere but the envelope": (_rename, "edge"),
        "a MENTIONS re-pointed": (edge(6, lambda es: es[1].update(to="Pool:MON/USDC")), "edge"),
        "a MENTIONS dropped": (edge(5, lambda es: es.clear()), "edge"),
        "a MENTIONS invented": (
            edge(5, lambda es: es.append({"rel": "MENTIONS", "to": "Pool:MON/USDC", "id": "e"})),
            "edge",
        ),
        "a SUPERSEDES dropped": (edge(6, lambda es: es.pop(2)), "edge"),
        "an extracted edge passed off as the agent's": (edge(6, lambda es: es[3].pop("source")), "edge"),
        "an entity whose id is not label:name": (lambda r: r[4].update(id="Token:MON2"), "entity"),
        "a relation line repeated": (lambda r: r.insert(4, r[3]), "duplicate"),
        "a relation to an entity with no line": (lambda r: r[3].update(to="Token:NONE"), "relation"),
        "an edge id taken twice": (edge(6, lambda es: es[0].update(id="edge_1")), "duplicate"),
    }
    for what, (change, rule) in cases.items():
        assert rule in check_lines(_changed(change)).rules(), what


def _upgraded_file() -> list[dict[str, Any]]:
    """A graph anchored by an older graphsvc (batch 1: no manifest; memory 2 forgotten then, no forget
    record) and then by this one (batch 2: memory 3 and the manifest naming memory 2 as from before)."""
    fields = [
        {
            "id": f"mem_{n:04d}",
            "graph": GRAPH,
            "text": f"note {n}",
            "tags": [],
            "entities": [],
            "created_at": "2026-12-05T00:00:00.000Z",
        }
        for n in (1, 2, 3)
    ]
    hashes = [memory_hash(**f) for f in fields]
    leaves = [memory_leaf(f["id"], bytes.fromhex(h[2:])) for f, h in zip(fields, hashes, strict=True)]
    old = MerkleTree.build(leaves[:2])
    _, manifest = manifest_leaf(GRAPH, [(3, "mem_0003")], [], ["mem_0002"])
    new = MerkleTree.build([leaves[2], manifest])
    records = _file(1)  # its header and batch as templates
    batch = records[1]
    records[0] |= {
        "lastSeq": 3,
        "counts": {"batches": 2, "entities": 0, "relations": 0, "memories": 2, "tombstones": 1},
    }
    first = batch | {"root": "0x" + old.root.hex(), "count": 2, "graphTag": None, "prevRoot": None}
    second = batch | {
        "root": "0x" + new.root.hex(),
        "seq": 2,
        "count": 2,
        "blockNumber": 6,
        "manifestProof": ["0x" + p.hex() for p in new.proof(manifest)],
    }

    def memory(n: int, tree: MerkleTree, root: str) -> dict[str, Any]:
        f = fields[n - 1]
        return {
            "type": "memory",
            "seq": n,
            "id": f["id"],
            "hash": hashes[n - 1],
            "envelope": memory_envelope(**f),
            "batch": root,
            "proof": ["0x" + p.hex() for p in tree.proof(leaves[n - 1])],
            "edges": [],
            "props": {},
        }

    tombstone = {
        "type": "tombstone",
        "id": "mem_0002",
        "hash": hashes[1],
        "seq": 2,
        "forgottenAt": "2026-12-05T00:30:00.000Z",
        "batch": first["root"],
        "proof": ["0x" + p.hex() for p in old.proof(leaves[1])],
    }
    return [
        records[0],
        first,
        second,
        memory(1, old, first["root"]),
        memory(3, new, second["root"]),
        tombstone,
    ]


def test_tombstones_from_before_forget_records_are_those_the_first_manifest_lists() -> None:
    good = check_lines(_lines(_upgraded_file()))
    assert good.ok, good.findings
    assert (good.before, good.manifests, good.positions_bound, good.anchored) == (1, 1, 1, 2)
    records = _upgraded_file()
    forged = records[3] | {"type": "tombstone", "forgottenAt": "2026-12-05T00:30:00.000Z"}
    for key in ("envelope", "edges", "props"):
        forged.pop(key)
    passed_off = [*records[:3], records[4], forged, records[5]]  # memory 1 "forgotten before", too
    passed_off[0]["counts"] |= {"memories": 1, "tombstones": 2}
    assert "manifest" in check_lines(_lines(passed_off)).rules()


# ---- issue 43: extracted edges derived again, dates, proofs of pending memories, event links, floods -----


def _quotes(text: str) -> list[Mention]:
    """An extractor as deterministic as the rules: "quotes" in the text of memory 2 ("note 2")."""
    found = mention("Topic", "quotes")
    return [found] if text == "note 2" and found else []


def _extracted_file() -> list[dict[str, Any]]:
    """_graph_file with memory 2 read by `x/1` (`_quotes`): its extracted edge to the entity it made."""
    records = _graph_file()
    second = records[6]
    second["edges"][3] |= {"to": "Topic:quotes", "extractor": "x/1"}
    second["props"] = {"extractedWith": "x/1"}
    made = {
        "type": "entity",
        "id": "Topic:quotes",
        "label": "Topic",
        "name": "quotes",
        "props": {"source": "extracted"},
    }
    return [*records[:5], made, *records[5:]]


def test_extracted_edges_are_derived_again_with_the_extractor_the_export_names() -> None:
    def checked(change: Any = None, extractors: Any = None) -> Any:
        records = json.loads(json.dumps(_extracted_file()))
        if change is not None:
            change(records)
        return check_lines(_lines(records), extractors={"x/1": _quotes} if extractors is None else extractors)

    good = checked()
    assert good.ok, list(good.findings)
    assert good.extraction is not None and (good.extraction.checked, good.extraction.unread) == (1, 1)

    def second(change: Any) -> Any:
        return lambda records: change(records[7])

    lies = {
        "re-pointed": second(lambda m: m["edges"][3].update(to="Token:MON")),
        "dropped": second(lambda m: m["edges"].pop(3)),
        "invented on the memory no extractor read": lambda r: r[6]["edges"].append(
            {"rel": "MENTIONS", "to": "Topic:quotes", "id": "e9", "source": "extracted", "extractor": "x/1"}
        ),
        "read by another extractor than its edge": second(lambda m: m["props"].update(extractedWith="x/2")),
        "repeated under another id": second(lambda m: m["edges"].append(m["edges"][3] | {"id": "edge_8"})),
    }
    for what, change in lies.items():
        assert "extracted" in checked(change).rules(), what
    # a name two entities share: the worker took one of them, the file does not say which
    shared = {"type": "entity", "id": "Name:Quotes", "label": "Name", "name": "Quotes", "props": {}}
    loose = checked(lambda r: r.insert(2, shared))
    assert loose.ok and loose.extraction is not None and loose.extraction.loose == 1, list(loose.findings)
    # an extractor this audit does not have: said, never a finding
    unknown = checked(second(lambda m: m["edges"][3].update(to="Token:MON")), extractors={})
    assert unknown.ok and unknown.extraction is not None and unknown.extraction.unknown == {"x/1": 1}
    shown = audit_render.render(audit.AuditReport(unknown))
    assert "not derived again" in shown and "1 by x/1" in shown


def test_a_memory_dated_after_the_file_or_pending_with_a_proof_is_named() -> None:
    records = _file()
    early = json.loads(json.dumps(records))
    early[0]["exportedAt"] = "2026-12-04T23:59:59.999Z"  # before the memories were created
    assert {(3, "time"), (4, "time"), (5, "time")} <= _rules(_lines(early))
    pending = json.loads(json.dumps(records))
    pending[4]["batch"] = None  # its proof kept
    assert (5, "proof") in _rules(_lines(pending))
    report = audit.audit(_lines(records), None)
    assert "2026-12-05T01:00:00.000Z" in audit_render.render(report)  # the file's age is shown
    assert audit_render.as_json(report)["ageSeconds"] > 0


def test_an_event_link_goes_to_a_context_its_envelope_names() -> None:
    def link(to: str) -> Any:
        return lambda records: records[6]["edges"].append({"rel": "CONTRADICTS", "to": to, "id": "edge_7"})

    assert "edge" in check_lines(_changed(link("Token:MON"))).rules()  # named, but not a context
    assert "edge" in check_lines(_changed(link("Context:topic:gas"))).rules()  # not named, no line


@pytest.mark.parametrize(("unit", "megabytes"), [(b"\n", 4), (b"x\n", 1), (b"\r\n", 1)])
def test_a_flood_of_empty_or_malformed_lines_is_read_in_constant_memory_each_line_counted(
    tmp_path: Path, unit: bytes, megabytes: int
) -> None:
    """Issue 43: 4 MB of line feeds cost `graphsvc audit` 61 s and 786 MB (every unreadable line kept)."""
    path = tmp_path / "flood.jsonl"
    path.write_bytes(unit * (megabytes * 1_000_000 // len(unit)))
    lines = megabytes * 1_000_000 // len(unit)
    tracemalloc.start()
    try:
        with path.open("rb") as source:
            report = audit.audit(bounded_lines(source), None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.exit_code == 2 and report.checked.lines == report.checked.unreadable == lines
    assert report.findings.count == lines + 1 and len(list(report.findings)) == MAX_KEPT  # and `truncated`
    assert peak < 8_000_000, peak  # a line feed run is read a megabyte at a time at most
    assert f"{lines:,} lines are not records" in audit_render.verdict(report)
    assert audit_render.as_json(report)["moreFindings"] == lines + 1 - MAX_KEPT
