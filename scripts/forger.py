"""The forger (issues 37 and 43): every tamper class against a genuine export, each with the trailer sealed
again, through `graphsvc audit` with the auditor's trust roots; a table class by class.

    .venv/bin/python scripts/forger.py g.jsonl --rpc URL --contract 0x… --graph-tag 0x… [--json]

The export should be of an anchored graph with several batches, a forgotten anchored memory (its
forget record anchored), an update (SUPERSEDES), entities with a relation (with properties), a memory
not anchored yet, a memory the extraction worker read (its extracted edges) and an event with a typed
link (store_event): a tamper that needs a record the export lacks is reported as
not applicable. The forger knows the format as well as graphsvc does: it rehashes envelopes, builds
Merkle trees and manifests, moves positions and reseals the trailer; it cannot sign a transaction on
the auditor's chain as the operator (an operator who could is the audit's trust root, not its
subject). Each tamper is one `graphsvc audit --json` run, in this process (graphsvc.cli.main).

Tampers of anchored content, completeness, forgets, positions, edges, entity ids, relations' shape,
receipts, the file itself, extracted edges, event links and dates must be caught (exit 1, or 2 for a file that cannot be read). The
documented limits (docs/audit.md, "What the audit cannot show", each by its name) are tried too and
listed apart: what they change is not hashed, not anchored or not derivable, so they pass. Exit status: 0 when no
tamper outside the documented limits passed (and the genuine export did), 1 otherwise, 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphsvc.domain.hashing import envelope_hash
from graphsvc.domain.manifest import forget_leaf, manifest_leaf
from graphsvc.domain.merkle import MerkleTree, memory_leaf
from graphsvc.exports.format import seal

Record = dict[str, Any]
Lines = list[bytes]

# The documented limits (docs/audit.md names each in "What the audit cannot show"): what a forger who
# reseals the trailer may change unseen, because it is not hashed or not anchored.
LIMITS: dict[str, str] = {
    "entity-props": "an entity's props (whether only extraction made it) are not hashed",
    "relation-props": "a relation's props are not hashed",
    "relations": "relations between entities are not hashed: one added or removed is unseen",
    "memory-props": "a memory's props (writerToken, writerClient, store_event's fields, data) are not hashed",
    "underived": "a memory the file says no extractor read, or one read by an extractor the auditor lacks, "
    "is not derived again: its extracted edges all dropped, or relabelled to another extractor and changed, "
    "pass (the verdict counts such memories and names each extractor)",
    "unanchored": "a memory not anchored yet is only self-consistent: its text rewritten and rehashed, or "
    "the memory left out with lastSeq lowered, is unseen",
    "newest-batches": "the newest batches left out with an earlier exportedAt (no earlier than any memory "
    "the file holds was created) are only noted: the verdict shows the file's age and the batches since",
    "header-counts": "the header's counts are as of the start and not checked (the trailer's are)",
    "event-links": "the type of an event's link to a context its envelope names (REINFORCES, CONTRADICTS, "
    "...) is not hashed: one turned into another, or one added or dropped between a memory and a context "
    "it names, is unseen",
}

CLASSES = (
    "anchored content",
    "de-anchoring",
    "completeness",
    "forgets",
    "positions",
    "edges",
    "entities and relations",
    "receipts and batches",
    "never-anchored root",
    "the file",
    "extracted edges",
    "event links",
    "dates",
)


class NotApplicable(LookupError):
    """The export lacks what a tamper needs (e.g. no tombstone, no extracted edge)."""


@dataclass(frozen=True)
class Pins:
    """The auditor's trust roots."""

    contract: str | None = None
    graph_tag: str | None = None
    roots: tuple[str, ...] = ()

    def args(self, pin: str) -> list[str]:
        """The audit's arguments: the contract, and the graph tag ("tag") or the first root the
        auditor holds alone ("root"; the tag when they hold none), or nothing more ("contract")."""
        out = ["--contract", self.contract] if self.contract else []
        if pin == "contract":
            return out
        if pin == "root" and self.roots:
            return [*out, "--known-root", self.roots[0]]
        return out + (["--graph-tag", self.graph_tag] if self.graph_tag else [])


@dataclass(frozen=True)
class Tamper:
    name: str
    kind: str  # a CLASSES entry, or a LIMITS name
    apply: Callable[[list[Record]], list[Record] | Lines]
    rule: str | None = None  # the rule that must name it (None: a documented limit, which passes)
    pin: str = "tag"  # the trust root the auditor brings: "tag" (and roots), "root" alone, or "contract"

    @property
    def limit(self) -> bool:
        return self.kind in LIMITS


@dataclass
class Outcome:
    tamper: Tamper
    exit_code: int | None  # None: not applicable
    rules: list[str] = field(default_factory=list[str])
    verdict: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


# ---- reading and writing records ------------------------------------------------------------------------


def records_of(lines: Lines) -> list[Record]:
    """The records of an export, its trailer left out (the forger seals again)."""
    return [json.loads(line) for line in lines[:-1]]


def _dump(record: Record) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def sealed(records: list[Record]) -> Lines:
    return seal([_dump(r) for r in records])


def _of(records: list[Record], kind: str) -> list[Record]:
    return [r for r in records if r["type"] == kind]


def _anchored(records: list[Record]) -> list[Record]:
    return [r for r in _of(records, "memory") if r["batch"]]


def _first(items: list[Record], what: str) -> Record:
    if not items:
        raise NotApplicable(f"the export has no {what}")
    return items[0]


def _rehash(memory: Record) -> None:
    memory["hash"] = envelope_hash(memory["envelope"])


def _recount(records: list[Record]) -> None:
    """The header's counts made to agree with the records (a careful forger's)."""
    header = records[0]
    plural = {"batch": "batches", "entity": "entities", "relation": "relations", "memory": "memories"}
    header["counts"] = {name: len(_of(records, kind)) for kind, name in plural.items()}
    header["counts"]["tombstones"] = len(_of(records, "tombstone"))


def _ordered(records: list[Record]) -> list[Record]:
    """Records back in the format's order: memories by position, tombstones by id."""
    head = [r for r in records if r["type"] not in ("memory", "tombstone")]
    memories = sorted(_of(records, "memory"), key=lambda r: r["seq"])
    tombstones = sorted(_of(records, "tombstone"), key=lambda r: r["id"])
    return head + memories + tombstones


# ---- the tampers ------------------------------------------------------------------------------------


def _text_kept_hash(rs: list[Record]) -> list[Record]:
    _first(_anchored(rs), "anchored memory")["envelope"]["text"] += " (changed)"
    return rs


def _text_rehashed(rs: list[Record]) -> list[Record]:
    m = _first(_anchored(rs), "anchored memory")
    m["envelope"]["text"] = "Pool MON/USDC-A is deep after 18:00"
    _rehash(m)
    return rs


def _tags_rehashed(rs: list[Record]) -> list[Record]:
    m = _first(_anchored(rs), "anchored memory")
    m["envelope"]["tags"] = sorted({*m["envelope"]["tags"], "verified"})
    _rehash(m)
    return rs


def _created_rehashed(rs: list[Record]) -> list[Record]:
    m = _first(_anchored(rs), "anchored memory")
    m["envelope"]["createdAt"] = "2020-01-01T00:00:00.000Z"
    _rehash(m)
    return rs


def _contents_swapped(rs: list[Record]) -> list[Record]:
    """Two anchored memories' envelopes (ids kept), each rehashed: their texts trade places."""
    a, b = _anchored(rs)[:2]
    a["envelope"]["text"], b["envelope"]["text"] = b["envelope"]["text"], a["envelope"]["text"]
    _rehash(a)
    _rehash(b)
    return rs


def _rebatched(rs: list[Record]) -> list[Record]:
    """A memory rewritten and its batch rebuilt around it (a new root, proofs and manifest that fold)."""
    m = _first(_anchored(rs), "anchored memory")
    m["envelope"]["text"] = "Pool MON/USDC-A is deep after 18:00"
    _rehash(m)
    _rebuild(rs, m["batch"])
    return rs


def _rebuild(rs: list[Record], root: str) -> str:
    """Batch `root` built again from its members in the file: a new root, every proof and the manifest
    proof made to fold (forget records held by it are left out); the chain never saw the new root."""
    graph = rs[0]["graph"]
    batch = next(b for b in _of(rs, "batch") if b["root"] == root)
    members = [r for r in rs if r["type"] in ("memory", "tombstone") and r.get("batch") == root]
    leaves = {r["id"]: memory_leaf(r["id"], bytes.fromhex(r["hash"][2:])) for r in members}
    manifest = None
    if batch.get("manifestProof") is not None:
        first = min(b["seq"] for b in _of(rs, "batch") if b.get("manifestProof") is not None)
        before = (
            [t["id"] for t in _of(rs, "tombstone") if not t.get("forget")] if batch["seq"] == first else None
        )
        _, manifest = manifest_leaf(graph, [(r["seq"], r["id"]) for r in members], [], before)
    tree = MerkleTree.build([*leaves.values(), *([manifest] if manifest else [])])
    new = "0x" + tree.root.hex()
    for r in members:
        r["batch"], r["proof"] = new, ["0x" + p.hex() for p in tree.proof(leaves[r["id"]])]
    if manifest:
        batch["manifestProof"] = ["0x" + p.hex() for p in tree.proof(manifest)]
    batch["root"], batch["count"] = new, len(leaves) + (1 if manifest else 0)
    for later in _of(rs, "batch"):
        if later["prevRoot"] == root:
            later["prevRoot"] = new
    for t in _of(rs, "tombstone"):
        if t.get("forget") and t["forget"]["batch"] == root:
            del t["forget"]
    return new


def _deanchored(tag: str | None, rewrite: bool = True) -> Callable[[list[Record]], list[Record]]:
    """Issue 37's first hole: every batch and tombstone removed, the tag nulled or fresh, every memory
    unanchored, a text rewritten and rehashed (`rewrite`); the tombstones' positions declared forgotten."""

    def apply(rs: list[Record]) -> list[Record]:
        header = rs[0]
        header["graphTag"] = tag
        gone = [t["seq"] for t in _of(rs, "tombstone") if t["seq"] is not None]
        header["forgottenUnanchored"] = sorted([*header["forgottenUnanchored"], *gone])
        out = [r for r in rs if r["type"] not in ("batch", "tombstone")]
        memories = _of(out, "memory")
        for m in memories:
            m["batch"], m["proof"] = None, []
        m = _first(memories, "memory")
        if rewrite:
            m["envelope"]["text"] = "Pool MON/USDC-A is deep after 18:00"
            _rehash(m)
        _recount(out)
        return out

    return apply


def _batch_dropped(index: int) -> Callable[[list[Record]], list[Record]]:
    """A batch and its members left out, their positions declared forgotten before anchoring, the
    next batch's prevRoot bridged over it, the counts agreeing."""

    def apply(rs: list[Record]) -> list[Record]:
        batches = _of(rs, "batch")
        if len(batches) < 2:
            raise NotApplicable("the export has fewer than two batches")
        gone = batches[index]
        members = [r for r in rs if r["type"] in ("memory", "tombstone") and r.get("batch") == gone["root"]]
        header = rs[0]
        header["forgottenUnanchored"] = sorted(
            [*header["forgottenUnanchored"], *(m["seq"] for m in members if m["seq"] is not None)]
        )
        for later in batches:
            if later["prevRoot"] == gone["root"]:
                later["prevRoot"] = gone["prevRoot"]
        for t in _of(rs, "tombstone"):
            if t.get("forget") and t["forget"]["batch"] == gone["root"]:
                del t["forget"]
        out = [r for r in rs if r is not gone and not any(r is m for m in members)]
        _recount(out)
        return out

    return apply


def _memory_removed(declared: bool) -> Callable[[list[Record]], list[Record]]:
    def apply(rs: list[Record]) -> list[Record]:
        m = _first(_anchored(rs), "anchored memory")
        if declared:
            rs[0]["forgottenUnanchored"] = sorted([*rs[0]["forgottenUnanchored"], m["seq"]])
        out = [r for r in rs if r is not m]
        _recount(out)
        return out

    return apply


def _tombstoned(forget: str) -> Callable[[list[Record]], list[Record]]:
    """Issue 37's second hole: an anchored memory turned into a tombstone (id, hash, position and proof
    kept, content gone), with no forget record ("from before"), another tombstone's, or a forget
    record of its own sealed into a batch rebuilt for it (a root the chain never saw)."""

    def apply(rs: list[Record]) -> list[Record]:
        memories = _anchored(rs)
        if forget == "own":  # one of an earlier batch: the last batch is rebuilt to hold its record
            last = _batches(rs, 1)[-1]["root"]
            memories = [m for m in memories if m["batch"] != last][::-1]
        m = _first(memories, "anchored memory of a batch before the last")
        tombstone: Record = {
            "type": "tombstone",
            "id": m["id"],
            "hash": m["hash"],
            "seq": m["seq"],
            "forgottenAt": "2026-12-05T00:00:00.000Z",
            "batch": m["batch"],
            "proof": m["proof"],
        }
        if forget == "borrowed":
            real = _first(
                [t for t in _of(rs, "tombstone") if t.get("forget")], "tombstone with a forget record"
            )
            tombstone["forget"] = copy.deepcopy(real["forget"])
        out = _ordered([*(r for r in rs if r is not m), tombstone])
        if forget == "own":
            _forget_sealed(out, tombstone)
        _recount(out)
        return out

    return apply


def _forget_sealed(rs: list[Record], tombstone: Record) -> None:
    """A forget record for `tombstone` sealed into the last batch, rebuilt with it."""
    batch = _of(rs, "batch")[-1]
    if batch["root"] == tombstone["batch"]:
        raise NotApplicable("the memory is in the last batch")
    graph = rs[0]["graph"]
    _, leaf = forget_leaf(graph, tombstone["id"], tombstone["hash"], tombstone["forgottenAt"])
    root = batch["root"]
    members = [r for r in rs if r["type"] in ("memory", "tombstone") and r.get("batch") == root]
    held = [t for t in _of(rs, "tombstone") if t.get("forget") and t["forget"]["batch"] == root]
    leaves = [memory_leaf(r["id"], bytes.fromhex(r["hash"][2:])) for r in members]
    forgets = {t["id"]: forget_leaf(graph, t["id"], t["hash"], t["forgottenAt"])[1] for t in held}
    forgets[tombstone["id"]] = leaf
    _, manifest = manifest_leaf(graph, [(r["seq"], r["id"]) for r in members], list(forgets), None)
    tree = MerkleTree.build([*leaves, *forgets.values(), manifest])
    new = "0x" + tree.root.hex()
    for r, own in zip(members, leaves, strict=True):
        r["batch"], r["proof"] = new, ["0x" + p.hex() for p in tree.proof(own)]
    for t in [*held, tombstone]:
        t["forget"] = {"batch": new, "proof": ["0x" + p.hex() for p in tree.proof(forgets[t["id"]])]}
    batch["root"], batch["count"] = new, len(leaves) + len(forgets) + 1
    batch["manifestProof"] = ["0x" + p.hex() for p in tree.proof(manifest)]


def _forget_dropped(rs: list[Record]) -> list[Record]:
    real = _first([t for t in _of(rs, "tombstone") if t.get("forget")], "tombstone with a forget record")
    del real["forget"]
    return rs


def _tombstone_removed(rs: list[Record]) -> list[Record]:
    """A forgotten memory's tombstone left out, its position declared forgotten before anchoring."""
    t = _first([t for t in _of(rs, "tombstone") if t["seq"] is not None], "tombstone")
    rs[0]["forgottenUnanchored"] = sorted([*rs[0]["forgottenUnanchored"], t["seq"]])
    out = [r for r in rs if r is not t]
    _recount(out)
    return out


def _positions_swapped(same_batch: bool) -> Callable[[list[Record]], list[Record]]:
    """Issue 37's third hole: two memories' positions swapped, and their lines, so order holds."""

    def apply(rs: list[Record]) -> list[Record]:
        memories = _anchored(rs)
        pairs = [
            (a, b)
            for i, a in enumerate(memories)
            for b in memories[i + 1 :]
            if (a["batch"] == b["batch"]) == same_batch
        ]
        a, b = _first([{"pair": p} for p in pairs], "pair of memories")["pair"]
        a["seq"], b["seq"] = b["seq"], a["seq"]
        return _ordered(rs)

    return apply


def _moved_to_forgotten(rs: list[Record]) -> list[Record]:
    """A memory moved to a position declared forgotten before anchoring, and its own declared so."""
    header = rs[0]
    if not header["forgottenUnanchored"]:
        raise NotApplicable("no position was forgotten before anchoring")
    m = _first(_anchored(rs), "anchored memory")
    free = header["forgottenUnanchored"][0]
    header["forgottenUnanchored"] = sorted([*header["forgottenUnanchored"][1:], m["seq"]])
    m["seq"] = free
    return _ordered(rs)


def _given(edge: Record) -> bool:
    """An agent-given MENTIONS edge (hashed, as its envelope's `entities`)."""
    return edge["rel"] == "MENTIONS" and edge.get("source") != "extracted"


def _mentioning(rs: list[Record]) -> Record:
    return _first(
        [m for m in _of(rs, "memory") if any(_given(e) for e in m["edges"])],
        "memory with an agent-given MENTIONS edge",
    )


def _renamed(rs: list[Record]) -> list[Record]:
    """An entity renamed everywhere but in the hashed envelopes (Token:MON → Token:ETH)."""
    m = _mentioning(rs)
    old = next(e["to"] for e in m["edges"] if _given(e))
    label = old.split(":", 1)[0]
    new = f"{label}:FORGED"
    for r in rs:
        if r["type"] == "entity" and r["id"] == old:
            r["id"], r["name"] = new, "FORGED"
        if r["type"] == "relation":
            r["from"] = new if r["from"] == old else r["from"]
            r["to"] = new if r["to"] == old else r["to"]
        if r["type"] == "memory":
            for e in r["edges"]:
                e["to"] = new if e["to"] == old else e["to"]
    return _entities_ordered(rs)


def _entities_ordered(rs: list[Record]) -> list[Record]:
    """Entities by id again, each followed by its relations."""
    entities = sorted(_of(rs, "entity"), key=lambda e: e["id"])
    relations = _of(rs, "relation")
    block: list[Record] = []
    for e in entities:
        block += [e, *(r for r in relations if r["from"] == e["id"])]
    block += [r for r in relations if r not in block]
    head = [r for r in rs if r["type"] in ("header", "batch")]
    return head + block + [r for r in rs if r["type"] in ("memory", "tombstone")]


def _mention_repointed(rs: list[Record]) -> list[Record]:
    """A MENTIONS edge pointed at another entity (one the memory does not mention, when there is one)."""
    m = _mentioning(rs)
    edge = next(e for e in m["edges"] if _given(e))
    others = [e["id"] for e in _of(rs, "entity") if e["id"] != edge["to"]]
    mentioned = {x["to"] for x in m["edges"]}
    others.sort(key=lambda e: e in mentioned)
    edge["to"] = _first([{"id": e} for e in others], "second entity")["id"]
    return rs


def _mention_dropped(rs: list[Record]) -> list[Record]:
    m = _mentioning(rs)
    m["edges"].remove(next(e for e in m["edges"] if _given(e)))
    return rs


def _mention_invented(rs: list[Record]) -> list[Record]:
    entity = _first(_of(rs, "entity"), "entity")
    m = _first([m for m in _anchored(rs) if entity["id"] not in {e["to"] for e in m["edges"]}], "memory")
    m["edges"].append({"rel": "MENTIONS", "to": entity["id"], "id": "edge_forged0001"})
    return rs


def _mention_as_extracted(rs: list[Record]) -> list[Record]:
    """An agent's MENTIONS passed off as extracted (not hashed), so that it might be re-pointed."""
    m = _mentioning(rs)
    edge = next(e for e in m["edges"] if e["rel"] == "MENTIONS" and e.get("source") != "extracted")
    edge |= {"source": "extracted", "extractor": "rules/1"}
    edge.pop("writerToken", None)
    return rs


def _superseding(rs: list[Record]) -> Record:
    return _first(
        [m for m in _of(rs, "memory") if any(e["rel"] == "SUPERSEDES" for e in m["edges"])], "update"
    )


def _supersedes_dropped(rs: list[Record]) -> list[Record]:
    m = _superseding(rs)
    m["edges"] = [e for e in m["edges"] if e["rel"] != "SUPERSEDES"]
    return rs


def _supersedes_repointed(rs: list[Record]) -> list[Record]:
    m = _superseding(rs)
    edge = next(e for e in m["edges"] if e["rel"] == "SUPERSEDES")
    edge["to"] = next(x["id"] for x in _of(rs, "memory") if x["seq"] < m["seq"] and x["id"] != edge["to"])
    return rs


def _supersedes_invented(rs: list[Record]) -> list[Record]:
    memories = _of(rs, "memory")
    m = _first([m for m in memories[1:] if not any(e["rel"] == "SUPERSEDES" for e in m["edges"])], "memory")
    m["edges"].append({"rel": "SUPERSEDES", "to": memories[0]["id"], "id": "edge_forged0002"})
    return rs


def _edge_id_repeated(rs: list[Record]) -> list[Record]:
    m = _mentioning(rs)
    other = _first([x for x in _of(rs, "memory") if x is not m and x["edges"]], "second memory with edges")
    other["edges"][0]["id"] = m["edges"][0]["id"]
    return rs


def _entity_id_not_its_name(rs: list[Record]) -> list[Record]:
    _first(_of(rs, "entity"), "entity")["name"] = "FORGED"
    return rs


def _relation_repeated(rs: list[Record]) -> list[Record]:
    rel = _first(_of(rs, "relation"), "relation")
    i = rs.index(rel)
    return [*rs[: i + 1], copy.deepcopy(rel), *rs[i + 1 :]]


def _relation_repeated_new_id(rs: list[Record]) -> list[Record]:
    rel = _first(_of(rs, "relation"), "relation")
    i = rs.index(rel)
    return [*rs[: i + 1], copy.deepcopy(rel) | {"id": "edge_forged0003"}, *rs[i + 1 :]]


def _relation_to_nowhere(rs: list[Record]) -> list[Record]:
    _first(_of(rs, "relation"), "relation")["to"] = "Token:NOWHERE"
    return rs


def _entity_removed(rs: list[Record]) -> list[Record]:
    """An entity a memory mentions left out (and its relations)."""
    m = _mentioning(rs)
    gone = next(e["to"] for e in m["edges"] if _given(e))
    return [
        r
        for r in rs
        if not (r["type"] == "entity" and r["id"] == gone)
        and not (r["type"] == "relation" and r["from"] == gone)
    ]


def _batches(rs: list[Record], n: int = 2) -> list[Record]:
    batches = _of(rs, "batch")
    if len(batches) < n:
        raise NotApplicable(f"the export has fewer than {n} batches")
    return batches


def _tx_swapped(rs: list[Record]) -> list[Record]:
    a, b = _batches(rs)[:2]
    a["txHash"], b["txHash"] = b["txHash"], a["txHash"]
    return rs


def _tx_and_block_swapped(rs: list[Record]) -> list[Record]:
    a, b = _batches(rs)[:2]
    for key in ("txHash", "blockNumber", "anchoredAt"):
        a[key], b[key] = b[key], a[key]
    return rs


def _batch_field(key: str, change: Callable[[Any], Any]) -> Callable[[list[Record]], list[Record]]:
    def apply(rs: list[Record]) -> list[Record]:
        b = _batches(rs, 1)[0]
        b[key] = change(b[key])
        return rs

    return apply


def _tag_fresh_kept_batches(rs: list[Record]) -> list[Record]:
    """The header's tag and every batch's made fresh (the batches kept)."""
    tag = "0x" + "7f" * 32  # fixed: the conformance corpus is made again byte for byte
    for r in [rs[0], *_of(rs, "batch")]:
        r["graphTag"] = tag
    return rs


def _other_contract(rs: list[Record]) -> list[Record]:
    for r in [rs[0], *_of(rs, "batch")]:
        r["contract"] = "0x" + "5a" * 20
    return rs


def _never_anchored(rs: list[Record]) -> list[Record]:
    """Issue 37's fifth hole: the memory not anchored yet given a batch of its own, consistent in every
    way the file can be (root, proof, manifest, prevRoot, leaf count, a transaction of another batch)."""
    waiting = _first([m for m in _of(rs, "memory") if not m["batch"]], "memory not anchored yet")
    batches = _batches(rs, 1)
    last = batches[-1]
    leaf = memory_leaf(waiting["id"], bytes.fromhex(waiting["hash"][2:]))
    manifested = last.get("manifestProof") is not None
    _, manifest = manifest_leaf(rs[0]["graph"], [(waiting["seq"], waiting["id"])], [], None)
    tree = MerkleTree.build([leaf, manifest] if manifested else [leaf])
    root = "0x" + tree.root.hex()
    batch = copy.deepcopy(last) | {"root": root, "seq": last["seq"] + 1, "count": 2 if manifested else 1}
    batch |= {"prevRoot": last["root"], "blockNumber": last["blockNumber"] + 1}
    if manifested:
        batch["manifestProof"] = ["0x" + p.hex() for p in tree.proof(manifest)]
    waiting["batch"], waiting["proof"] = root, ["0x" + p.hex() for p in tree.proof(leaf)]
    i = rs.index(last)
    out = [*rs[: i + 1], batch, *rs[i + 1 :]]
    _recount(out)
    return out


def _duplicate_key(rs: list[Record]) -> Lines:
    """A key twice in one object: the first forged, the last genuine (one reader sees each)."""
    m = _first(_anchored(rs), "anchored memory")
    lines = [_dump(r) for r in rs]
    i = rs.index(m)
    genuine = json.dumps(m["hash"]).encode()
    lines[i] = lines[i].replace(b'"hash":' + genuine, b'"hash":"0x' + b"ab" * 32 + b'","hash":' + genuine, 1)
    return lines


def _exported_at(value: str) -> Callable[[list[Record]], list[Record]]:
    def apply(rs: list[Record]) -> list[Record]:
        rs[0]["exportedAt"] = value
        return rs

    return apply


def _memory_swapped_graph(rs: list[Record]) -> list[Record]:
    """The header's graph renamed (every envelope names the old one)."""
    rs[0]["graph"] = rs[0]["graph"] + "-forged"
    return rs


# -- the documented limits --


def _entity_props(rs: list[Record]) -> list[Record]:
    e = _first(_of(rs, "entity"), "entity")
    e["props"] = {} if e["props"] else {"source": "extracted"}
    return rs


def _relation_props(rs: list[Record]) -> list[Record]:
    r = _first(_of(rs, "relation"), "relation")
    r["props"] = {**r["props"], "venue": "forged"}
    return rs


def _relation_invented(rs: list[Record]) -> list[Record]:
    entities = _of(rs, "entity")
    if len(entities) < 2:
        raise NotApplicable("fewer than two entities")
    a, b = entities[0], entities[1]
    i = rs.index(a)
    forged = {
        "type": "relation",
        "id": "edge_forged0004",
        "rel": "FORGED",
        "from": a["id"],
        "to": b["id"],
        "props": {},
    }
    out = [*rs[: i + 1], forged, *rs[i + 1 :]]
    _recount(out)
    return out


def _relation_removed(rs: list[Record]) -> list[Record]:
    rel = _first(_of(rs, "relation"), "relation")
    out = [r for r in rs if r is not rel]
    _recount(out)
    return out


def _memory_props(rs: list[Record]) -> list[Record]:
    m = _first(_anchored(rs), "anchored memory")
    m["props"] = {**m["props"], "writerClient": "forged/1.0", "data": json.dumps({"forged": True})}
    return rs


def _extracted(rs: list[Record]) -> tuple[Record, Record]:
    for m in _of(rs, "memory"):
        for e in m["edges"]:
            if e.get("source") == "extracted":
                return m, e
    raise NotApplicable("the export has no extracted edge")


def _extracted_repointed(rs: list[Record]) -> list[Record]:
    m, edge = _extracted(rs)
    others = [e["id"] for e in _of(rs, "entity") if e["id"] not in {x["to"] for x in m["edges"]}]
    if not others:
        raise NotApplicable("no entity to re-point to")
    edge["to"] = others[0]
    return rs


def _extracted_dropped(rs: list[Record]) -> list[Record]:
    m, edge = _extracted(rs)
    m["edges"].remove(edge)
    return rs


def _extracted_invented(rs: list[Record]) -> list[Record]:
    """An extracted edge added to the memory that has them, to an entity its text does not name, by
    its own extractor."""
    m, edge = _extracted(rs)
    others = [e["id"] for e in _of(rs, "entity") if e["id"] not in {x["to"] for x in m["edges"]}]
    to = _first([{"id": e} for e in others], "entity the memory does not mention")["id"]
    m["edges"].append(
        {
            "rel": "MENTIONS",
            "to": to,
            "id": "edge_forged0005",
            "source": "extracted",
            "extractor": edge["extractor"],
        }
    )
    return rs


def _extraction_unread(rs: list[Record]) -> list[Record]:
    """A memory said not read by an extractor when exported: its extracted edges and extractedWith gone."""
    m, _ = _extracted(rs)
    m["edges"] = [e for e in m["edges"] if e.get("source") != "extracted"]
    m["props"].pop("extractedWith", None)
    return rs


def _extraction_relabelled(rs: list[Record]) -> list[Record]:
    """A memory's extraction relabelled to an extractor the auditor lacks, and an edge re-pointed."""
    m, _ = _extracted(rs)
    for e in m["edges"]:
        if e.get("source") == "extracted":
            e["extractor"] = "rules/999"
    m["props"]["extractedWith"] = "rules/999"
    return _extracted_repointed(rs)


def _link_repointed(rs: list[Record]) -> list[Record]:
    """An event's typed link pointed at an entity its envelope does not name."""
    m, link = _event_link(rs)
    named = set(m["envelope"]["entities"])
    link["to"] = _first(
        [e for e in _of(rs, "entity") if e["id"] not in named], "entity the event does not name"
    )["id"]
    return rs


def _link_invented(rs: list[Record]) -> list[Record]:
    """A CONTRADICTS link added to an ordinary memory (no event), to an entity it names."""
    m = _first(
        [
            m
            for m in _anchored(rs)
            if m["envelope"]["entities"] and all(e["rel"] in ("MENTIONS", "SUPERSEDES") for e in m["edges"])
        ],
        "ordinary memory naming an entity",
    )
    m["edges"].append({"rel": "CONTRADICTS", "to": m["envelope"]["entities"][0], "id": "edge_forged0006"})
    return rs


def _event_link(rs: list[Record]) -> tuple[Record, Record]:
    for m in _of(rs, "memory"):
        for e in m["edges"]:
            if e["rel"] not in ("MENTIONS", "SUPERSEDES"):
                return m, e
    raise NotApplicable("the export has no event with a typed link (store_event)")


def _unanchored_rewritten(rs: list[Record]) -> list[Record]:
    m = _first([m for m in _of(rs, "memory") if not m["batch"]], "memory not anchored yet")
    m["envelope"]["text"] = "forged while pending"
    _rehash(m)
    return rs


def _unanchored_dropped(rs: list[Record]) -> list[Record]:
    """The newest memories, not anchored yet, left out and lastSeq lowered to the last one kept."""
    memories = _of(rs, "memory")
    last_anchored = max((m["seq"] for m in memories if m["batch"]), default=0)
    gone = [m for m in memories if not m["batch"] and m["seq"] > last_anchored]
    if not gone:
        raise NotApplicable("no memory after the last anchored one")
    header = rs[0]
    header["lastSeq"] = max([last_anchored, *(t["seq"] or 0 for t in _of(rs, "tombstone"))])
    header["forgottenUnanchored"] = [s for s in header["forgottenUnanchored"] if s <= header["lastSeq"]]
    out = [r for r in rs if not any(r is g for g in gone)]
    _recount(out)
    return out


def _newest_batch_dropped_earlier(rs: list[Record]) -> list[Record]:
    """The newest batch, its members and every memory after them left out, lastSeq lowered to the
    last position kept, exportedAt set a moment before the batch was anchored: a file as it would
    have been made then."""
    from datetime import UTC, datetime

    last = _batches(rs)[-1]
    if any(t.get("forget") and t["forget"]["batch"] == last["root"] for t in _of(rs, "tombstone")):
        raise NotApplicable("the newest batch holds a forget record (an older file had no tombstone)")
    first = min(m["seq"] for m in _of(rs, "memory") if m["batch"] == last["root"])
    out = [r for r in rs if r is not last and not (r["type"] == "memory" and r["seq"] >= first)]
    header = out[0]
    kept = [m["seq"] for m in _of(out, "memory")] + [t["seq"] or 0 for t in _of(out, "tombstone")]
    header["lastSeq"] = max([0, *kept, *(s for s in header["forgottenUnanchored"] if s < first)])
    header["forgottenUnanchored"] = [s for s in header["forgottenUnanchored"] if s <= header["lastSeq"]]
    moment = last["anchoredAt"] - 1
    header["exportedAt"] = datetime.fromtimestamp(moment // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment % 1000:03d}Z"
    )
    _recount(out)
    return out


def _event_link_retyped(rs: list[Record]) -> list[Record]:
    """An event's REINFORCES link turned into a CONTRADICTS (the context it reaches kept)."""
    _, link = _event_link(rs)
    link["rel"] = "CONTRADICTS" if link["rel"] != "CONTRADICTS" else "REINFORCES"
    return rs


def _event_link_dropped(rs: list[Record]) -> list[Record]:
    """An event's typed link dropped (the context it names kept in its envelope)."""
    m, link = _event_link(rs)
    m["edges"].remove(link)
    return rs


EPOCH = "1970-01-01T00:00:00.000Z"


def _dated_1970(rewind: bool) -> Callable[[list[Record]], list[Record]]:
    """Issue 43's: a file dated 1970 with every batch and tombstone dropped (the tag kept), every memory
    unanchored and a text rewritten: every batch on chain comes after it. `rewind`: no text rewritten,
    every memory's createdAt moved before it instead (the hashes remade: nothing anchored binds them
    now): the graph as it would have been then, which only its age in the verdict tells."""

    def apply(rs: list[Record]) -> list[Record]:
        out = _deanchored(rs[0]["graphTag"], rewrite=not rewind)(rs)
        out[0]["exportedAt"] = EPOCH
        if rewind:
            for m in _of(out, "memory"):
                m["envelope"]["createdAt"] = EPOCH
                _rehash(m)
        return out

    return apply


def _untagged(rs: list[Record]) -> list[Record]:
    """The header and every batch claim to predate chained roots (tags and previous roots nulled)."""
    for r in [rs[0], *_of(rs, "batch")]:
        r["graphTag"] = None
        if r["type"] == "batch":
            r["prevRoot"] = None
    return rs


def _pending_with_proof(rs: list[Record]) -> list[Record]:
    """The memory not anchored yet given an anchored memory's proof (its batch left null)."""
    waiting = _first([m for m in _of(rs, "memory") if not m["batch"]], "memory not anchored yet")
    waiting["proof"] = _first(_anchored(rs), "anchored memory")["proof"]
    return rs


def _header_counts(rs: list[Record]) -> list[Record]:
    rs[0]["counts"]["memories"] += 7
    return rs


FRESH = "0x" + "7e" * 32  # a fresh graph tag
(AC, DA, CO, FO, PO, ED, ER, RB, NA, FI, XE, EL, DT) = CLASSES
TAMPERS: tuple[Tamper, ...] = (
    # each must be caught, and by its rule (the one the conformance corpus expects)
    Tamper("a text changed, its hash kept", AC, _text_kept_hash, "hash"),
    Tamper("a text changed and rehashed", AC, _text_rehashed, "proof"),
    Tamper("tags changed and rehashed", AC, _tags_rehashed, "proof"),
    Tamper("createdAt changed and rehashed", AC, _created_rehashed, "proof"),
    Tamper("two texts swapped, both rehashed", AC, _contents_swapped, "proof"),
    Tamper("a text changed and its batch rebuilt (new root, proofs, manifest)", AC, _rebatched, "anchored"),
    Tamper(
        "de-anchored: batches and tombstones gone, tag null, a text rehashed", DA, _deanchored(None), "pin"
    ),
    Tamper(
        "de-anchored: batches and tombstones gone, a fresh tag, a text rehashed",
        DA,
        _deanchored(FRESH),
        "pin",
    ),
    Tamper("de-anchored, tag null, the auditor holding a root", DA, _deanchored(None), "pin", pin="root"),
    Tamper("de-anchored, a fresh tag, the auditor holding a root", DA, _deanchored(FRESH), "pin", pin="root"),
    Tamper("a fresh tag on the header and every batch (batches kept)", DA, _tag_fresh_kept_batches, "pin"),
    Tamper(
        "the last batch and its members left out, positions declared forgotten",
        CO,
        _batch_dropped(-1),
        "missing-batch",
    ),
    Tamper(
        "the first batch and its members left out, the next bridged over it",
        CO,
        _batch_dropped(0),
        "missing-batch",
    ),
    Tamper(
        "the last batch left out, the auditor holding a root",
        CO,
        _batch_dropped(-1),
        "missing-batch",
        pin="root",
    ),
    Tamper("an anchored memory left out: a gap", CO, _memory_removed(False), "position"),
    Tamper(
        "an anchored memory left out, its position declared forgotten", CO, _memory_removed(True), "members"
    ),
    Tamper("a tombstone left out, its position declared forgotten", CO, _tombstone_removed, "members"),
    Tamper(
        "an anchored memory made a tombstone 'from before forget records'",
        FO,
        _tombstoned("none"),
        "manifest",
    ),
    Tamper(
        "an anchored memory made a tombstone with another's forget record",
        FO,
        _tombstoned("borrowed"),
        "forget",
    ),
    Tamper(
        "an anchored memory made a tombstone, its forget record sealed in a rebuilt batch",
        FO,
        _tombstoned("own"),
        "anchored",
    ),
    Tamper("a real tombstone's forget record dropped", FO, _forget_dropped, "manifest"),
    Tamper(
        "two memories of different batches swap positions and lines",
        PO,
        _positions_swapped(False),
        "manifest",
    ),
    Tamper("two memories of one batch swap positions and lines", PO, _positions_swapped(True), "manifest"),
    Tamper("a memory moved to a position forgotten before anchoring", PO, _moved_to_forgotten, "manifest"),
    Tamper("an entity renamed everywhere but in the envelopes", ED, _renamed, "edge"),
    Tamper("a MENTIONS edge re-pointed", ED, _mention_repointed, "edge"),
    Tamper("a MENTIONS edge dropped", ED, _mention_dropped, "edge"),
    Tamper("a MENTIONS edge invented", ED, _mention_invented, "edge"),
    Tamper("an agent's MENTIONS passed off as extracted", ED, _mention_as_extracted, "edge"),
    Tamper("a SUPERSEDES edge dropped", ED, _supersedes_dropped, "edge"),
    Tamper("a SUPERSEDES edge re-pointed", ED, _supersedes_repointed, "edge"),
    Tamper("a SUPERSEDES edge invented", ED, _supersedes_invented, "edge"),
    Tamper("an edge id used twice", ED, _edge_id_repeated, "duplicate"),
    Tamper("an entity whose id is not label:name", ER, _entity_id_not_its_name, "entity"),
    Tamper("a relation line repeated", ER, _relation_repeated, "duplicate"),
    Tamper("a relation repeated under a new id", ER, _relation_repeated_new_id, "duplicate"),
    Tamper("a relation to an entity with no line", ER, _relation_to_nowhere, "relation"),
    Tamper("a mentioned entity's line left out", ER, _entity_removed, "edge"),
    Tamper("txHash swapped between two batches", RB, _tx_swapped, "receipt"),
    Tamper("txHash, block and time swapped between two batches", RB, _tx_and_block_swapped, "anchored"),
    Tamper("a batch's block number moved", RB, _batch_field("blockNumber", lambda v: v + 1), "anchored"),
    Tamper("a batch's leaf count changed", RB, _batch_field("count", lambda v: v + 1), "anchored"),
    Tamper("a batch's anchoredAt moved", RB, _batch_field("anchoredAt", lambda v: v - 60_000), "anchored"),
    Tamper("a batch's number changed", RB, _batch_field("seq", lambda v: v + 10), "anchored"),
    Tamper("another contract on the header and every batch", RB, _other_contract, "pin"),
    Tamper("the memory not anchored yet given a batch the chain never saw", NA, _never_anchored, "anchored"),
    Tamper("a key twice in a memory (the first forged)", FI, _duplicate_key, "json"),
    Tamper("exportedAt not ISO", FI, _exported_at("yesterday at noon"), "schema"),
    Tamper("exportedAt without a zone", FI, _exported_at("2026-12-05T01:00:00"), "schema"),
    Tamper("the header's graph renamed", FI, _memory_swapped_graph, "graph"),
    Tamper("an extracted edge re-pointed", XE, _extracted_repointed, "extracted"),
    Tamper("an extracted edge dropped", XE, _extracted_dropped, "extracted"),
    Tamper("an extracted edge invented", XE, _extracted_invented, "extracted"),
    Tamper("an event's link re-pointed to an entity its envelope does not name", EL, _link_repointed, "edge"),
    Tamper("a CONTRADICTS link invented on an ordinary memory", EL, _link_invented, "edge"),
    Tamper(
        "dated 1970: batches and tombstones gone (tag kept), a text rehashed", DT, _dated_1970(False), "time"
    ),
    Tamper(
        "the header and every batch claim to predate chained roots (no tag pinned)",
        DT,
        _untagged,
        "link",
        pin="contract",
    ),
    Tamper("the memory not anchored yet carrying an anchored one's proof", NA, _pending_with_proof, "proof"),
    # the documented limits: tried, listed apart
    Tamper("an entity's props changed", "entity-props", _entity_props),
    Tamper("a relation's props changed", "relation-props", _relation_props),
    Tamper("a relation invented", "relations", _relation_invented),
    Tamper("a relation removed", "relations", _relation_removed),
    Tamper("a memory's props changed", "memory-props", _memory_props),
    Tamper("a memory's extraction said unread, its extracted edges dropped", "underived", _extraction_unread),
    Tamper(
        "a memory's extraction relabelled to an extractor the auditor lacks, an edge re-pointed",
        "underived",
        _extraction_relabelled,
    ),
    Tamper("a pending memory's text changed and rehashed", "unanchored", _unanchored_rewritten),
    Tamper("the pending memories left out, lastSeq lowered", "unanchored", _unanchored_dropped),
    Tamper(
        "the newest batch left out, exportedAt before it", "newest-batches", _newest_batch_dropped_earlier
    ),
    Tamper(
        "dated 1970: batches and tombstones gone, every memory unanchored and dated before it",
        "newest-batches",
        _dated_1970(True),
    ),
    Tamper("the header's counts changed", "header-counts", _header_counts),
    Tamper("an event's REINFORCES link made a CONTRADICTS", "event-links", _event_link_retyped),
    Tamper("an event's link dropped", "event-links", _event_link_dropped),
)


# ---- running them ---------------------------------------------------------------------------------------


def audit_file(path: Path, rpc: str, args: list[str]) -> tuple[int, dict[str, Any]]:
    """`graphsvc audit PATH --rpc RPC ARGS --json`, in this process: its exit code and its JSON."""
    from graphsvc.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["audit", str(path), "--rpc", rpc, *args, "--json"])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    try:
        shown = json.loads(out.getvalue())
    except json.JSONDecodeError:
        shown = {"verdict": (out.getvalue() + err.getvalue()).strip()[:200], "findings": []}
    return code, shown


def forge(lines: Lines, rpc: str, pins: Pins, tampers: tuple[Tamper, ...] = TAMPERS) -> list[Outcome]:
    """Every tamper of `tampers` applied to the genuine export `lines`, each audited."""
    genuine = records_of(lines)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="graphsvc-forger-") as home:
        path = Path(home) / "forged.jsonl"
        path.write_bytes(b"".join(lines))
        code, shown = audit_file(path, rpc, pins.args("tag"))
        if code != 0:
            raise SystemExit(
                f"the genuine export does not pass the audit (exit {code}): {shown.get('verdict')}"
            )
        for tamper in tampers:
            try:
                changed = tamper.apply(copy.deepcopy(genuine))
            except NotApplicable as e:
                outcomes.append(Outcome(tamper, None, verdict=str(e)))
                continue
            forged = sealed(changed) if changed and isinstance(changed[0], dict) else seal(changed)  # type: ignore[arg-type]
            path.write_bytes(b"".join(forged))
            code, shown = audit_file(path, rpc, pins.args(tamper.pin))
            rules = sorted(shown.get("rules") or {f["rule"] for f in shown.get("findings", [])})
            outcomes.append(Outcome(tamper, code, rules, str(shown.get("verdict", ""))))
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    """Class by class: tampers tried, passed, caught (the documented limits apart)."""
    rows = ["class                      tried  passed  caught", "-" * 48]

    def row(name: str, of: list[Outcome]) -> str:
        tried = [o for o in of if o.exit_code is not None]
        passed = sum(o.passed for o in tried)
        return f"{name:<26} {len(tried):>5}  {passed:>6}  {len(tried) - passed:>6}"

    for kind in CLASSES:
        rows.append(row(kind, [o for o in outcomes if o.tamper.kind == kind]))
    caught = [o for o in outcomes if not o.tamper.limit]
    rows += ["-" * 48, row("all but the limits", caught), "", "documented limits (docs/audit.md)", "-" * 48]
    for name in LIMITS:
        rows.append(row(name, [o for o in outcomes if o.tamper.kind == name]))
    skipped = [o for o in outcomes if o.exit_code is None]
    if skipped:
        rows += ["", "not applicable to this export:"] + [f"  {o.tamper.name}: {o.verdict}" for o in skipped]
    return "\n".join(rows)


def details(outcomes: list[Outcome]) -> str:
    out = []
    for o in outcomes:
        mark = "-" if o.exit_code is None else "PASSED" if o.passed else "caught"
        pin = " (pins: contract, a root)" if o.tamper.pin == "root" else ""
        rules = ",".join(f"*{r}*" if r == o.tamper.rule else r for r in o.rules)  # *the rule expected*
        out.append(f"  {mark:<7} [{o.tamper.kind}] {o.tamper.name}{pin}: exit {o.exit_code} {rules}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("export", type=Path, help="a genuine graphsvc export of an anchored graph")
    parser.add_argument("--rpc", required=True)
    parser.add_argument("--contract", help="the contract the auditor trusts")
    parser.add_argument("--graph-tag", help="the graph tag the operator published")
    parser.add_argument("--known-root", action="append", default=[], help="a root the auditor holds")
    parser.add_argument("--json", action="store_true", help="each tamper's outcome as JSON")
    parser.add_argument("--verbose", action="store_true", help="each tamper's outcome under the table")
    args = parser.parse_args(argv)
    lines = args.export.read_bytes().splitlines(keepends=True)
    outcomes = forge(lines, args.rpc, Pins(args.contract, args.graph_tag, tuple(args.known_root)))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": o.tamper.name,
                        "kind": o.tamper.kind,
                        "limit": o.tamper.limit,
                        "exit": o.exit_code,
                        "rules": o.rules,
                    }
                    for o in outcomes
                ],
                indent=2,
            )
        )
    else:
        print(table(outcomes))
        if args.verbose:
            print("\n" + details(outcomes))
    return 1 if any(o.passed and not o.tamper.limit for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
