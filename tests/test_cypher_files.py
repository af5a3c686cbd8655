"""The Cypher file contract: headers checked at load time, and every statement plans on real Neo4j."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphsvc.store.cypher import CypherFileError, load
from graphsvc.store.graph import GraphStore, _declared, too_old


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_every_project_statement_loads_with_a_mode() -> None:
    statements = load()
    assert {"memory/commit", "memory/forget", "graph/neighbours", "schema/memory_fulltext"} <= set(statements)
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


def test_every_schema_file_that_creates_declares_what_it_creates() -> None:
    """apply_schema compares each declaration with what the database has (see the next test): a file
    it cannot read would silently escape that check."""
    creating = [s for s in load().values() if s.mode == "schema" and "CREATE" in s.text]
    assert len(creating) >= 10
    assert all(_declared(s.text) for s in creating)
    assert _declared(load()["schema/memory_fulltext"].text) == (
        "memory_search",
        "Memory",
        ("text", "window", "tags", "graphKey"),
        (("analyzer", "english"), ("eventually_consistent", True)),
    )
    assert _declared(load()["schema/memory_embedding"].text) == (
        "memory_embedding",
        "Memory",
        ("embedding", "graphKey"),  # the vector, then the filter property (WITH), as SHOW INDEXES lists them
        (),
    )


def test_a_neo4j_older_than_the_filtered_vector_search_is_too_old() -> None:
    assert too_old("5.26.31") and too_old("2026.01.0") and too_old("")
    assert not too_old("2026.02.0") and not too_old("2026.09.0") and not too_old("2026.10-aura")


@pytest.mark.neo4j
async def test_the_server_runs_a_neo4j_recent_enough(store: GraphStore) -> None:
    records, _, _ = await store._driver.execute_query(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0] AS v"
    )
    assert not too_old(records[0]["v"])


async def _definitions(store: GraphStore) -> dict[str, list[str]]:
    records, _, _ = await store._driver.execute_query("SHOW INDEXES YIELD name, properties")
    return {r["name"]: r["properties"] for r in records}


@pytest.mark.neo4j
async def test_schema_apply_recreates_what_an_older_definition_left_under_the_same_name(
    store: GraphStore,
) -> None:
    """`IF NOT EXISTS` alone keeps any index or constraint of that name: a constraint once declared on
    GraphState.graph stayed there after the file moved it to .name, and concurrent writers raced."""
    run = store._driver.execute_query
    await run("DROP CONSTRAINT tombstone_graph_id IF EXISTS")
    await run("CREATE CONSTRAINT tombstone_graph_id FOR (t:Tombstone) REQUIRE t.unused IS UNIQUE")
    await run("DROP INDEX memory_graph_seq IF EXISTS")
    await run("CREATE INDEX memory_graph_seq FOR (m:Memory) ON (m.seq)")
    await run("DROP INDEX memory_search IF EXISTS")  # as versions before it was eventually consistent
    await run(
        "CREATE FULLTEXT INDEX memory_search FOR (m:Memory) ON EACH [m.text, m.window, m.tags, m.graphKey]"
        " OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
    )
    await run("DROP INDEX memory_embedding IF EXISTS")  # as Neo4j 5 made it: no filter property
    await run(
        "CREATE VECTOR INDEX memory_embedding FOR (m:Memory) ON m.embedding"
        " OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
    )
    assert (await _definitions(store))["memory_graph_seq"] == ["seq"]
    await store.apply_schema()
    found = await _definitions(store)
    assert found["tombstone_graph_id"] == ["graph", "id"]
    assert found["memory_graph_seq"] == ["graph", "seq"]
    assert found["memory_embedding"] == ["embedding", "graphKey"]
    records, _, _ = await run("SHOW INDEXES YIELD name, options WHERE name = 'memory_search'")
    assert records[0]["options"]["indexConfig"]["fulltext.eventually_consistent"] is True
    records, _, _ = await run("SHOW CONSTRAINTS YIELD name, properties WHERE name = 'tombstone_graph_id'")
    assert records[0]["properties"] == ["graph", "id"]
