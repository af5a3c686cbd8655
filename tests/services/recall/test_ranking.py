"""Recall's score, term by term, on walks built by hand (services/recall/ranking.py; no Neo4j)."""

from __future__ import annotations

import pytest

from graphsvc.domain.recall_config import Calibration, RecallConfig
from graphsvc.services.graph_walk import Node, Walk, WalkEdge
from graphsvc.services.index.cosines import cosines
from graphsvc.services.index.windows import WINDOW, windows
from graphsvc.services.recall.query import named_in
from graphsvc.services.recall.ranking import Asked, Hit, Hits, by_score_then_order, evidence, hop_of, ranked


def memory(memory_id: str, depth: int) -> Node:
    return Node(id=memory_id, label="Memory", text="", depth=depth, degree=1)


def entity(entity_id: str, depth: int, degree: int = 1) -> Node:
    return Node(id=entity_id, label="Person", text=entity_id.split(":")[1], depth=depth, degree=degree)


def context(*nodes: Node, mentions: tuple[tuple[str, str], ...] = ()) -> Walk:
    """A walk's result: `nodes`, and a MENTIONS edge for each (memory, entity) of `mentions`."""
    edges = {f"{m}-{e}": WalkEdge(f"{m}-{e}", m, "MENTIONS", e) for m, e in mentions}
    return Walk(nodes={n.id: n for n in nodes}, edges=edges)


def hits(text: dict[str, float]) -> Hits:
    """Keyword hits whose coverage is `text` (an attainable BM25 of 2.2: coverage = BM25)."""
    return Hits([hit(i, score) for i, score in text.items()], attainable=2.2)


def hit(memory_id: str, score: float, seq: int | None = None) -> Hit:
    return Hit(memory(memory_id, 0), seq=seq, score=score)


CALIBRATION = Calibration(floor=0.35, ceiling=0.75, gap=0.12)
CONFIG = RecallConfig()
KEYWORD_POWER, KEYWORD_WEIGHT, MEANING_WEIGHT = (
    CONFIG.keyword_power,
    CONFIG.keyword_weight,
    CONFIG.meaning_weight,
)
NAMED_BOOST, TIME_WEIGHT, K1 = CONFIG.named_boost, CONFIG.time_weight, CONFIG.bm25_k1


def scores(
    walk: Walk,
    text: dict[str, float] | None = None,
    *,
    hops: int = 2,
    named: set[str] | None = None,
    config: RecallConfig = CONFIG,
    near: dict[str, tuple[float | None, float | None]] | None = None,
    keep: set[str] | None = None,
    timely: dict[str, float] | None = None,
    inside: dict[str, float] | None = None,
) -> dict[str, float]:
    found = evidence(
        Asked(
            walk,
            hits(text or {}),
            K1,
            named or set(),
            hops,
            near=near or {},
            keep=keep,
            timely=timely or {},
            inside=inside or {},
        )
    )
    ranking = ranked(found, config, list(text or {}), CALIBRATION)
    return {memory_id: round(parts.total, 4) for parts, _, memory_id in ranking}


def test_a_keyword_hit_scores_its_share_of_the_query_to_a_power_plus_its_nearness() -> None:
    assert KEYWORD_POWER > 1  # a part of the query counts less than its share: a quarter, an eighth
    assert scores(context(memory("a", 0), memory("b", 0)), {"a": 1.0, "b": 0.25}) == {
        "a": KEYWORD_WEIGHT * 1.0 + 1.0,
        "b": round(KEYWORD_WEIGHT * 0.25**KEYWORD_POWER + 1.0, 4),
    }


def test_no_keyword_hit_gives_no_keyword_score() -> None:
    assert Hits().scores == {} and Hits().ceiling(K1) == 0.0
    # Without the graph's statistics the best hit's score stands in for the attainable BM25.
    assert Hits([hit("a", 8.0)]).ceiling(K1) == 2.2 * 8.0
    assert Hits([hit("a", 0.0)]).ceiling(K1) == 0.0  # never a division by zero


def test_a_memory_that_mentions_an_entity_the_query_names_has_its_text_score_boosted() -> None:
    walk = context(
        memory("a", 0), memory("b", 0), entity("Person:Caroline", 1), mentions=(("a", "Person:Caroline"),)
    )
    named = named_in("What did Caroline say?", {"Person:Caroline": "Caroline"})
    assert named == {"Person:Caroline"}
    got = scores(walk, {"a": 0.5, "b": 0.5}, named=named)
    half = 0.5**KEYWORD_POWER
    assert got == {
        "a": round(KEYWORD_WEIGHT * half * NAMED_BOOST + 1.0, 4),
        "b": round(KEYWORD_WEIGHT * half + 1.0, 4),
    }


def test_an_entity_is_named_only_when_every_word_of_its_name_is_in_the_query() -> None:
    names = {"Person:Ann Lee": "Ann Lee", "Person:Ann": "Ann", "Person:": ""}
    assert named_in("where did ann go", names) == {"Person:Ann"}
    assert named_in("Ann Lee, where?", names) == {"Person:Ann Lee", "Person:Ann"}


def test_nearness_is_one_over_one_plus_the_hop_and_hops_bounds_the_memories() -> None:
    assert [hop_of(d) for d in range(6)] == [0, 1, 1, 2, 2, 3]
    walk = context(memory("near", 0), memory("one", 2), memory("two", 4), entity("Person:anchor", -1))
    assert scores(walk, hops=2) == {"near": 1.0, "one": 0.5, "two": round(1 / 3, 4)}
    assert scores(walk, hops=1) == {"near": 1.0, "one": 0.5}
    assert scores(walk, hops=0) == {"near": 1.0}


def test_the_entities_that_led_to_a_memory_add_one_over_their_degree_up_to_one() -> None:
    walk = context(
        memory("hit", 0),
        entity("Person:hub", 1, degree=4),
        entity("Person:rare", 1, degree=1),
        entity("Person:other", 1, degree=2),
        memory("via-hub", 2),
        memory("via-both", 2),
        memory("via-hub-and-other", 2),
        mentions=(
            ("hit", "Person:hub"),
            ("via-hub", "Person:hub"),
            ("via-both", "Person:hub"),
            ("via-both", "Person:rare"),
            ("via-hub-and-other", "Person:hub"),
            ("via-hub-and-other", "Person:other"),
        ),
    )
    got = scores(walk)
    assert got["hit"] == 1.0  # its entities were reached after it: they lead nowhere to it
    assert got["via-hub"] == 0.5 + 0.25
    assert got["via-both"] == 0.5 + 1.0  # 1/4 + 1/1, capped at 1
    assert got["via-hub-and-other"] == 0.5 + 0.75


def test_the_anchor_entity_supports_the_memories_that_mention_it() -> None:
    walk = context(entity("Person:anchor", -1, degree=2), memory("a", 0), mentions=(("a", "Person:anchor"),))
    assert scores(walk) == {"a": 1.0 + 0.5}


def test_the_meaning_term_adds_its_weight_times_the_calibrated_cosine_beside_the_closest() -> None:
    walk = context(memory("a", 0), memory("b", 0), memory("c", 0))
    floor, ceiling, gap = CALIBRATION.floor, CALIBRATION.ceiling, CALIBRATION.gap
    middle = (floor + ceiling) / 2
    assert scores(walk, near={"a": (ceiling, None), "b": (middle, None), "c": (floor, None)}) == {
        "a": 1.0 + MEANING_WEIGHT,  # a paraphrase and the closest: both halves in full
        "b": round(1.0 + MEANING_WEIGHT * (0.5 + max(0.0, 1 - (ceiling - middle) / gap)) / 2, 4),
        "c": 1.0,  # at the floor: nothing
    }


def test_cosines_are_own_and_best_neighbours_on_the_cosine_scale() -> None:
    # Neo4j's scale (1 + cos) / 2: 1.0 is cos 1, 0.75 is cos 0.5, 0.5 is cos 0, 0.25 is cos -0.5.
    rows = [
        {"id": "own", "own": 1.0, "near": []},
        {"id": "neighbour", "own": 0.5, "near": [1.0, 0.75]},
        {"id": "unembedded", "own": None, "near": [0.75]},
    ]
    assert cosines(rows) == {"own": (1.0, None), "neighbour": (0.0, 1.0), "unembedded": (None, 0.5)}


def test_a_memory_not_kept_is_not_ranked_and_history_keeps_all() -> None:
    walk = context(memory("now", 0), memory("superseded", 0))
    assert set(scores(walk, keep={"now"})) == {"now"}
    assert set(scores(walk, keep=None)) == {"now", "superseded"}


def test_equal_scores_order_nearer_first_then_keyword_hits_in_their_order_then_by_id() -> None:
    walk = context(
        memory("z-hit-second", 0),
        memory("y-hit-first", 0),
        memory("b-seed", 0),
        memory("a-seed", 0),
        entity("Person:pair", 1, degree=2),
        memory("0-far", 2),
        mentions=(("0-far", "Person:pair"),),
    )
    text = {"y-hit-first": 0.0, "z-hit-second": 0.0}  # hits whose keyword score rounds to nothing
    best = ranked(evidence(Asked(walk, hits(text), K1, set(), 2)), CONFIG, list(text))
    assert [(round(parts.total, 4), memory_id) for parts, _, memory_id in best] == [
        (1.0, "y-hit-first"),
        (1.0, "z-hit-second"),
        (1.0, "a-seed"),
        (1.0, "b-seed"),
        (1.0, "0-far"),  # 1/2 + 1/2: equal, but a hop further
    ]


def test_scores_keep_four_decimals_so_nearly_equal_scores_tie() -> None:
    walk = context(memory("b", 0), memory("a", 0))
    text = {"b": 0.25, "a": 0.250001}
    best = ranked(evidence(Asked(walk, hits(text), K1, set(), 0)), CONFIG, list(text))
    assert [(round(parts.total, 4), memory_id) for parts, _, memory_id in best] == [(1.75, "b"), (1.75, "a")]


@pytest.mark.parametrize(
    ("rows", "order"),
    [
        ([hit("b", 1.0, 2), hit("a", 2.0, 3)], ["a", "b"]),
        ([hit("b", 1.0, 2), hit("a", 1.0, 3)], ["b", "a"]),
        ([hit("a", 1.0, None), hit("b", 1.0, 9)], ["b", "a"]),
        ([hit("b", 1.0), hit("a", 1.0)], ["a", "b"]),
    ],
)
def test_keyword_hits_order_by_score_then_remember_order_then_id(rows: list[Hit], order: list[str]) -> None:
    assert [row.node.id for row in sorted(rows, key=by_score_then_order)] == order


def test_a_window_holds_the_texts_of_window_memories_on_each_side() -> None:
    sequence = [(f"m{n}", f"t{n}") for n in range(7)]
    got = {w["id"]: w["window"].split("\n") for w in windows(sequence, ["m0", "m3", "m6"])}
    assert got["m3"] == [f"t{n}" for n in range(3 - WINDOW, 3 + WINDOW + 1)]
    assert got["m0"] == [f"t{n}" for n in range(WINDOW + 1)]
    assert got["m6"] == [f"t{n}" for n in range(6 - WINDOW, 7)]


def test_a_memory_in_the_time_window_gains_the_time_weight_times_its_overlap() -> None:
    walk = context(memory("in", 0), memory("partly", 0), memory("out", 0))
    timely = {"in": 1.0, "partly": 0.25}
    assert scores(walk, timely=timely) == {
        "in": 1.0 + TIME_WEIGHT * 1.0,
        "partly": 1.0 + TIME_WEIGHT * 0.25,
        "out": 1.0,
    }


def test_a_memory_found_only_by_the_time_window_says_so() -> None:
    walk = context(memory("in", 0))
    [(parts, _, _)] = ranked(evidence(Asked(walk, hits({}), K1, set(), 2, timely={"in": 1.0})), CONFIG)
    assert parts.found_by == ("time",) and parts.time == 1.0


def test_a_configuration_passed_in_reweighs_the_score() -> None:
    walk = context(memory("in", 0), memory("hit", 0))
    timely, text = {"in": 1.0}, {"hit": 0.5}
    default = scores(walk, text, timely=timely)
    assert default["hit"] > default["in"]  # half the query's words outweigh a day inside the window
    heavy = scores(walk, text, timely=timely, config=CONFIG.model_copy(update={"time_weight": 5.0}))
    assert heavy["in"] > heavy["hit"] and heavy["hit"] == default["hit"]


def test_a_memory_inside_a_narrow_window_outranks_every_memory_outside_it() -> None:
    # "in": a day's memory the walk reached, sharing no word and no meaning with the question; "out":
    # another day's, holding the whole query, naming the entity asked about, the closest in meaning.
    walk = context(memory("in", 1), memory("out", 0))
    text, near = {"out": 1.0}, {"out": (0.9, 0.9)}
    wide = scores(walk, text, near=near, named=set(), timely={"in": 1.0})
    assert wide["out"] > wide["in"]  # a month's window: the time term is one term among others
    narrow = scores(walk, text, near=near, named=set(), timely={"in": 1.0}, inside={"in": 1.0})
    assert narrow["in"] > narrow["out"] == wide["out"]


def test_inside_a_narrow_window_the_memories_order_by_their_other_terms() -> None:
    walk = context(memory("topic", 0), memory("other", 0), memory("outside", 0))
    inside = {"topic": 1.0, "other": 1.0}
    ranked_ = scores(walk, {"topic": 0.5, "outside": 1.0}, timely=inside, inside=inside)
    assert list(ranked_) == ["topic", "other", "outside"]
