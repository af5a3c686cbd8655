"""Text renderings of each tool's result, in the seed's format (the JSON is the model itself)."""

from __future__ import annotations

from graphsvc.domain.models import (
    AnchorResult,
    ExploreResult,
    ForgetResult,
    LinkResult,
    RecallResult,
    RememberResult,
    VerifyResult,
)

EDGES_SHOWN = 5


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def remember_text(result: RememberResult, text: str) -> str:
    return f'Remembered: "{clip(text, 50)}" (id: {result.id})'


def _edges_line(edges: list[str]) -> str:
    shown = ", ".join(edges[:EDGES_SHOWN])
    more = len(edges) - EDGES_SHOWN
    return f"edges: {shown}" + (f" … +{more} more" if more > 0 else "")


def recall_text(result: RecallResult) -> str:
    count = len(result.memories)
    lines = [f"Recalled {count} memor{'y' if count == 1 else 'ies'}:" if count else "Recalled 0 memories."]
    for n, memory in enumerate(result.memories, 1):
        lines.append(f"{n}. {clip(memory.text, 120)}  (score {memory.score:.2f}, hop {memory.distance})")
    nodes, edges = result.context
    entities = sum(not node.startswith("mem_") for node in nodes)
    lines += ["", "Context graph:", f"{len(nodes)} nodes ({entities} entities), {len(edges)} edges"]
    if edges:
        lines.append(_edges_line([f"{a} -[{t}]→ {b}" for a, t, b in edges]))
    if result.contextTruncated:
        lines.append("(context truncated at 300 nodes: raise hops or use explore for specific paths)")
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
    lines = [f"Anchored {result.count} memor{'y' if result.count == 1 else 'ies'}.", f"Root: {result.root}"]
    lines.append(f"Tx: {result.explorerUrl or result.txHash}")
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
        f"  {mark(result.proofValid)} Merkle proof valid ({result._steps}-step)",
        f"  {mark(result.onChain)} root recorded on Monad",
    ]
    if result.txHash:
        lines.append(f"  tx: {result.explorerUrl or result.txHash}")
    return "\n".join(lines)
