"""Neo4j Browser explains the graph: graphsvc serves a style and a guide, Neo4j loads both on connect,
and the guide's queries read one graph. On a real Neo4j, its real Browser in headless Chromium."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j.graph import Node, Relationship
from neo4j.graph import Path as GraphPath
from playwright.async_api import Browser, Locator, Page, expect

from graphsvc.extractor.rules import RulesExtractor
from graphsvc.services.access import READ, AccessService
from graphsvc.services.extraction import ExtractionService
from graphsvc.store.graph import GraphStore
from tests.conftest import Neo4jTarget

pytestmark = pytest.mark.neo4j
UNTRUSTED = "<b>Bob</b> & 'Eve' {name}"  # a memory's text is the agent's: markup stays text
TIMEOUT_S = 60  # first calls on a fresh server (and a busy machine) are slow


@dataclass(frozen=True)
class Seeded:
    trades: str  # anchored, mentions Alice and Uniswap
    avoids: str  # anchored, then forgotten: a tombstone
    root: str  # of the batch


def _remember(
    base: str,
    graph: str,
    text: str,
    names: list[tuple[str, str]],
    relations: tuple[tuple[str, str, str], ...] = (),
) -> str:
    body = {
        "graph": graph,
        "text": text,
        "entities": [{"label": label, "name": name} for label, name in names],
        "relations": [{"from": a, "type": t, "to": b} for a, t, b in relations],
    }
    answer = httpx.post(f"{base}/v1/memories", json=body, timeout=TIMEOUT_S)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def seed(base: str, graph: str) -> Seeded:
    """Three memories anchored in one batch, one of them then forgotten, one pending; and a memory of
    another graph that no guide query may show."""
    trades = _remember(
        base,
        graph,
        "Alice trades on Uniswap",
        [("Person", "Alice"), ("Exchange", "Uniswap")],
        (("Alice", "TRADES_ON", "Uniswap"),),
    )
    avoids = _remember(
        base,
        graph,
        "Alice avoids USDT",
        [("Person", "Alice"), ("Token", "USDT")],
        (("Alice", "AVOIDS", "USDT"),),
    )
    _remember(base, graph, UNTRUSTED, [("Person", "Bob")])
    anchored = httpx.post(f"{base}/v1/anchor", json={"graph": graph}, timeout=TIMEOUT_S).json()
    assert anchored["status"] == "anchored", anchored
    forgot = httpx.delete(f"{base}/v1/memories/{avoids}", params={"graph": graph}, timeout=TIMEOUT_S)
    assert forgot.json()["deleted"]
    _remember(base, graph, "Carol is pending", [("Person", "Carol")])
    _remember(base, f"{graph}-other", "Mallory's memory", [("Person", "Mallory")])
    return Seeded(trades, avoids, anchored["root"])


class _Runnables(HTMLParser):
    """The guide's runnable blocks by their data-name, as Browser reads them (the text content)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[str, str] = {}
        self._name: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre" and "runnable" in (dict(attrs).get("class") or ""):
            self._name = dict(attrs)["data-name"]
            self.blocks[self._name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._name = None

    def handle_data(self, data: str) -> None:
        if self._name is not None:
            self.blocks[self._name] += data


def guide_blocks(base: str) -> dict[str, str]:
    """The runnable blocks of the guide graphsvc serves at `base`."""
    parser = _Runnables()
    parser.feed(httpx.get(f"{base}/browser/guide.html").text)
    return {name: text.strip() for name, text in parser.blocks.items()}


# ---- served --------------------------------------------------------------------------------------


def test_style_and_guide_are_served_cross_origin_and_stay_out_of_openapi(server_url: str) -> None:
    origin = {"origin": "http://127.0.0.1:7474"}
    guide = httpx.get(f"{server_url}/browser/guide.html", headers=origin)
    assert guide.status_code == 200 and guide.headers["content-type"].startswith("text/html")
    assert guide.headers["access-control-allow-origin"] == "*"
    assert "<carousel" in guide.text
    preflight = httpx.options(
        f"{server_url}/browser/guide.html",
        headers={
            **origin,
            "access-control-request-method": "GET",
            "access-control-request-headers": "cache-control,pragma",
        },
    )
    assert preflight.status_code == 200
    assert {"cache-control", "pragma"} <= set(preflight.headers["access-control-allow-headers"].split(", "))
    style = httpx.get(f"{server_url}/browser/style.grass", headers=origin)
    assert style.status_code == 200 and style.headers["access-control-allow-origin"] == "*"
    assert "caption: '{status} {title}'" in style.text
    assert httpx.get(f"{server_url}/browser/__init__.py").status_code == 404
    paths = httpx.get(f"{server_url}/openapi.json").json()["paths"]
    assert [path for path in paths if path.startswith("/browser")] == []


# ---- the guide's queries -------------------------------------------------------------------------


def _nodes(value: Any) -> list[Node]:
    if isinstance(value, Node):
        return [value]
    if isinstance(value, Relationship):
        return [n for n in value.nodes if n is not None]
    if isinstance(value, GraphPath):
        return list(value.nodes)
    if isinstance(value, list):
        return [n for item in value for n in _nodes(item)]
    return []


async def _cypher(store: GraphStore, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await store._driver.execute_query(query, params, database_=store._database)  # type: ignore[arg-type]
    return [dict(record.items()) for record in records]


async def test_every_guide_query_reads_one_graph_finds_what_it_holds_and_never_a_token(
    server_url: str, store: GraphStore, graph: str
) -> None:
    s = seed(server_url, graph)
    token, _ = await AccessService(store, required=True).create(graph, [READ])
    token_hash = hashlib.sha256(token.split("_", 2)[2].encode()).hexdigest()
    blocks = guide_blocks(server_url)
    assert blocks["graph"] == ":param graph => 'default'"
    assert blocks["memory-id"] == ":param memory => 'mem_…'"
    rows = {
        name: await _cypher(store, query, graph=graph, memory=s.trades)
        for name, query in blocks.items()
        if not query.startswith(":")
    }
    shown = [n for result in rows.values() for row in result for v in row.values() for n in _nodes(v)]
    assert {n["graph"] for n in shown} == {graph}
    assert not [n for n in shown if "ApiToken" in n.labels or "GraphState" in n.labels]
    assert token_hash not in repr(rows)

    def titles(name: str) -> set[str]:
        return {
            n.get("title") or n.get("name") or n["id"]
            for row in rows[name]
            for v in row.values()
            for n in _nodes(v)
        }

    sizes = {row["graph"]: row for row in rows["sizes"]}
    assert {k: sizes[graph][k] for k in ("memories", "pending", "entities", "batches", "forgotten")} == {
        "memories": 3,
        "pending": 2,  # Carol, and the forget record of the memory forgotten after its anchor
        "entities": 5,
        "batches": 1,
        "forgotten": 1,
    }
    assert sizes[f"{graph}-other"]["memories"] == 1
    assert titles("memories") == {
        "Alice trades on Uniswap",
        UNTRUSTED,
        "Carol is pending",
        "Alice",
        "Uniswap",
        "Bob",
        "Carol",
    }
    assert titles("memory") == {"Alice trades on Uniswap", "Alice", "Uniswap", s.root[:10]}
    assert titles("pending") == {"Carol is pending"}
    assert [(r["memories"], r["leaves"], r["root"]) for r in rows["batches"]] == [(3, 4, s.root)]
    assert titles("members") == {s.root[:10], "Alice trades on Uniswap", UNTRUSTED, s.avoids}
    assert rows["superseded"] == []


# ---- in Neo4j Browser ----------------------------------------------------------------------------

WAIT_MS = 60_000
COLOURS = {  # style.grass; entities take the colour Browser gives their own label
    "Memory": "#173F73",
    "Pending": "#FFFFFF",
    "Batch": "#4B1F6F",
    "Tombstone": "#2A2C34",
}
TOPIC_COLOUR = "#F3E6B3"  # key phrases read from the text
STATUS = r"(SEALED|SIGNED|SUBMITTED|INCLUDED|FINALIZED)"


async def _log_in(page: Page, target: Neo4jTarget) -> Locator:
    """Connect from Browser's form (filled from the URL but for the password); returns the guide,
    which Neo4j's post-connect command opens."""
    assert target.browser_url, "the browser test needs Neo4j from testcontainers or the local server"
    await page.goto(target.browser_url)
    await page.get_by_test_id("password").fill(target.password)
    await page.get_by_test_id("connect").click()
    guide = page.get_by_test_id("carousel")
    await guide.wait_for(timeout=WAIT_MS)
    return guide


async def _play(page: Page, guide: Locator, name: str) -> Locator:
    """Click a runnable block's play icon, as an operator does; returns the frame it opens."""
    frames = page.get_by_test_id("frame")
    before = await frames.count()
    await guide.locator(f'pre[data-name="{name}"] > i').click()
    await page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=frame]').length > n", arg=before, timeout=WAIT_MS
    )
    return frames.first


async def _drawn(frame: Locator, count: int) -> dict[str, str]:
    """Caption -> fill colour of each node drawn in a frame, once `count` nodes are drawn."""
    nodes = frame.locator("svg g.node")
    await nodes.nth(count - 1).locator("text.caption").first.wait_for(timeout=WAIT_MS)
    drawn = await nodes.evaluate_all(
        """nodes => nodes.map(n => [
             [...n.querySelectorAll('text.caption')].map(t => t.textContent.trim()).join(' '),
             n.querySelector('circle.b-outline').getAttribute('fill')])"""
    )
    assert len(drawn) == count, drawn
    return {caption: fill.upper() for caption, fill in drawn}


async def test_browser_opens_with_the_style_and_guide_and_its_queries_caption_what_the_graph_holds(
    server_url: str, neo4j_target: Neo4jTarget, chromium: Browser, graph: str, tmp_path: Path
) -> None:
    s = seed(server_url, graph)
    page = await chromium.new_page(viewport={"width": 1400, "height": 1000})
    guide = await _log_in(page, neo4j_target)

    await guide.locator('input[value-for="graph"]').press_sequentially(graph)
    await _play(page, guide, "graph")
    await expect(await _play(page, guide, "sizes")).to_contain_text(graph, timeout=WAIT_MS)

    await guide.get_by_test_id("nextSlide").click()
    memories = await _drawn(await _play(page, guide, "memories"), 7)
    await page.screenshot(path=tmp_path / "memories.png")
    people = {memories.pop(name) for name in ("Alice", "Bob", "Carol")}
    exchange = memories.pop("Uniswap")
    assert len(people) == 1 and exchange not in people  # one colour per label
    assert not (people | {exchange}) & set(COLOURS.values())
    assert memories == {
        "Alice trades on Uniswap": COLOURS["Memory"],
        UNTRUSTED: COLOURS["Memory"],
        "Carol is pending": COLOURS["Pending"],
    }

    await guide.get_by_test_id("nextSlide").click()
    await guide.locator('input[value-for="memory"]').press_sequentially(s.trades)
    await _play(page, guide, "memory-id")
    memory = await _drawn(await _play(page, guide, "memory"), 4)
    await page.screenshot(path=tmp_path / "memory.png")
    batches = [caption for caption in memory if caption.endswith(s.root[:10])]
    assert len(batches) == 1, memory
    batch = batches[0]
    assert re.fullmatch(f"{STATUS} {s.root[:10]}", batch) and memory[batch] == COLOURS["Batch"]
    assert memory.keys() == {"Alice trades on Uniswap", "Alice", "Uniswap", batch}

    await guide.get_by_test_id("nextSlide").click()
    assert await _drawn(await _play(page, guide, "pending"), 1) == {"Carol is pending": COLOURS["Pending"]}

    await guide.get_by_test_id("nextSlide").click()
    await expect(await _play(page, guide, "batches")).to_contain_text(s.root, timeout=WAIT_MS)
    members = await _drawn(await _play(page, guide, "members"), 4)
    [tombstone] = [caption for caption in members if caption.startswith("forgotten")]
    assert s.avoids.startswith(tombstone.removeprefix("forgotten ").rstrip("…"))
    assert members == {
        "Alice trades on Uniswap": COLOURS["Memory"],
        UNTRUSTED: COLOURS["Memory"],
        batch: COLOURS["Batch"],
        tombstone: COLOURS["Tombstone"],
    }
    await page.screenshot(path=tmp_path / "members.png")

    await guide.get_by_test_id("nextSlide").click()
    await expect(await _play(page, guide, "superseded")).to_contain_text("no records", timeout=WAIT_MS)


def _title(caption: str, titles: set[str]) -> str:
    """The one title of `titles` that Browser drew as `caption`: whole, or cut over lines and ended with
    "…" ("The winter concert at St. ou…"), when it starts with the caption's first three words."""
    if caption in titles:
        return caption
    start = " ".join(caption.split()[:3])
    [title] = [t for t in titles if t.startswith(start)]
    return title


async def test_the_guide_shows_a_text_only_graphs_extracted_entities_joining_memories_across_days(
    server_url: str,
    neo4j_target: Neo4jTarget,
    chromium: Browser,
    store: GraphStore,
    graph: str,
    tmp_path: Path,
) -> None:
    def remember(text: str, day: str, names: tuple[tuple[str, str], ...] = ()) -> None:
        entities = [{"label": label, "name": name} for label, name in names]
        body = {"graph": graph, "text": text, "occurredAt": day, "entities": entities}
        assert httpx.post(f"{server_url}/v1/memories", json=body, timeout=TIMEOUT_S).status_code == 201

    remember("Choir practice moved to Thursdays", "2023-03-01", (("Church", "St Anne's"),))
    remember("I joined the Tuesday choir at St. Anne's", "2023-03-07")
    remember("St. Anne's asked me to sing the solo at the winter concert", "2023-03-28")
    remember("The winter concert at St. Anne's sold out", "2023-12-20")
    remember("Lunch was a tuna sandwich", "2023-03-08")
    extraction = ExtractionService(store, RulesExtractor(), "ok")
    while await extraction.extract_pending():
        pass
    await extraction.close()
    rows = await _cypher(store, guide_blocks(server_url)["extracted"], graph=graph)
    entities = {row["e"]["name"] for row in rows}
    assert {"St Anne's", "winter concert"} <= entities  # the agent's entity, met by the texts' names
    memories = {row["m"]["title"] for row in rows}
    assert "Lunch was a tuna sandwich" not in memories and len(memories) == 4
    assert {row["r"]["source"] for row in rows} == {"agent", "extracted"}

    page = await chromium.new_page(viewport={"width": 1400, "height": 1000})
    guide = await _log_in(page, neo4j_target)
    await guide.locator('input[value-for="graph"]').press_sequentially(graph)
    await _play(page, guide, "graph")
    for _ in range(6):
        await guide.get_by_test_id("nextSlide").click()
    frame = await _play(page, guide, "extracted")
    drawn = await _drawn(frame, len(entities) + len(memories))
    assert sorted(_title(caption, entities | memories) for caption in drawn) == sorted(entities | memories)
    assert drawn["winter concert"] == TOPIC_COLOUR
    captions = await frame.locator("svg g.relationship text").all_text_contents()
    assert sorted(c.strip() for c in captions if c.strip()) == sorted(row["r"]["source"] for row in rows)
    await page.screenshot(path=tmp_path / "extracted.png")
