"""Unit tests of the shared contract: envelope shapes pinned to the seed, text renderings, bounds."""

from __future__ import annotations

import json
import unicodedata

import pytest
from pydantic import ValidationError

from graphsvc.domain import render
from graphsvc.domain.hashing import format_timestamp, memory_envelope, memory_hash
from graphsvc.domain.locus import (
    ContextInfo,
    ListContextsResult,
    RetrievedMemory,
    RetrieveResult,
    StoreEventInput,
)
from graphsvc.domain.models import (
    Edge,
    EntityOut,
    ExploreEdge,
    ExploreInput,
    ExploreNode,
    ExploreResult,
    ForgetResult,
    LinkInput,
    LinkResult,
    RecalledMemory,
    RecallInput,
    RecallResult,
    RememberInput,
    RememberResult,
)
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.services.index.keywords import graph_key
from graphsvc.services.recall.query import lucene_query
from graphsvc.services.recall.ranking import hop_of

POOL = EntityOut(id="Pool:MON/USDC-A", label="Pool", name="MON/USDC-A")
USDC = EntityOut(id="Token:USDC", label="Token", name="USDC")
POOL_IN, USDC_IN = {"label": "Pool", "name": "MON/USDC-A"}, {"label": "Token", "name": "USDC"}


def test_remember_result_has_the_seed_shape() -> None:
    result = RememberResult(
        id="mem_abc123",
        hash="0xdeadbeef",
        entities=[POOL],
        edges=[Edge(from_="mem_abc123", type="MENTIONS", to=POOL.id)],
    )
    assert result.model_dump() == {
        "id": "mem_abc123",
        "hash": "0xdeadbeef",
        "entities": [{"id": "Pool:MON/USDC-A", "label": "Pool", "name": "MON/USDC-A"}],
        "edges": [{"from": "mem_abc123", "type": "MENTIONS", "to": "Pool:MON/USDC-A"}],
    }
    assert render.remember_text(result, "Swap of 10 MON to USDC failed on pool MON/USDC-A and more") == (
        'Remembered: "Swap of 10 MON to USDC failed on pool MON/USDC-A…" (id: mem_abc123)'
    )


def test_recall_result_has_the_seed_shape_and_text() -> None:
    memories = [
        RecalledMemory(
            id="mem_1",
            text="Swap of 10 MON failed: slippage 3.2%",
            score=2.5,
            distance=0,
            anchorId="0x01",
            tags=["failure"],
        ),
        RecalledMemory(
            id="mem_2",
            text="USDC liquidity was low on MON/USDC-A pool",
            score=1.5,
            distance=1,
            anchorId=None,
            tags=[],
        ),
    ]
    edges = [(f"mem_{i}", "MENTIONS", POOL.id) for i in (1, 2)] + [
        (POOL.id, "TRADES_ON", f"Token:T{i}") for i in range(5)
    ]
    nodes = ["mem_1", "mem_2", POOL.id] + [f"Token:T{i}" for i in range(5)]
    result = RecallResult.build(memories, nodes, edges, truncated=False)
    dumped = result.model_dump()
    assert set(dumped) == {"memories", "relations", "contextTruncated"}
    assert dumped["memories"][0] == {
        "id": "mem_1",
        "text": "Swap of 10 MON failed: slippage 3.2%",
        "score": 2.5,
        "distance": 0,
        "anchorId": "0x01",
        "tags": ["failure"],
    }
    assert dumped["relations"][0] == "mem_1 MENTIONS Pool:MON/USDC-A"
    assert render.recall_text(result).splitlines() == [
        "Recalled 2 memories:",
        "1. Swap of 10 MON failed: slippage 3.2%  (score 2.50, hop 0)",
        "2. USDC liquidity was low on MON/USDC-A pool  (score 1.50, hop 1)",
        "",
        "Context graph:",
        "8 nodes (6 entities), 7 edges",
        "edges: mem_1 -[MENTIONS]→ Pool:MON/USDC-A, mem_2 -[MENTIONS]→ Pool:MON/USDC-A, "
        "Pool:MON/USDC-A -[TRADES_ON]→ Token:T0, Pool:MON/USDC-A -[TRADES_ON]→ Token:T1, "
        "Pool:MON/USDC-A -[TRADES_ON]→ Token:T2 … +2 more",
    ]


def test_link_explore_and_forget_results_have_their_shapes() -> None:
    link = LinkResult(id="edge_xyz789", from_=POOL, type="TRADES_ON", to=USDC, props={}, created=True)
    assert render.link_text(link) == "Linked: MON/USDC-A -[TRADES_ON]→ USDC (edge edge_xyz789)"
    assert set(link.model_dump()) == {"id", "from", "type", "to", "props", "created"}
    explored = ExploreResult(
        nodes=[ExploreNode(id="mem_abc123", label="Memory", text="...", depth=0)],
        edges=[ExploreEdge(id="edge_xyz", from_="mem_abc123", type="MENTIONS", to=POOL.id)],
        truncated=False,
    )
    assert explored.model_dump() == {
        "nodes": [{"id": "mem_abc123", "label": "Memory", "text": "...", "depth": 0}],
        "edges": [{"from": "mem_abc123", "type": "MENTIONS", "to": "Pool:MON/USDC-A", "id": "edge_xyz"}],
        "truncated": False,
    }
    assert render.forget_text(ForgetResult(id="mem_abc123", deleted=True)) == "Deleted memory mem_abc123."


def test_locus_texts_count_in_the_singular_and_say_when_there_is_nothing() -> None:
    one = RetrievedMemory(
        text="chose annual plans", score=1.5, event_kind="decision", source=None, timestamp=None
    )
    assert render.retrieve_text(RetrieveResult(memories=[], total=0)) == "Retrieved 0 memories."
    assert render.retrieve_text(RetrieveResult(memories=[one], total=1)).splitlines() == [
        "Retrieved 1 of 1 matching memory:",
        "1. [decision] chose annual plans  (score 1.50)",
    ]
    assert render.retrieve_text(RetrieveResult(memories=[], total=3)) == "Retrieved 0 of 3 matching memories."
    context = ContextInfo(context_id="skill:pricing", context_type="skill", context_name="pricing", events=1)
    assert (
        render.list_contexts_text(ListContextsResult(contexts=[], total=0, page=0, limit=100))
        == "0 contexts."
    )
    assert render.list_contexts_text(
        ListContextsResult(contexts=[context], total=1, page=0, limit=100)
    ).splitlines() == [
        "1 context (page 0, 100 a page):",
        "  skill:pricing  (1 event)",
    ]
    assert (
        render.list_contexts_text(ListContextsResult(contexts=[], total=2, page=5, limit=100))
        == "2 contexts (page 5, 100 a page)."
    )


def test_inputs_take_the_seed_defaults() -> None:
    assert (RecallInput(query="x").hops, RecallInput(query="x").limit) == (1, 10)
    explore = ExploreInput(start="Pool:A")
    assert (explore.maxDepth, explore.direction, explore.types, explore.limit) == (2, "both", None, 100)
    assert explore.start_ids == ["Pool:A"]
    assert RememberInput(text="x").graph == "default"


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (RememberInput, {"text": ""}),
        (RememberInput, {"text": "x" * 4001}),
        (RememberInput, {"text": "bell\x07"}),
        (RememberInput, {"text": "x", "entities": [{"label": "Bad Label", "name": "n"}]}),
        (RememberInput, {"text": "x", "entities": [{"label": "Entity", "name": "n"}]}),
        (RememberInput, {"text": "x", "relations": [{"from": "a", "type": "lower", "to": "b"}]}),
        (RememberInput, {"text": "x", "relations": [{"from": "a", "type": "IN_BATCH", "to": "b"}]}),
        (RememberInput, {"text": "x", "graph": "../etc"}),
        (RecallInput, {"query": "x", "hops": -1}),
        (
            LinkInput,
            {
                "from": {"label": "A", "name": "a"},
                "type": "R",
                "to": {"label": "B", "name": "b"},
                "props": {"id": "x"},
            },
        ),
        (
            LinkInput,
            {
                "from": {"label": "A", "name": "a"},
                "type": "R",
                "to": {"label": "B", "name": "b"},
                "props": {"l": [1, "a"]},
            },
        ),
        (ExploreInput, {"start": []}),
        (ExploreInput, {"start": "x", "types": ["lower"]}),
    ],
)
def test_bad_input_is_refused_by_the_contract(model: type, data: dict) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_text_is_stored_nfc_normalised() -> None:
    decomposed = unicodedata.normalize("NFD", "café")
    assert RememberInput(text=decomposed).text == "café"


@pytest.mark.parametrize(
    "query",
    [
        "AND OR NOT",
        '"unbalanced',
        "a* ~b^2 [x TO y] {z} (c) d:e f\\g /re/ && ||",
        "ロケット 🚀 emoji",
        "x" * 4000,
    ],
)
def test_lucene_query_keeps_only_words_so_no_syntax_reaches_lucene(query: str) -> None:
    built = lucene_query("default", query, RecallConfig().field_weights)
    assert built is not None
    terms = built.split("text:(", 1)[1].split(")", 1)[0].split()
    assert terms and all(t.replace("_", "").isalnum() for t in terms)
    assert built.startswith(f"+graphKey:{graph_key('default')} +(")


def test_graph_keys_are_single_tokens_that_never_collide_on_names_sharing_words() -> None:
    keys = {graph_key(g) for g in ("user-1", "user-1-archive", "user.1", "User-1")}
    assert len(keys) == 4 and all(k.isalnum() for k in keys)


def test_lucene_query_of_punctuation_only_is_none() -> None:
    assert lucene_query("default", "?!... --- ***", RecallConfig().field_weights) is None


def test_hop_is_half_the_walk_depth_rounded_up() -> None:
    assert [hop_of(d) for d in range(7)] == [0, 1, 1, 2, 2, 3, 3]


def test_memory_hash_is_keccak_of_the_canonical_envelope() -> None:
    fields = dict(
        id="mem_1",
        graph="default",
        text="hello",
        tags=["b", "a", "a"],
        entities=["Token:X"],
        created_at="2026-01-02T03:04:05.678Z",
    )
    assert memory_envelope(**fields)["tags"] == ["a", "b"]
    # Pinned: changing the envelope changes every hash ever anchored.
    assert (
        memory_hash(**fields)
        == "0x"
        + __import__("eth_utils")
        .keccak(
            b'{"createdAt":"2026-01-02T03:04:05.678Z","entities":["Token:X"],"graph":"default","id":"mem_1",'
            b'"schema":"graphsvc.memory/v1","tags":["a","b"],"text":"hello"}'
        )
        .hex()
    )
    assert memory_hash(**fields) != memory_hash(**{**fields, "text": "hello!"})


def test_timestamps_are_utc_with_milliseconds() -> None:
    from datetime import datetime, timedelta, timezone

    moment = datetime(2026, 1, 2, 4, 4, 5, 678900, tzinfo=timezone(timedelta(hours=1)))
    assert format_timestamp(moment) == "2026-01-02T03:04:05.678Z"


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (LinkInput, {"from": POOL_IN, "type": "R", "to": USDC_IN, "props": {"n": float("nan")}}),
        (LinkInput, {"from": POOL_IN, "type": "R", "to": USDC_IN, "props": {"n": [1.5, float("inf")]}}),
        (LinkInput, {"from": POOL_IN, "type": "R", "to": USDC_IN, "props": {"n": -(2**63) - 1}}),
        (StoreEventInput, {"event_kind": "fact", "payload": {"deep": float("-inf")}}),
        (StoreEventInput, {"event_kind": "fact", "payload": {"a": "\ud800"}}),
        (StoreEventInput, {"event_kind": "fact", "payload": json.loads("[" * 70 + "]" * 70)}),
        (RememberInput, {"text": "lone \udfff surrogate"}),
    ],
)
def test_what_cannot_be_stored_is_refused_by_the_contract(model: type, data: dict) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_link_props_keep_numbers_of_a_list_as_one_type() -> None:
    link = LinkInput.model_validate(
        {"from": POOL_IN, "type": "R", "to": USDC_IN, "props": {"fees": [1, 2.5], "n": 2**63 - 1}}
    )
    assert link.props == {"fees": [1.0, 2.5], "n": 2**63 - 1}
    assert [type(f) for f in link.props["fees"]] == [float, float]


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        ({"data": {"topic": "hooks", "value": "clean up"}}, "hooks: clean up"),
        ({"data": {"topic": "n", "value": ["bell\x07"]}}, "n: ['bell\\x07']"),
        ({"note": "del\x7f"}, '{"note":"del\\u007f"}'),
        ({"note": "x" * 5000}, None),
        ("", "fact on skill:x"),
        ("\ufeff", "fact on skill:x"),
    ],
)
def test_every_valid_event_makes_a_valid_memory_text(payload: object, text: str | None) -> None:
    event = StoreEventInput.model_validate(
        {"event_kind": "fact", "payload": payload, "context_id": "skill:x"}
    )
    made = RememberInput(text=event.text())
    assert made.text == text if text is not None else len(made.text) == 4000
