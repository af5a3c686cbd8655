"""What recall reads of a query's words: the Lucene query of its keywords, the entities it names."""

from __future__ import annotations

import re
from collections.abc import Mapping

from graphsvc.services.index.keywords import graph_key, keywords, words

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


def named_in(query: str, names: Mapping[str, str]) -> set[str]:
    """The ids of `names` (id: name) whose name the query contains: every word of it is a word of the
    query (recall's named boost, services/recall/ranking.py)."""
    asked = set(words(query))
    return {i for i, name in names.items() if (said := set(words(name))) and said <= asked}


def lucene_query(graph: str, text: str, weights: Mapping[str, float]) -> str | None:
    """Keywords of `text` as a Lucene query scoped to `graph`, over the fields of `weights` (field:
    boost; RecallConfig.field_weights); None when the text holds no word."""
    terms = keywords(text)
    if not terms:
        return None
    any_of = " ".join(_escape(t) for t in terms)
    fields = " ".join(f"{f}:({any_of})" + ("" if w == 1 else f"^{w:g}") for f, w in weights.items())
    return f"+graphKey:{graph_key(graph)} +({fields})"


def _escape(term: str) -> str:
    return _LUCENE_SPECIAL.sub(r"\\\1", term)
