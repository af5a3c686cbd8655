"""Windows (memories remembered next to each other), bulk remember, and what a query searches for."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from graphsvc.config import Settings
from graphsvc.domain.models import IdInput, RecallInput, RememberInput
from graphsvc.services.index.keywords import keywords
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore
from tests.conftest import count_nodes


async def _windows(store: GraphStore, graph: str) -> dict[str, tuple[int, list[str]]]:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) RETURN m.text AS text, m.seq AS seq, m.window AS window",
        graph=graph,
        database_=store._database,
    )
    return {r["text"]: (r["seq"], r["window"].split("\n")) for r in records}


def test_question_words_are_not_keywords_but_time_words_are() -> None:
    assert keywords("What did Caroline do after the race, and when?") == ["caroline", "after", "race", "when"]
    assert keywords("Who is she?") == ["who", "is", "she"]  # nothing else: keep them
    assert keywords("?!") == []


@pytest.mark.neo4j
async def test_a_window_holds_two_neighbours_each_side_and_forget_closes_the_gap(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    for text in ["one", "two", "three", "four", "five", "six"]:
        await memory.remember(RememberInput(text=text, graph=graph))
    windows = await _windows(store, graph)
    assert windows["one"] == (1, ["one", "two", "three"])
    assert windows["three"] == (3, ["one", "two", "three", "four", "five"])
    assert windows["six"] == (6, ["four", "five", "six"])

    three = (await memory.recall(RecallInput(query="three", hops=0, limit=10, graph=graph))).memories
    assert three[0].text == "three"
    assert {m.text for m in three} == {"one", "two", "three", "four", "five"}

    await memory.forget(IdInput(id=three[0].id, graph=graph))
    windows = await _windows(store, graph)
    assert windows["two"][1] == ["one", "two", "four", "five"]
    assert windows["four"][1] == ["one", "two", "four", "five", "six"]
    assert windows["five"][1] == ["two", "four", "five", "six"]
    assert all("three" not in w for _, w in windows.values())
    assert (await memory.recall(RecallInput(query="three", graph=graph))).memories == []


@pytest.mark.neo4j
async def test_concurrent_writers_to_one_graph_never_share_a_position(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    await asyncio.gather(*(memory.remember(RememberInput(text=f"note {n}", graph=graph)) for n in range(12)))
    seqs = sorted(seq for seq, _ in (await _windows(store, graph)).values())
    assert seqs == list(range(1, 13))


@pytest.mark.neo4j
async def test_a_memory_mentioning_a_person_the_query_names_ranks_first(
    memory: MemoryService, graph: str
) -> None:
    for speaker in ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"]:
        await memory.remember(
            RememberInput(
                text=f"{speaker}: I adopted a puppy",
                entities=[{"label": "Person", "name": speaker}],
                graph=graph,
            )
        )
    recalled = await memory.recall(RecallInput(query="What pet did Dee adopt?", graph=graph))
    assert recalled.memories[0].text == "Dee: I adopted a puppy"


@pytest.mark.neo4j
async def test_bulk_remember_is_idempotent_and_rejects_only_the_bad_item(
    memory: MemoryService, store: GraphStore, graph: str
) -> None:
    other = graph + "-b"
    items = [
        RememberInput(text="alpha", entities=[{"label": "Person", "name": "Ann"}], graph=graph),
        RememberInput(text="beta", relations=[{"from": "Ann", "type": "KNOWS", "to": "Nobody"}], graph=graph),
        RememberInput(text="alpha", entities=[{"label": "Person", "name": "Ann"}], graph=graph),
        RememberInput(text="alpha", entities=[{"label": "Person", "name": "Ann"}], graph=other),
        RememberInput(
            text="gamma",
            entities=[{"label": "Person", "name": "Bob"}],
            relations=[{"from": "Bob", "type": "KNOWS", "to": "Ann"}],
            graph=graph,
        ),
    ]
    first = await memory.remember_many(items)
    assert [r.status for r in first] == ["created", "rejected", "duplicate", "created", "created"]
    assert [r.index for r in first] == [0, 1, 2, 3, 4]
    assert first[2].id == first[0].id and first[2].hash == first[0].hash
    assert "Nobody" in (first[1].error or "")
    assert first[3].id != first[0].id  # same content, another graph

    again = await memory.remember_many(items)
    assert [r.status for r in again] == ["duplicate", "rejected", "duplicate", "duplicate", "duplicate"]
    assert [r.id for r in again] == [first[0].id, None, first[0].id, first[3].id, first[4].id]
    # alpha, gamma, Ann and Bob: the rejected item wrote nothing, the repeats nothing more
    assert await count_nodes(store, graph) == 4
    windows = await _windows(store, graph)
    assert windows["alpha"] == (1, ["alpha", "gamma"])
    related = await memory.recall(RecallInput(entity="Person:Bob", hops=1, graph=graph))
    assert "Person:Bob KNOWS Person:Ann" in related.relations


@pytest.mark.neo4j
async def test_import_reports_bad_lines_by_number_lands_the_rest_and_is_idempotent(
    settings: Settings, store: GraphStore, graph: str, tmp_path: Path
) -> None:
    lines = [
        json.dumps({"text": "Ann adopted a puppy", "entities": [{"label": "Person", "name": "Ann"}]}),
        "{not json",
        json.dumps({"text": "Ann adopted a puppy", "entities": [{"label": "Person", "name": "Ann"}]}),
        "",
        json.dumps(["a list"]),
        json.dumps({"text": ""}),
        json.dumps({"text": "elsewhere", "graph": graph + "-x"}),
    ]
    source = tmp_path / "memories.jsonl"
    source.write_bytes(
        "\n".join(lines).encode() + b"\n\xff\xfe\n" + json.dumps({"text": "last one"}).encode()
    )
    neo = settings.neo4j
    env = {
        "PATH": os.environ["PATH"],
        "GRAPHSVC_NEO4J_URI": neo.uri,
        "GRAPHSVC_NEO4J_USER": neo.user,
        "GRAPHSVC_NEO4J_PASSWORD": neo.password.get_secret_value(),
    }

    async def run() -> tuple[int, list[dict], str]:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "graphsvc.cli", "import", str(source), "--graph", graph],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr

    code, receipts, log = await run()
    assert code == 1
    assert [(r["line"], r["status"]) for r in receipts] == [
        (1, "created"),
        (2, "rejected"),
        (3, "duplicate"),
        (5, "rejected"),
        (6, "rejected"),
        (7, "rejected"),
        (8, "rejected"),
        (9, "created"),
    ]
    assert receipts[2]["id"] == receipts[0]["id"]
    assert "not JSON" in receipts[1]["error"] and "text" in receipts[4]["error"]
    assert "line 8: not UTF-8" in log and "line 7: graph" in log
    assert "2 created, 1 duplicates, 5 rejected" in log
    assert await count_nodes(store, graph) == 3  # two memories and Ann

    code, receipts, log = await run()
    assert [r["status"] for r in receipts if r["status"] != "rejected"] == ["duplicate"] * 3
    assert await count_nodes(store, graph) == 3


@pytest.mark.neo4j
def test_rest_batch_gives_a_receipt_per_item_and_bounds_the_batch(server_url: str, graph: str) -> None:
    items = [{"text": "first"}, {"text": "first"}, {"text": "x" * 4001}, 7, {"text": "second", "tags": ["t"]}]
    reply = httpx.post(f"{server_url}/v1/memories/batch", json={"items": items, "graph": graph}, timeout=30)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert [r["status"] for r in body["receipts"]] == [
        "created",
        "duplicate",
        "rejected",
        "rejected",
        "created",
    ]
    assert (body["created"], body["duplicates"], body["rejected"]) == (2, 1, 2)
    assert "at most 4000" in body["receipts"][2]["error"]
    recalled = httpx.post(
        f"{server_url}/v1/recall", json={"query": "second", "graph": graph}, timeout=30
    ).json()
    assert recalled["memories"][0]["id"] == body["receipts"][4]["id"]
    too_many = httpx.post(
        f"{server_url}/v1/memories/batch", json={"items": [{"text": "a"}] * 1001, "graph": graph}, timeout=30
    )
    assert too_many.status_code == 422 and too_many.json()["error"]["fields"] == ["items"]


@pytest.mark.neo4j
async def test_a_graph_whose_name_another_extends_is_not_crowded_out(
    memory: MemoryService, graph: str
) -> None:
    # Lucene stops at the top hits, so its tenant filter must be exact: "g" and "g-archive" share a word.
    await memory.remember_many(
        [RememberInput(text=f"rocket launch {n}", graph=graph + "-archive") for n in range(80)]
    )
    mine = await memory.remember(RememberInput(text="rocket launch", graph=graph))
    recalled = await memory.recall(RecallInput(query="rocket launch", graph=graph))
    assert [m.id for m in recalled.memories] == [mine.id]
