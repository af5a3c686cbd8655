"""The seed's MON/USDC example, end to end, alike over MCP/streamable HTTP, MCP/SSE and REST."""

from __future__ import annotations

import re

import pytest

from tests.conftest import count_nodes
from tests.transports import TRANSPORTS, Caller, ToolFailure, connect

pytestmark = pytest.mark.neo4j

SWAP = "Swap of 10 MON to USDC failed on pool MON/USDC-A: slippage 3.2%"
POOL = {"label": "Pool", "name": "MON/USDC-A"}
MON = {"label": "Token", "name": "MON"}
USDC = {"label": "Token", "name": "USDC"}
USDT = {"label": "Token", "name": "USDT"}
USER = {"label": "Person", "name": "User"}


async def _seed(call: Caller, graph: str) -> dict[str, str]:
    ids = {}
    for key, args in {
        "swap": {
            "text": SWAP,
            "entities": [POOL, MON, USDC],
            "tags": ["failure", "swap"],
            "relations": [{"from": "MON", "type": "TRADES_ON", "to": "MON/USDC-A"}],
        },
        "liquidity": {"text": "USDC liquidity was low on MON/USDC-A pool", "entities": [POOL, USDC]},
        "prefers": {
            "text": "User prefers USDC over USDT",
            "entities": [USER, USDC, USDT],
            "relations": [{"from": "User", "type": "AVOIDS", "to": "USDT"}],
        },
        "staking": {"text": "MON staking yields 7% a year", "entities": [MON], "tags": ["yield"]},
    }.items():
        ids[key] = (await call("remember", {**args, "graph": graph})).data["id"]
    return ids


def _hops(reply_data: dict, ids: dict[str, str]) -> dict[str, int]:
    names = {v: k for k, v in ids.items()}
    return {names[m["id"]]: m["distance"] for m in reply_data["memories"]}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_seed_example_round_trips(transport: str, server_url: str, graph: str, store) -> None:
    async with connect(transport, server_url) as call:
        first = await call(
            "remember", {"text": SWAP, "entities": [POOL, MON], "tags": ["failure"], "graph": graph}
        )
        assert re.fullmatch(r"mem_[0-9a-f]{16}", first.data["id"])
        assert re.fullmatch(r"0x[0-9a-f]{64}", first.data["hash"])
        assert first.data["entities"] == [
            {"id": "Pool:MON/USDC-A", "label": "Pool", "name": "MON/USDC-A"},
            {"id": "Token:MON", "label": "Token", "name": "MON"},
        ]
        assert first.data["edges"] == [
            {"from": first.data["id"], "type": "MENTIONS", "to": "Pool:MON/USDC-A"},
            {"from": first.data["id"], "type": "MENTIONS", "to": "Token:MON"},
        ]
        if first.text is not None:
            assert (
                first.text
                == f'Remembered: "Swap of 10 MON to USDC failed on pool MON/USDC-A:…" (id: {first.data["id"]})'
            )
        await call("forget", {"id": first.data["id"], "graph": graph})

        ids = await _seed(call, graph)

        # recall by keyword: hop 0 is the hit and, ranked below it, the memories remembered within
        # two of it (their window holds its text; staking, three away, does not); hop 1 adds what
        # shares an entity with them
        hit = await call("recall", {"query": "swap failed slippage", "hops": 0, "graph": graph})
        assert _hops(hit.data, ids) == {"swap": 0, "liquidity": 0, "prefers": 0}
        assert hit.data["memories"][0]["id"] == ids["swap"]
        assert hit.data["memories"][0]["tags"] == ["failure", "swap"]
        assert hit.data["memories"][0]["anchorId"] is None
        wide = await call("recall", {"query": "swap failed slippage", "graph": graph})
        assert _hops(wide.data, ids) == {"swap": 0, "liquidity": 0, "prefers": 0, "staking": 1}
        assert wide.data["memories"][0]["id"] == ids["swap"]
        assert wide.data["contextTruncated"] is False
        assert f"{ids['swap']} MENTIONS Pool:MON/USDC-A" in wide.data["relations"]
        assert "Token:MON TRADES_ON Pool:MON/USDC-A" in wide.data["relations"]
        if wide.text is not None:
            lines = wide.text.splitlines()
            assert lines[0] == "Recalled 4 memories:"
            assert re.fullmatch(rf"1\. {re.escape(SWAP)}  \(score \d+\.\d\d, hop 0\)", lines[1])
            assert "Context graph:" in lines
            assert re.fullmatch(
                r"\d+ nodes \(\d+ entities\), \d+ edges", lines[lines.index("Context graph:") + 1]
            )

        # recall by entity at hops 0, 1, 2: scores fall with distance
        by_hops = [
            (await call("recall", {"entity": "USDT", "hops": h, "graph": graph})).data for h in (0, 1, 2)
        ]
        assert _hops(by_hops[0], ids) == {"prefers": 0}
        assert _hops(by_hops[1], ids) == {"prefers": 0, "swap": 1, "liquidity": 1}
        assert _hops(by_hops[2], ids) == {"prefers": 0, "swap": 1, "liquidity": 1, "staking": 2}
        scores = {m["distance"]: m["score"] for m in reversed(by_hops[2]["memories"])}
        assert scores[0] > scores[1] > scores[2]

        # link: a typed edge; linking again updates it in place
        linked = await call(
            "link", {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"fee": 0.3}, "graph": graph}
        )
        assert re.fullmatch(r"edge_[0-9a-f]{16}", linked.data["id"])
        assert linked.data["created"] is True
        if linked.text is not None:
            assert linked.text == f"Linked: MON/USDC-A -[QUOTES]→ USDC (edge {linked.data['id']})"
        again = await call(
            "link", {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"fee": 0.5}, "graph": graph}
        )
        assert (again.data["id"], again.data["created"], again.data["props"]) == (
            linked.data["id"],
            False,
            {"fee": 0.5},
        )

        # explore in each direction, with a type filter
        out = await call(
            "explore", {"start": "Pool:MON/USDC-A", "maxDepth": 1, "direction": "out", "graph": graph}
        )
        assert {(n["id"], n["depth"]) for n in out.data["nodes"]} == {
            ("Pool:MON/USDC-A", 0),
            ("Token:USDC", 1),
        }
        assert [(e["from"], e["type"], e["to"]) for e in out.data["edges"]] == [
            ("Pool:MON/USDC-A", "QUOTES", "Token:USDC")
        ]
        into = await call(
            "explore",
            {
                "start": ["Pool:MON/USDC-A"],
                "maxDepth": 1,
                "direction": "in",
                "types": ["MENTIONS"],
                "graph": graph,
            },
        )
        assert {n["id"] for n in into.data["nodes"]} == {"Pool:MON/USDC-A", ids["swap"], ids["liquidity"]}
        assert {n["label"] for n in into.data["nodes"]} == {"Pool", "Memory"}
        assert all(e["type"] == "MENTIONS" and e["id"].startswith("edge_") for e in into.data["edges"])
        both = await call("explore", {"start": ids["staking"], "maxDepth": 2, "graph": graph})
        depths = {n["id"]: n["depth"] for n in both.data["nodes"]}
        assert depths[ids["staking"]] == 0 and depths["Token:MON"] == 1
        assert depths[ids["swap"]] == 2 and depths["Pool:MON/USDC-A"] == 2
        assert both.data["truncated"] is False
        capped = await call("explore", {"start": ids["staking"], "maxDepth": 3, "limit": 3, "graph": graph})
        assert len(capped.data["nodes"]) == 3 and capped.data["truncated"] is True

        # forget: the memory goes, entities mentioned elsewhere stay
        gone = await call("forget", {"id": ids["prefers"], "graph": graph})
        assert gone.data == {"id": ids["prefers"], "deleted": True}
        if gone.text is not None:
            assert gone.text == f"Deleted memory {ids['prefers']}."
        after = await call("recall", {"entity": "USDC", "hops": 0, "graph": graph})
        assert _hops(after.data, ids) == {"swap": 0, "liquidity": 0}
        with pytest.raises(ToolFailure) as missing:
            await call("forget", {"id": ids["prefers"], "graph": graph})
        assert missing.value.code == "not_found"
    assert await count_nodes(store, graph) > 0


BAD_CALLS = [
    ("remember", {"text": ""}),
    ("remember", {"text": "   "}),
    ("remember", {"text": "x" * 4001}),
    (
        "remember",
        {
            "text": "ok",
            "entities": [MON, USDC],
            "relations": [{"from": "MON", "type": "trades-on", "to": "USDC"}],
        },
    ),
    ("remember", {"text": "ok", "entities": [{"label": "Pool`) DETACH DELETE n //", "name": "x"}]}),
    (
        "remember",
        {
            "text": "ok",
            "entities": [MON],
            "relations": [{"from": "MON", "type": "X]->() DETACH DELETE n //", "to": "MON"}],
        },
    ),
    (
        "remember",
        {"text": "ok", "entities": [MON], "relations": [{"from": "MON", "type": "PAIRS", "to": "Nowhere"}]},
    ),
    (
        "remember",
        {
            "text": "ok",
            "entities": [{"label": "Person", "name": "Mercury"}, {"label": "Planet", "name": "Mercury"}],
            "relations": [{"from": "Mercury", "type": "ORBITS", "to": "Mercury"}],
        },
    ),
    ("remember", {"text": "ok", "entities": [{"label": "Memory", "name": "x"}]}),
    ("remember", {"text": "ok", "surprise": 1}),
    ("recall", {"query": "swap", "hops": 4}),
    ("recall", {"query": "swap", "limit": 0}),
    ("recall", {"query": "swap", "limit": 51}),
    ("recall", {}),
    ("recall", {"entity": "Nobody"}),
    ("link", {"from": POOL, "type": "TRADES ON", "to": USDC}),
    ("link", {"from": POOL, "type": "MENTIONS", "to": USDC}),
    ("link", {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"nested": {"a": 1}}}),
    ("explore", {"start": "Pool:MON/USDC-A", "maxDepth": 4}),
    ("explore", {"start": "Pool:MON/USDC-A", "limit": 301}),
    ("explore", {"start": "Pool:MON/USDC-A", "direction": "sideways"}),
    ("explore", {"start": "Pool:MON/USDC-A", "types": ["MENTIONS]-() DETACH DELETE n //"]}),
    ("explore", {"start": "mem_0000000000000000"}),
    ("forget", {"id": "mem_0000000000000000"}),
]
EXPECTED_CODE = {14: "not_found", 22: "not_found", 23: "not_found", 6: "not_found", 7: "conflict"}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_bad_input_gets_a_typed_error_and_writes_nothing(
    transport: str, server_url: str, graph: str, store
) -> None:
    async with connect(transport, server_url) as call:
        await call("remember", {"text": "Pool MON/USDC-A exists", "entities": [POOL], "graph": graph})
        await call(
            "remember",
            {
                "text": "Mercury is a planet",
                "entities": [{"label": "Planet", "name": "Mercury"}],
                "graph": graph,
            },
        )
        before = await count_nodes(store, graph)
        for n, (tool, args) in enumerate(BAD_CALLS):
            with pytest.raises(ToolFailure) as failure:
                await call(tool, {**args, "graph": graph})
            assert failure.value.code == EXPECTED_CODE.get(n, "invalid_input"), (
                n,
                tool,
                args,
                str(failure.value),
            )
        assert await count_nodes(store, graph) == before
