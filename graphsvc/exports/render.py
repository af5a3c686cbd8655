"""An audit's verdict, as text for a terminal and as JSON (`graphsvc audit --json`): the same claims.

The verdict says only what was earned. "K of N memories anchored and unchanged" counts memories whose
envelope hashes to their hash, whose proof folds to a root that is on chain as the export says; the
others are "unanchored (self-consistent only)": nothing outside the file vouches for them. The graph
is called complete only when the graph tag whose list was walked is bound to a trust root you brought;
with the file's own tag the list is walked but nothing is claimed. Every trust root is named with
where it came from, and every string from the file or the chain is shown inert.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphsvc.domain.render import plural
from graphsvc.exports.audit import AuditReport
from graphsvc.exports.checks import Checked, inert

Check = tuple[str, bool | None, str]
SHOWN_FINDINGS = 50


def _check(key: str, rules: set[str], failing: set[str], held: str, broken: str) -> Check:
    ok = not rules & failing
    return key, ok, held if ok else broken


def file_checks(report: AuditReport) -> list[Check]:
    c, header = report.checked, report.checked.header
    rules, last = c.rules(), header.lastSeq if header else 0
    return [
        _check(
            "lines",
            rules,
            {"json", "schema", "order", "duplicate", "truncated", "trailer", "graph", "chain", "reserved"},
            f"{c.lines:,} lines read: records in order, unique, trailer digest and counts match",
            f"{c.lines:,} lines read: a record is unreadable, out of order, repeated, not counted or not importable",
        ),
        _check(
            "hashes",
            rules,
            {"hash"},
            f"{c.hashed:,} of {plural(c.memories, 'memory', 'memories')} hash to their envelopes",
            f"{c.memories - c.hashed:,} of {plural(c.memories, 'memory', 'memories')} do not hash to their envelopes",
        ),
        _check(
            "proofs",
            rules,
            {"proof", "batch", "members", "link"},
            f"{plural(c.proofs, 'proof', 'proofs')} (memories and tombstones) fold to their batch roots; "
            "each batch holds its leaf count",
            "a proof does not fold, or a batch does not hold its leaf count of members",
        ),
        _check(
            "positions",
            rules,
            {"position", "manifest"},
            f"positions 1..{last:,}: each a memory, a tombstone or forgotten before it was anchored; "
            + _bound(c.positions_bound, c.anchored),
            f"{c.positions_missing:,} of positions 1..{last:,} hold no memory or tombstone and were not forgotten "
            "before anchoring, or a manifest does not bind its batch's positions",
        ),
        _forgets(c, rules),
        _check(
            "dates",
            rules,
            {"time"},
            f"every memory created and forgotten no later than the file was made ({age(report)})",
            f"a memory was created or forgotten after the file says it was made ({age(report)})",
        ),
        _check(
            "edges",
            rules,
            {"edge", "entity", "relation"},
            f"MENTIONS, SUPERSEDES and event links agree with the envelopes; "
            f"{plural(c.entities, 'entity', 'entities')} and {plural(c.relations, 'relation', 'relations')} whole",
            "an edge, entity or relation does not agree with what is hashed, or goes nowhere",
        ),
        *_extracted(c, rules),
    ]


def _extracted(c: Checked, rules: set[str]) -> list[Check]:
    """Extracted edges derived again (exports/extracted.py): what was, and what could not be."""
    x = c.extraction
    if x is None or not (x.checked or x.unknown or c.extracted):
        return []
    if "extracted" in rules:
        return [
            ("extracted", False, "a memory's extracted edges are not what its extractor finds in its text")
        ]
    said = (
        f"{plural(x.checked, 'memory', 'memories')}' extracted edges ({c.extracted:,} in all) are what "
        f"{', '.join(sorted(x.extractors)) or 'no extractor'} finds in their texts, given the export's entities"
    )
    if x.loose:
        said += f" ({plural(x.loose, 'name', 'names')} shared by several entities: bound to one of them)"
    if x.unread:
        said += f"; {plural(x.unread, 'memory', 'memories')} not read by an extractor when exported"
    if not x.unknown:
        return [("extracted", True, said)]
    others = ", ".join(f"{n:,} by {inert(v)}" for v, n in sorted(x.unknown.items()))
    return [("extracted", None, f"{said}; not derived again, this audit lacking their extractor: {others}")]


def _bound(bound: int, anchored: int) -> str:
    said = f"{bound:,} of {anchored:,} anchored memories' positions bound by their batches' manifests"
    if bound < anchored:
        said += f" ({anchored - bound:,} in batches sealed before manifests: their order is not proven)"
    return said


def _forgets(c: Checked, rules: set[str]) -> Check:
    """Tombstones: each forget anchored as its own record, or one of the graph's tombstones from before
    forget records (which its first manifest lists, when it has one)."""
    if rules & {"forget", "manifest"}:
        return "forgets", False, "a forget record or a tombstone from before them is not as anchored"
    said = f"{c.forgets:,} of {plural(c.tombstones, 'tombstone', 'tombstones')} with their forget records anchored"
    if not c.before:
        return "forgets", True, said
    if c.manifests:
        return (
            "forgets",
            True,
            f"{said}; {c.before:,} from before forget records, as the graph's first manifest lists",
        )
    return (
        "forgets",
        None,
        f"{said}; {c.before:,} from before forget records, and no manifest lists them: a forget that happened "
        "and one that did not look the same",
    )


def checks(report: AuditReport) -> list[Check]:
    out = file_checks(report)
    if report.chain is not None:
        out += report.chain.checks
    if report.unreachable:
        out.append(("chain", None, f"not checked: {report.unreachable}"))
    elif report.chain is None and not report.unreadable:
        out.append(("chain", None, "not checked: no RPC"))
    return out


def _contract_note(report: AuditReport) -> str:
    contract = next((t for t in report.chain.trust if t.name == "contract"), None) if report.chain else None
    if contract is not None and contract.source == "file":
        return f" The contract is the file's ({contract.value}): pin the operator's with --contract."
    return ""


def age(report: AuditReport) -> str:
    """When the file says it was made, and how long before this audit: "2026-12-05T01:00:00.000Z, 2
    days ago" (the newest batches anchored after it are not in it)."""
    header = report.checked.header
    if header is None:
        return "never"
    seconds = report.audited_at - datetime.fromisoformat(header.exportedAt).timestamp()
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if abs(seconds) >= size:
            n = int(abs(seconds) // size)
            said = plural(n, unit, unit + "s")
            break
    else:
        said = "less than a minute"
    return f"{header.exportedAt}, {said} {'ago' if seconds >= 0 else 'ahead of this audit'}"


def verdict(report: AuditReport) -> str:
    """The first line: what holds, in as many words as were earned."""
    c, header = report.checked, report.checked.header
    graph = repr(inert(header.graph)) if header else "?"
    code = report.exit_code
    if code == 2:
        unread = c.unreadable
        return (
            f"✗ Cannot read the export: {unread:,} {'line is not a record' if unread == 1 else 'lines are not records'} "
            "of graphsvc.export/v1 (nothing was checked against the chain)."
        )
    if code == 1:
        return f"✗ Not audited: {plural(report.findings.count, 'problem', 'problems')} in the export of graph {graph}."
    held = f"{c.anchored:,} of {plural(c.memories, 'memory', 'memories')} anchored and unchanged"
    rest = f"{c.memories - c.anchored:,} unanchored (self-consistent only)"
    if code == 3:
        return f"? Could not check the chain: the file's own checks passed for graph {graph} (nothing anchored is proven)."
    trust = next((t for t in report.chain.trust if t.name == "graph tag"), None) if report.chain else None
    if report.complete:
        assert trust is not None and report.chain is not None
        later = report.chain.later
        since = f"; {plural(later, 'batch', 'batches')} anchored since (not in it)" if later else ""
        return (
            f"✓ Audited: graph {graph} is complete and unchanged: {held}; {rest}; every batch its graph tag "
            f"lists on chain is here ({trust.source} tag), as of the file's making ({age(report)}{since})."
            f"{_contract_note(report)}"
        )
    return (
        f"✓ Consistent, not proven complete: graph {graph}: {held}; {rest}; made {age(report)}. "
        "Completeness is not proven: no graph tag of yours (bring --graph-tag, --known-root or --bundle)."
        f"{_contract_note(report)}"
    )


def render(report: AuditReport) -> str:
    """The verdict, the checklist (✓ / ✗ / · not proven or not checked), the trust roots, notes, then
    every problem by line."""
    marks = {True: "✓", False: "✗", None: "·"}
    lines = [verdict(report), *(f"  {marks[ok]} {key:<9} {text}" for key, ok, text in checks(report))]
    if report.chain is not None:
        lines += [f"  trust: {t}" for t in report.chain.trust]
        lines += [f"  note: {n}" for n in report.chain.notes]
    findings = report.findings
    lines += [f"  {f}" for f in list(findings)[:SHOWN_FINDINGS]]
    if findings.count > SHOWN_FINDINGS:
        lines.append(f"  … {findings.count - SHOWN_FINDINGS:,} more problems")
    if report.rpc_calls:
        lines.append(f"  {report.rpc_calls:,} RPC calls, {report.seconds:.1f} s")
    return "\n".join(lines)


def as_json(report: AuditReport) -> dict[str, Any]:
    """The same verdict as data: every claim, trust root and finding (strings as the file gave them;
    JSON escapes what a terminal would act on)."""
    c, chain = report.checked, report.chain
    return {
        "exitCode": report.exit_code,
        "verdict": verdict(report),
        "graph": c.header.graph if c.header else None,
        "exportedAt": c.header.exportedAt if c.header else None,
        "ageSeconds": round(report.audited_at - datetime.fromisoformat(c.header.exportedAt).timestamp())
        if c.header
        else None,
        "batchesSince": chain.later if chain else None,
        "memories": {"total": c.memories, "anchored": c.anchored, "unanchored": c.memories - c.anchored},
        "tombstones": {"total": c.tombstones, "forgetsAnchored": c.forgets, "beforeForgetRecords": c.before},
        "positionsBound": c.positions_bound,
        "batches": len(c.batches),
        "entities": c.entities,
        "relations": c.relations,
        "extractedEdges": c.extracted,
        "extraction": {
            "derived": x.checked,
            "notRead": x.unread,
            "notDerived": {inert(v): n for v, n in sorted(x.unknown.items())},
            "sharedNames": x.loose,
        }
        if (x := c.extraction)
        else None,
        "complete": report.complete,
        "trustRoots": [
            {"name": t.name, "value": t.value, "source": t.source, "via": t.via or None} for t in chain.trust
        ]
        if chain
        else [],
        "checks": [{"key": k, "ok": ok, "text": text} for k, ok, text in checks(report)],
        "notes": chain.notes if chain else [],
        "findings": [{"line": f.line, "rule": f.rule, "text": f.text} for f in report.findings],
        "moreFindings": report.findings.more,
        "rules": sorted(report.findings.rules),
        "rpcCalls": report.rpc_calls,
        "seconds": round(report.seconds, 3),
    }
