"""Loads every Cypher statement from `cypher/<area>/<name>.cypher`, once, and checks its header.

    // mode: read | write | schema
    // params: graph, id, ...

A file fails to load, with `file:line`, when its mode is missing or unknown, when a parameter is used
but not declared or declared but not used, or when its statement duplicates another file's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Literal, LiteralString, cast

from graphsvc.domain.reserved import CYPHER, bare, statement_files

MODES = ("read", "write", "schema")
_HEADER = re.compile(r"^//\s*(mode|params):(.*)$")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class CypherFileError(ValueError):
    """A Cypher file breaks the header contract."""


@dataclass(frozen=True)
class Statement:
    name: str
    mode: Literal["read", "write", "schema"]
    params: frozenset[str]
    text: LiteralString


def _parse(path: Traversable, name: str) -> Statement:
    lines = path.read_text(encoding="utf-8").splitlines()
    header: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(lines, 1):
        match = _HEADER.match(line.strip())
        if match:
            header[match.group(1)] = (number, match.group(2).strip())
    if "mode" not in header or header["mode"][1] not in MODES:
        raise CypherFileError(f"{path}:1: needs a '// mode: read|write|schema' header")
    if "params" not in header:
        raise CypherFileError(f"{path}:1: needs a '// params: ...' header")
    line_no, declared_text = header["params"]
    declared = {p.strip() for p in declared_text.split(",") if p.strip()}
    body = "\n".join(lines)
    used = set(_PARAM.findall(bare(body)))
    for param in sorted(used - declared):
        at = next(n for n, line in enumerate(lines, 1) if f"${param}" in line)
        raise CypherFileError(f"{path}:{at}: parameter ${param} is used but not declared")
    for param in sorted(declared - used):
        raise CypherFileError(f"{path}:{line_no}: parameter {param} is declared but not used")
    text = "\n".join(line for line in lines if not line.strip().startswith("//")).strip()
    mode = header["mode"][1]
    # The text comes from the project's own files, never from a request.
    return Statement(name, mode, frozenset(declared), cast(LiteralString, text))


def load(root: Traversable = CYPHER) -> dict[str, Statement]:
    """All statements under `root`, keyed `area/name`."""
    statements: dict[str, Statement] = {}
    seen: dict[str, Traversable] = {}
    for name, path in statement_files(root):
        statement = _parse(path, name)
        if statement.text in seen:
            raise CypherFileError(f"{path}:1: same statement as {seen[statement.text]}")
        seen[statement.text] = path
        statements[name] = statement
    if not statements:
        raise CypherFileError(f"{root}: no .cypher files")
    return statements
