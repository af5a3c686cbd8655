"""Text renderings of each tool's result, in the seed's format (the JSON is the model itself)."""

from __future__ import annotations

from graphsvc.domain.locus import InsightsResult, ListContextsResult, RetrieveResult, StoreEventResult
from graphsvc.domain.models import (
    AnchorResult,
    ExploreResult,
    ForgetResult,
    LinkResult,
    RecalledMemory,
    RecallResult,
    RememberResult,
    VerifyResult,
)

EDGES_SHOWN = 5
PENDING_CAP = 1000  # recall counts a graph's memories waiting for their vector up to this


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def plural(n: int, one: str, many: str) -> str:
    """`n` with the noun that fits it: "1 leaf", "3 leaves"."""
    return f"{n} {one if n == 1 else many}"


def _tx(explorer_url: str | None, tx_hash: str | None) -> str:
    return explorer_url or f"{tx_hash} (this chain has no block explorer)"


def remember_text(result: RememberResult, text: str) -> str:
    return f'Remembered: "{clip(text, 50)}" (id: {result.id})'


def _edges_line(edges: list[str]) -> str:
    shown = ", ".join(edges[:EDGES_SHOWN])
    more = len(edges) - EDGES_SHOWN
    return f"edges: {shown}" + (f" … +{more} more" if more > 0 else "")


def _when(memory: RecalledMemory) -> str:
    """When it happened, and validity, when the memory has them: its interval, what superseded it."""
    notes: list[str] = [f"occurred {memory.occurredAt}"] if memory.occurredAt else []
    if memory.validFrom or memory.validTo:
        notes.append(f"valid {memory.validFrom or '…'} to {memory.validTo or '…'}")
    if memory.supersededBy:
        notes.append(f"superseded by {', '.join(memory.supersededBy)}")
    return f"  [{'; '.join(notes)}]" if notes else ""


def recall_text(result: RecallResult) -> str:
    count = len(result.memories)
    lines = [f"Recalled {plural(count, 'memory', 'memories')}" + (":" if count else ".")]
    if result.window is not None:
        window = result.window
        read = f"read from {window.text!r}" if window.text else "from/to"
        lines[0] = lines[0][:-1] + f" (time window {window.from_} to {window.to}, {read})" + lines[0][-1]
    for n, memory in enumerate(result.memories, 1):
        lines.append(
            f"{n}. {clip(memory.text, 120)}  (score {memory.score:.2f}, hop {memory.distance}){_when(memory)}"
        )
    nodes, edges = result.context
    entities = sum(not node.startswith("mem_") for node in nodes)
    lines += ["", "Context graph:", f"{len(nodes)} nodes ({entities} entities), {len(edges)} edges"]
    if edges:
        lines.append(_edges_line([f"{a} -[{t}]→ {b}" for a, t, b in edges]))
    if result.contextTruncated:
        lines.append("(context truncated at 300 nodes: raise hops or use explore for specific paths)")
    if result.pending:
        waiting = plural(result.pending, "memory", "memories") + (
            "+" if result.pending >= PENDING_CAP else ""
        )
        lines.append(f"({waiting} of this graph not weighed by meaning yet: still being embedded)")
    return "\n".join(lines)


def link_text(result: LinkResult) -> str:
    return f"Linked: {result.from_.name} -[{result.type}]→ {result.to.name} (edge {result.id})"


def explore_text(result: ExploreResult) -> str:
    entities = sum(node.label != "Memory" for node in result.nodes)
    lines = [f"Explored {len(result.nodes)} nodes ({entities} entities), {len(result.edges)} edges"]
    for node in result.nodes:
        lines.append(f"  [{node.depth}] {node.label} {node.id}: {clip(node.text, 80)}")
    if result.edges:
        lines.append(_edges_line([f"{e.from_} -[{e.type}]→ {e.to}" for e in result.edges]))
    if result.truncated:
        lines.append("(truncated at the limit: narrow with types or direction, or raise limit)")
    return "\n".join(lines)


def forget_text(result: ForgetResult) -> str:
    return f"Deleted memory {result.id}."


def anchor_text(result: AnchorResult) -> str:
    if result.status == "not_configured":
        return f"Anchoring is not configured: {result.reason}."
    if result.status == "nothing_pending":
        return "Nothing to anchor: no pending memories."
    lines = [f"Anchored {plural(result.count, 'memory', 'memories')}.", f"Root: {result.root}"]
    lines.append(f"Tx: {_tx(result.explorerUrl, result.txHash)}")
    if result.graphTag:
        lines.append(f"Graph tag: {result.graphTag} (what an auditor pins: graphsvc audit --graph-tag)")
    if result.status == "not_final":
        lines.append(f"Not final yet: {result.reason}.")
    return "\n".join(lines)


def verify_text(result: VerifyResult) -> str:
    def mark(ok: bool) -> str:
        return "✓" if ok else "✗"

    head = (
        "✓ Verified: memory is unchanged since it was anchored on Monad."
        if result.verified
        else f"✗ Not verified: {result.problem}"
    )
    lines = [
        head,
        f"  {mark(result.hashValid)} stored hash matches content",
        f"  {mark(result.anchored)} belongs to an anchor batch",
        f"  {mark(result.proofValid)} Merkle proof valid ({result.steps}-step)",
        f"  {mark(result.onChain)} root recorded on Monad",
    ]
    if result.txHash:
        lines.append(f"  tx: {_tx(result.explorerUrl, result.txHash)}")
    return "\n".join(lines)


def store_event_text(result: StoreEventResult) -> str:
    where = f" in {result.context_id}" if result.context_id else ""
    links = "".join(f"; {link['type']} {link['to']}" for link in result.links)
    return f"Stored {result.event_kind} event {result.event_id}{where}{links}."


def retrieve_text(result: RetrieveResult) -> str:
    if not result.total:
        return "Retrieved 0 memories."
    shown = (
        f"Retrieved {len(result.memories)} of {plural(result.total, 'matching memory', 'matching memories')}"
    )
    lines = [shown + (":" if result.memories else ".")]
    for n, m in enumerate(result.memories, 1):
        kind = f"[{m.event_kind}] " if m.event_kind else ""
        lines.append(f"{n}. {kind}{clip(m.text, 120)}  (score {m.score:.2f})")
    return "\n".join(lines)


def list_contexts_text(result: ListContextsResult) -> str:
    if not result.total:
        return "0 contexts."
    page = f"{plural(result.total, 'context', 'contexts')} (page {result.page}, {result.limit} a page)"
    lines = [page + (":" if result.contexts else ".")]
    lines += [f"  {c.context_id}  ({plural(c.events, 'event', 'events')})" for c in result.contexts]
    return "\n".join(lines)


def insights_text(result: InsightsResult) -> str:
    lines = [f"Insights for: {clip(result.task, 100)}"]
    for insight in result.insights:
        lines.append(
            f"- {insight.context_id}: {len(insight.knowledge)} relevant, reinforced {insight.reinforced}x"
        )
        lines += [f"    • {clip(k.text, 100)}" for k in insight.knowledge[:3]]
        lines += [f"    ✗ contradicted by: {clip(c.text, 90)}" for c in insight.contradicted_by[:3]]
        if insight.most_recent:
            lines.append(f"    latest: {clip(insight.most_recent.text, 90)}")
    if result.ungrouped:
        lines.append(f"- without context: {len(result.ungrouped)} relevant")
    if not result.insights and not result.ungrouped:
        lines.append("No relevant knowledge yet.")
    return "\n".join(lines)
