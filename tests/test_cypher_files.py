"""The Cypher file contract: headers checked at load time, and every statement plans on real Neo4j."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphsvc.store.cypher import CypherFileError, load
from graphsvc.store.graph import GraphStore


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_every_project_statement_loads_with_a_mode() -> None:
    statements = load()
    assert {"memory/create", "memory/forget", "graph/neighbours", "schema/memory_fulltext"} <= set(statements)
    assert all(s.mode in ("read", "write", "schema") for s in statements.values())


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("// params: a\nRETURN $a", ":1: needs a '// mode"),
        ("// mode: sometimes\n// params: a\nRETURN $a", ":1: needs a '// mode"),
        ("// mode: read\nRETURN 1", ":1: needs a '// params"),
        ("// mode: read\n// params: a\nRETURN $a,\n $b", ":4: parameter $b is used but not declared"),
        ("// mode: read\n// params: a, b\nRETURN $a", ":2: parameter b is declared but not used"),
    ],
)
def test_a_file_breaking_the_header_contract_fails_with_its_line(
    tmp_path: Path, text: str, where: str
) -> None:
    root = _tree(tmp_path, {"area/bad.cypher": text})
    with pytest.raises(CypherFileError, match=re.escape(f"bad.cypher{where}")):
        load(root)


def test_a_statement_written_twice_fails_to_load(tmp_path: Path) -> None:
    same = "// mode: read\n// params: a\nRETURN $a"
    root = _tree(tmp_path, {"a/one.cypher": same, "b/two.cypher": same})
    with pytest.raises(CypherFileError, match="same statement as"):
        load(root)


def test_parameters_in_comments_and_strings_do_not_count(tmp_path: Path) -> None:
    root = _tree(
        tmp_path, {"a/x.cypher": "// mode: read\n// params: a\n// uses $ghost\nRETURN $a, '$notparam'"}
    )
    assert load(root)["a/x"].params == {"a"}


@pytest.mark.neo4j
async def test_every_statement_is_planned_by_neo4j(store: GraphStore) -> None:
    planned = [name for name, s in store.statements.items() if s.mode != "schema"]
    for name in planned:
        await store.explain(name)
    assert len(planned) >= 7


@pytest.mark.neo4j
async def test_schema_apply_is_idempotent(store: GraphStore) -> None:
    first = await store.apply_schema()
    assert await store.apply_schema() == first
    records, _, _ = await store._driver.execute_query(
        "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names"
    )
    assert {"memory_graph_id", "entity_graph_id"} <= set(records[0]["names"])
