"""The Cypher file contract: headers checked at load time, and every statement plans on real Neo4j."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from graphsvc.app import Services
from graphsvc.config import Settings
from graphsvc.errors import NotConfigured
from graphsvc.store import graph
from graphsvc.store.cypher import CypherFileError, load
from graphsvc.store.graph import SCHEMA_VERSION, VERSION, GraphStore, too_old


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


async def _marker(store: GraphStore) -> list[dict[str, object]]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (s:GraphsvcSchema) RETURN s.id AS id, s.version AS version, s.writtenBy AS writtenBy"
    )
    return [r.data() for r in records]


def test_a_neo4j_older_than_the_filtered_vector_search_is_too_old() -> None:
    assert too_old("5.26.31") and too_old("2026.01.0") and too_old("")
    assert not too_old("2026.02.0") and not too_old("2026.09.0") and not too_old("2026.10-aura")


@pytest.mark.neo4j
async def test_the_server_runs_a_neo4j_recent_enough(store: GraphStore) -> None:
    records, _, _ = await store._driver.execute_query(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0] AS v"
    )
    assert not too_old(records[0]["v"])


@pytest.mark.neo4j
async def test_schema_apply_marks_the_database_with_its_schema_and_graphsvc_version(
    store: GraphStore,
) -> None:
    await store.apply_schema()
    assert await _marker(store) == [{"id": "schema", "version": SCHEMA_VERSION, "writtenBy": VERSION}]


@pytest.mark.neo4j
async def test_start_up_refuses_a_database_that_a_newer_schema_wrote_and_leaves_its_marker(
    store: GraphStore, settings: Settings
) -> None:
    newer = SCHEMA_VERSION + 1
    await store._driver.execute_query(
        "MERGE (s:GraphsvcSchema {id: 'schema'}) SET s.version = $v, s.writtenBy = '9.9.9'", v=newer
    )
    services = Services.build(settings)
    try:
        with pytest.raises(NotConfigured):
            await services.start()
        assert await _marker(store) == [{"id": "schema", "version": newer, "writtenBy": "9.9.9"}]
    finally:
        await services.close()
        await store._driver.execute_query("MATCH (s:GraphsvcSchema) DELETE s")
        await store.apply_schema()  # marked again, for the tests after this one


@pytest.mark.neo4j
async def test_the_mark_keeps_a_newer_schema_that_marked_the_database_meanwhile(store: GraphStore) -> None:
    newer = SCHEMA_VERSION + 1
    await store._driver.execute_query(
        "MATCH (s:GraphsvcSchema) SET s.version = $v, s.writtenBy = '9.9.9'", v=newer
    )
    try:
        [found] = await store.run("schema/mark", version=SCHEMA_VERSION, writtenBy=VERSION)
        assert found == {"version": newer, "writtenBy": "9.9.9"}
        assert await _marker(store) == [{"id": "schema", "version": newer, "writtenBy": "9.9.9"}]
    finally:
        await store._driver.execute_query("MATCH (s:GraphsvcSchema) DELETE s")
        await store.apply_schema()


async def _vector_index(store: GraphStore) -> dict[str, Any]:
    records, _, _ = await store._driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, id, properties, options WHERE name = 'memory_embedding' "
        "RETURN id, properties, options.indexConfig['vector.quantization.type'] AS quantization"
    )
    return records[0].data()


@pytest.mark.neo4j
@pytest.mark.parametrize(
    ("filtered", "quantization"),
    [(False, ""), (True, ", `vector.quantization.type`: 'BINARY'")],
    ids=["no graph filter (Neo4j 5)", "quantized (Neo4j 2026.08's default)"],
)
async def test_schema_apply_remakes_a_vector_index_an_older_graphsvc_made(
    store: GraphStore, filtered: bool, quantization: str
) -> None:
    """`IF NOT EXISTS` alone would keep an older graphsvc's index: it is found by what it is (whatever the
    marker says) and dropped first; made again, it is kept at the next start."""
    run = store._driver.execute_query
    await run("DROP INDEX memory_embedding IF EXISTS")
    await run(
        "CYPHER 25 CREATE VECTOR INDEX memory_embedding FOR (m:Memory) ON m.embedding"
        + (" WITH [m.graphKey]" if filtered else "")
        + " OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'"
        + quantization
        + "}}"
    )
    old = await _vector_index(store)
    await store.apply_schema()
    made = await _vector_index(store)
    assert made["id"] != old["id"]
    assert (made["properties"], made["quantization"]) == (["embedding", "graphKey"], "NONE")
    await store.apply_schema()
    assert await _vector_index(store) == made
    assert await _marker(store) == [{"id": "schema", "version": SCHEMA_VERSION, "writtenBy": VERSION}]


@pytest.mark.neo4j
async def test_schema_apply_waits_for_an_index_still_building_and_says_how_far_it_has_come(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A vector index made again over many memories takes minutes, and a search of it fails until it is
    online: start-up waits for it, logging its progress, however long it takes."""
    run = store._driver.execute_query
    await run("UNWIND range(1, 20000) AS i CREATE (:Probe {embedding: [x IN range(1, 384) | rand()]})")
    monkeypatch.setattr(graph, "INDEX_PROGRESS_S", 0.0)
    try:
        await run(
            "CREATE VECTOR INDEX probe_embedding FOR (p:Probe) ON p.embedding"
            " OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
        )
        with caplog.at_level(logging.WARNING, logger="graphsvc"):
            await store.apply_schema()
        records, _, _ = await run(
            "SHOW INDEXES YIELD name, state WHERE name = 'probe_embedding' RETURN state"
        )
        assert records[0]["state"] == "ONLINE"
        progress = [r.getMessage() for r in caplog.records if "probe_embedding (" in r.getMessage()]
        assert progress and all(re.search(r"probe_embedding \(\d+%\)", line) for line in progress)
    finally:
        await run("DROP INDEX probe_embedding IF EXISTS")
        await run("MATCH (p:Probe) DELETE p")
