"""Bulk remember from untrusted items (REST batches, import files): each item is checked on its own,
so a bad one is rejected with its reason while the others land."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from pydantic import ValidationError

from graphsvc.domain.models import RememberInput, RememberReceipt
from graphsvc.errors import validation_reasons
from graphsvc.services.memory import MemoryService


async def remember_items(
    memory: MemoryService, items: Sequence[object], graph: str | None = None, *, interactive: bool = False
) -> list[RememberReceipt]:
    """Receipts in the order of `items`. With `graph`, every item goes to it and an item that names
    another graph is rejected; without, each item names its own (default: "default"). `interactive`:
    an agent's batch (REST), whose texts are read at write when it is small (services/at_write.py);
    an import's are left to the background workers."""
    inputs: list[tuple[int, RememberInput]] = []
    receipts: dict[int, RememberReceipt] = {}
    for index, item in enumerate(items):
        problem = None
        if not isinstance(item, dict):
            problem = "an item must be a JSON object"
        elif graph is not None and cast(dict[str, Any], item).get("graph", graph) != graph:
            problem = f"graph: this batch writes to {graph!r} only"
        else:
            try:
                inputs.append(
                    (index, RememberInput.model_validate(item | ({"graph": graph} if graph else {})))
                )
            except ValidationError as error:
                problem = validation_reasons(error.errors())
        if problem:
            receipts[index] = RememberReceipt(index=index, status="rejected", error=problem)
    reqs = [req for _, req in inputs]
    written = await memory.remember_many(reqs, interactive=interactive) if inputs else []
    for (index, _), receipt in zip(inputs, written, strict=True):
        receipts[index] = receipt.model_copy(update={"index": index})
    return [receipts[i] for i in range(len(items))]
