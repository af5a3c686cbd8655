"""The names graphsvc's own statements use, read from cypher/ once: no name a tenant chooses is one.

A tenant chooses an entity's label (it becomes a Neo4j label), a relation's type (a relationship type)
and a relation's property keys (`link` props). Each is refused (422, naming it; nothing written) when
a statement in cypher/ uses it: as a label or a type (`NAMES`), or as a key of a relationship
(`RELATION_KEYS`). The sets are read from the statements themselves at import, so a label a statement
starts to use later is reserved without anyone remembering to (docs/tools.md, *Reserved names*).

Open to tenants: the labels graphsvc gives entities of a tenant's own graph (`ENTITY_LABELS`: a
LocusGraph context is an entity labelled Context), which a tenant may name too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib.resources import files
from importlib.resources.abc import Traversable

CYPHER = files("graphsvc.cypher")  # the repository's cypher/, installed as package data
ENTITY_LABELS = frozenset({"Context"})
_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`")
_NAME = re.compile(
    r":([A-Z][A-Za-z0-9_]*)"
)  # `(m:Memory`, `SET m:Pending`, `[:MENTIONS` (a map's `key: v` has a space)
_RELATIONSHIP = re.compile(r"-\[\s*(\w*)\s*(?::[^\]{]*)?(\{[^}]*\})?\s*\]")  # -[r:TYPE {key: ..}]
_MAP_KEY = re.compile(r"(\w+)\s*:")


def statement_files(root: Traversable = CYPHER) -> list[tuple[str, Traversable]]:
    """`area/name` and file of every `<area>/<name>.cypher` under `root`, sorted (store/cypher.py loads
    them; this module reads their names)."""
    found = [
        (f"{area.name}/{path.name.removesuffix('.cypher')}", path)
        for area in root.iterdir()
        if area.is_dir()
        for path in area.iterdir()
        if path.name.endswith(".cypher")
    ]
    return sorted(found, key=lambda item: item[0])


def bare(text: str) -> str:
    """A statement without its comments, each string or quoted name as ''."""
    return _STRING.sub("''", _COMMENT.sub("", text))


def names(statements: Iterable[str]) -> frozenset[str]:
    """Every label and relationship type the statements name."""
    return frozenset(name for text in statements for name in _NAME.findall(bare(text)))


def relation_keys(statements: Iterable[str]) -> frozenset[str]:
    """Every property key the statements read or write on a relationship: the keys of a relationship
    pattern's map, and `r.key` of a variable a relationship pattern binds."""
    keys: set[str] = set()
    for text in map(bare, statements):
        for variable, props in _RELATIONSHIP.findall(text):
            keys |= set(_MAP_KEY.findall(props))
            if variable:
                keys |= set(re.findall(rf"(?<![\w.]){variable}\.(\w+)", text))
    return frozenset(keys)


_TEXTS = [path.read_text(encoding="utf-8") for _, path in statement_files()]
NAMES = names(_TEXTS) - ENTITY_LABELS
RELATION_KEYS = relation_keys(_TEXTS)
