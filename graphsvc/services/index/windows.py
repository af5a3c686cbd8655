"""A memory's window: its text with the texts of WINDOW memories on each side in its graph's remember
order, stored at remember (and at import) and searched by recall's keywords and meaning."""

from __future__ import annotations

from collections.abc import Sequence

WINDOW = 2  # memories on each side (in the graph's remember order) whose text joins a memory's window


def windows(sequence: Sequence[tuple[str, str]], targets: Sequence[str]) -> list[dict[str, str]]:
    """Each target's window: its text joined with up to WINDOW texts on each side in `sequence`
    ((id, text) pairs in remember order)."""
    at = {memory_id: i for i, (memory_id, _) in enumerate(sequence)}
    return [
        {
            "id": t,
            "window": "\n".join(text for _, text in sequence[max(0, at[t] - WINDOW) : at[t] + WINDOW + 1]),
        }
        for t in targets
    ]
