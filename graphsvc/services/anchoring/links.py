"""Chained roots: each batch names its graph's tag and the graph's previous root, so the chain itself
lists a graph's batches in order (GraphsvcAnchor.anchor refuses a prevRoot that is not the tag's last
root). The tag is 32 random bytes kept in the graph's GraphState: it does not reveal the graph's name.

A batch sealed before chained roots existed gets its link when it is signed (`link_of`).
"""

from __future__ import annotations

import secrets
from typing import TypedDict

from graphsvc.services.ports import Reader

ZERO_ROOT = "0x" + "00" * 32


class Link(TypedDict):
    graphTag: str
    prevRoot: str


def new_tag() -> str:
    return "0x" + secrets.token_hex(32)


async def link_of(tx: Reader, graph: str, contract: str | None) -> Link:
    """The graph's tag and the root its next batch on `contract` follows (in the caller's transaction,
    before the batch is written)."""
    [row] = await tx.run("anchor/link", graph=graph, tag=new_tag(), contract=contract or "")
    return {"graphTag": row["graphTag"], "prevRoot": row["prevRoot"]}
