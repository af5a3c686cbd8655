"""Every tool once, through any Caller: the scenario each client path of the suite runs (stdio, the
TypeScript SDK, the adapters), so each is held to the same answers."""

from __future__ import annotations

from typing import Any

from graphsvc.services.operations import TOOLS
from tests.transports import Caller

ADA = [{"label": "Person", "name": "Ada"}]


async def every_tool(call: Caller, graph: str) -> dict[str, Any]:
    """Each of the eleven tools once, in an order where each has something to act on; their answers."""

    async def data(tool: str, **args: Any) -> Any:
        return (await call(tool, {**args, "graph": graph})).data

    seen: dict[str, Any] = {}
    seen["remember"] = first = await data("remember", text="Ada prefers tea", entities=ADA)
    second = await data("remember", text="Ada moved to Lisbon", entities=ADA)
    seen["recall"] = await data("recall", query="tea")
    lisbon = {"label": "City", "name": "Lisbon"}
    seen["link"] = await data("link", **{"from": ADA[0], "type": "LIVES_IN", "to": lisbon})
    seen["explore"] = await data("explore", start="Person:Ada")
    seen["anchor_now"] = await data("anchor_now")
    seen["verify_memory"] = await data("verify_memory", id=first["id"])
    seen["forget"] = await data("forget", id=second["id"])
    seen["store_event"] = await data("store_event", event_kind="fact", payload="tea", context_id="habit:tea")
    seen["retrieve_memories"] = await data("retrieve_memories", query="tea")
    seen["list_contexts"] = await data("list_contexts")
    seen["generate_insights"] = await data("generate_insights", task="tea")
    return seen


def check_every_tool(seen: dict[str, Any]) -> None:
    """The answers of `every_tool` are the ones graphsvc gives."""
    assert set(seen) == {op.name for op in TOOLS}
    assert seen["remember"]["id"].startswith("mem_")
    assert [m["text"] for m in seen["recall"]["memories"]][:1] == ["Ada prefers tea"]
    assert seen["link"]["type"] == "LIVES_IN"
    assert "Person:Ada" in {n["id"] for n in seen["explore"]["nodes"]}
    assert seen["anchor_now"]["status"] == "anchored"
    assert seen["verify_memory"]["verified"] is True
    assert seen["forget"]["deleted"] is True
    assert seen["store_event"]["contexts"] == ["habit:tea"]
    assert seen["retrieve_memories"]["memories"]
    assert seen["list_contexts"]["total"] == 1
    assert [i["context_id"] for i in seen["generate_insights"]["insights"]] == ["habit:tea"]
