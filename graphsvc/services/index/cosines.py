"""The cosines recall reads back from the embeddings (embed/similarity's rows)."""

from __future__ import annotations

from collections.abc import Iterable

from graphsvc.services.ports import Row

Cosines = dict[str, tuple[float | None, float | None]]  # a memory's own cosine and its window's best


def cosines(rows: Iterable[Row]) -> Cosines:
    """Each memory's own cosine to the query and its best window neighbour's (None: not embedded);
    rows (embed/similarity) hold Neo4j's scale, (1 + cos) / 2."""
    return {
        row["id"]: (
            2 * row["own"] - 1 if row["own"] is not None else None,
            max((2 * s - 1 for s in row["near"]), default=None),
        )
        for row in rows
    }
