"""GraphsvcStore (LangGraph's BaseStore) against graphsvc served over HTTP on the real Neo4j.

LangGraph's own store cases, rewritten here for a store that needs a server (its suites build their
stores in fixtures of their own): from libs/checkpoint-postgres/tests/test_async_store.py
test_abatch_order, test_batch_get_ops, test_batch_put_ops, test_batch_search_ops,
test_batch_list_namespaces_ops; from libs/checkpoint/tests/test_store.py test_list_namespaces_basic,
test_list_namespaces_pagination, test_list_namespaces_max_depth, test_cannot_put_empty_namespace.
Not reused: the vector cases (they rank every item of a namespace by a toy embedding's distance;
recall returns what the query finds, by keywords, meaning and time), the TTL cases (no TTL), and the
AsyncBatchedBaseStore and InMemoryStore internals (mocks of LangGraph's own classes). In their place:
an item put is found by meaning by the very next search, as LangGraph's own stores embed on put
(issue 44), on a server with the embeddings on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, PutOp, SearchOp

from graphsvc.client import Client, errors
from graphsvc.config import AuthSettings, EmbeddingsSettings, Settings
from graphsvc.domain.listing import ListMemoriesInput
from graphsvc.domain.models import RememberInput
from graphsvc.integrations.langgraph import GraphsvcStore
from tests.conftest import _serve


@pytest.fixture
async def store(server_url: str, graph: str) -> AsyncIterator[GraphsvcStore]:
    made = GraphsvcStore(url=server_url, graph=graph)
    yield made
    made.close()
    await made.aclose()


@pytest.fixture(scope="module")
def meaning_url(settings: Settings) -> Iterator[str]:
    """graphsvc with the embeddings on (the default model), its worker idle once started: what a search
    finds by meaning right after a put, the put itself embedded."""
    embeddings = EmbeddingsSettings(enabled=True, interval_s=3600)
    yield from _serve(
        settings.model_copy(update={"auth": AuthSettings(required=False), "embeddings": embeddings})
    )


@pytest.fixture
def client(server_url: str, graph: str) -> Iterator[Client]:
    with Client(server_url, graph=graph) as made:
        yield made


async def test_abatch_keeps_the_order_of_mixed_operations(store: GraphsvcStore) -> None:
    await store.aput(("test", "foo"), "key1", {"data": "value1"})
    await store.aput(("test", "bar"), "key2", {"data": "value2"})
    results = await store.abatch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(limit=10),
            GetOp(("test",), "key3"),
        ]
    )
    assert (
        isinstance(results[0], Item) and results[0].value == {"data": "value1"} and results[0].key == "key1"
    )
    assert results[1] is None
    assert [i.key for i in results[2]] == ["key1"]  # type: ignore[union-attr]
    assert {("test", "foo"), ("test", "bar")} <= set(results[3])  # type: ignore[arg-type]
    assert results[4] is None
    again = await store.abatch(
        [
            SearchOp(("test",), limit=5),
            GetOp(("test", "bar"), "key2"),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert len(again[0]) == 2 and again[1].value == {"data": "value2"}  # type: ignore[union-attr,arg-type]
    assert again[2] is None and again[3].key == "key1"  # type: ignore[union-attr]


def test_batch_puts_gets_searches_and_lists_namespaces(store: GraphsvcStore) -> None:
    assert store.batch(
        [
            PutOp(("test",), "key1", {"data": "value1"}),
            PutOp(("test",), "key2", {"data": "value2"}),
            PutOp(("test",), "key3", None),
        ]
    ) == [None, None, None]
    got = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])
    assert [g.key if g else None for g in got] == ["key1", "key2", None]  # type: ignore[union-attr]
    assert len(store.search(("test",), limit=10)) == 2
    assert [i.key for i in store.search(("test",), filter={"data": "value1"})] == ["key1"]
    assert store.list_namespaces() == [("test",)]


def test_a_put_on_a_key_supersedes_its_memory_and_the_history_stays(
    store: GraphsvcStore, client: Client
) -> None:
    store.put(("users", "alice"), "prefs", {"drink": "coffee"})
    store.put(("users", "alice"), "prefs", {"drink": "tea", "since": 2026})
    item = store.get(("users", "alice"), "prefs")
    assert item is not None and item.value == {"drink": "tea", "since": 2026}
    assert item.created_at < item.updated_at
    history = client.list_memories(ListMemoriesInput(tags=["store/users/alice", "key:prefs"], current=False))
    newer, older = history.memories
    assert newer.supersedes == [older.id] and history.total == 2
    assert [i.value for i in store.search(("users",))] == [{"drink": "tea", "since": 2026}]


def test_two_puts_racing_on_one_key_show_one_item_the_newest_until_the_next_put_supersedes_both(
    store: GraphsvcStore, client: Client
) -> None:
    store.put(("race",), "k", {"drink": "mango lassi", "n": 1})
    first = client.list_memories(ListMemoriesInput(tags=["store/race", "key:k"])).memories[0]
    # what two racing puts do: each read version 1 as current and superseded it
    racers = [
        client.remember(
            RememberInput(
                text=json.dumps({"drink": "mango lassi", "n": n}),
                tags=["store/race", "key:k"],
                supersedes=[first.id],
            )
        )
        for n in (2, 3)
    ]
    current = client.list_memories(ListMemoriesInput(tags=["store/race", "key:k"]))
    assert {m.id for m in current.memories} == {r.id for r in racers}
    assert [i.value["n"] for i in store.search(("race",))] == [3]
    assert [i.value["n"] for i in store.search(("race",), query="mango lassi")] == [3]
    got = store.get(("race",), "k")
    assert got is not None and got.value["n"] == 3
    store.put(("race",), "k", {"drink": "mango lassi", "n": 4})
    newest = client.list_memories(ListMemoriesInput(tags=["store/race", "key:k"])).memories
    assert len(newest) == 1 and set(newest[0].supersedes) == {r.id for r in racers}


def test_delete_forgets_every_version_of_the_key(store: GraphsvcStore, client: Client) -> None:
    store.put(("notes",), "n1", {"text": "first"})
    store.put(("notes",), "n1", {"text": "second"})
    store.delete(("notes",), "n1")
    assert store.get(("notes",), "n1") is None
    assert client.list_memories(ListMemoriesInput(tags=["key:n1"], current=False)).total == 0


def test_search_with_a_query_recalls_within_the_namespace_and_filters_the_values(
    store: GraphsvcStore,
) -> None:
    store.put(("docs", "a"), "d1", {"text": "red apple pie recipe", "color": "red", "score": 4.5})
    store.put(("docs", "a"), "d2", {"text": "green apple tart", "color": "green", "score": 4.0})
    store.put(("docs", "b"), "d3", {"text": "red car repair", "color": "red", "score": 3.0})
    store.put(("elsewhere",), "d4", {"text": "apple orchard", "color": "red", "score": 5.0})
    found = store.search(("docs",), query="apple pie", filter={"color": "red"})
    # recall ranks the memory saying it first; a neighbour found through its window may follow
    assert found[0].key == "d1" and found[0].score is not None and found[0].namespace == ("docs", "a")
    assert all(i.value["color"] == "red" and i.namespace[0] == "docs" for i in found)
    ranked = store.search(("docs",), query="apple")
    assert {"d1", "d2"} <= {i.key for i in ranked} and "d4" not in {i.key for i in ranked}
    assert {i.key for i in store.search(("docs",), filter={"score": {"$gte": 4.0}})} == {"d1", "d2"}
    assert [i.key for i in store.search(("docs",), filter={"score": {"$lt": 4.0}})] == ["d3"]


def test_the_memorys_text_is_the_indexed_fields_and_the_value_comes_back_whole(
    server_url: str, graph: str, client: Client
) -> None:
    store = GraphsvcStore(
        url=server_url, graph=graph, index={"dims": 0, "embed": "none", "fields": ["title"]}
    )
    try:
        store.put(("kb",), "k1", {"title": "Quarterly budget review", "body": {"owner": "Bob", "n": [1, 2]}})
        store.put(("kb",), "k2", {"title": "Unindexed", "secret": "zebra"}, index=False)
        [memory] = client.list_memories(ListMemoriesInput(tags=["key:k1"])).memories
        assert memory.text == "Quarterly budget review"
        assert store.get(("kb",), "k1").value == {  # type: ignore[union-attr]
            "title": "Quarterly budget review",
            "body": {"owner": "Bob", "n": [1, 2]},
        }
        assert store.search(("kb",), query="budget")[0].key == "k1"
        assert "k2" not in {i.key for i in store.search(("kb",), query="zebra")}  # its text is its key
        assert store.get(("kb",), "k2").value["secret"] == "zebra"  # type: ignore[union-attr]
    finally:
        store.close()


def test_list_namespaces_matches_prefixes_suffixes_wildcards_depth_and_pages(store: GraphsvcStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
    ]
    store.batch([PutOp(ns, f"id_{i}", {"data": i}) for i, ns in enumerate(namespaces)])
    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2, offset=2) == [
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "c"), ("b", "a"), ("users", "123")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []


async def test_namespaces_that_tags_refuse_and_values_that_are_not_json_write_nothing(
    store: GraphsvcStore, client: Client
) -> None:
    refused_namespaces = [
        (),
        ("the", "thing.about"),
        ("some", "fun", ""),
        ("a/b",),
        ("bell\x07",),
        ("x" * 70,),
    ]
    for namespace in refused_namespaces:
        with pytest.raises(InvalidNamespaceError):
            await store.abatch([PutOp(namespace, "k", {"v": 1})])
    with pytest.raises(errors.InvalidInput):
        store.put(("ok",), "k", {"when": object()})
    with pytest.raises(errors.InvalidInput):
        store.put(("ok",), "k", {"nan": float("nan")})
    with pytest.raises(errors.InvalidInput):
        store.put(("ok",), "k" * 61, {"v": 1})
    with pytest.raises(errors.InvalidInput):
        await store.aput(("ok",), "k", {"big": 2**64}, index=["big"])
    assert client.list_memories().total == 0
    assert await asyncio.to_thread(store.list_namespaces) == []


def test_the_store_reads_its_server_from_the_environment(
    server_url: str, graph: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHSVC_URL", server_url)
    monkeypatch.delenv("GRAPHSVC_TOKEN", raising=False)
    from_env = GraphsvcStore(graph=graph)
    try:
        from_env.put(("env",), "k", {"v": 1})
        assert from_env.get(("env",), "k").value == {"v": 1}  # type: ignore[union-attr]
    finally:
        from_env.close()
    monkeypatch.delenv("GRAPHSVC_URL")
    with pytest.raises(errors.NotConfigured):
        GraphsvcStore()


def test_the_example_agent_remembers_and_answers_without_a_model(server_url: str, graph: str) -> None:
    from examples.langgraph_agent import build

    agent = GraphsvcStore(url=server_url, graph=graph, index={"dims": 0, "embed": "x", "fields": ["fact"]})
    try:
        run = build(agent)
        for said in ["I drink green tea every morning", "I live in Lisbon"]:
            assert run.invoke({"user": "alice", "said": said, "answer": ""})["answer"] == "Noted."
        asked = run.invoke({"user": "alice", "said": "What do I drink in the morning?", "answer": ""})
        assert asked["answer"] == "You told me: I drink green tea every morning"
    finally:
        agent.close()


async def test_an_item_put_is_found_by_meaning_by_the_next_search(meaning_url: str, graph: str) -> None:
    # The item shares no word with the question; two others share "new" with it (keywords alone find
    # only them), the rest nothing.
    store = GraphsvcStore(url=meaning_url, graph=graph)
    others = [
        "The car needs new tyres before winter.",
        "The new intern starts on Monday.",
        "Ravi repainted the kitchen cabinets green.",
        "We planted tomatoes and basil in the garden.",
        "The wifi password changed after the router reset.",
    ]
    try:
        for n, text in enumerate(others):
            await store.aput(("notes",), f"n{n}", {"text": text})
        await store.aput(
            ("notes",), "dana", {"text": "Dana adopted a small terrier from the animal shelter."}
        )
        found = await store.asearch(("notes",), query="Does anyone have a new pet?", limit=3)
        assert [i.key for i in found][:1] == ["dana"]
    finally:
        store.close()
        await store.aclose()
