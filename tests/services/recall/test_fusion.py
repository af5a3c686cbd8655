"""Recall's fusion of keywords, meaning and the walk (services/recall/fusion.py), without a database; the hard
paraphrase set's own shape (tests/paraphrase_hard.py); the score parts each recalled memory carries."""

from __future__ import annotations

import math

import pytest

from graphsvc.domain import render
from graphsvc.domain.models import RecalledMemory, RecallResult, ScoreParts
from graphsvc.domain.recall_config import Calibration, RecallConfig
from graphsvc.services.embeddings import meaning_of
from graphsvc.services.index.keywords import keywords
from graphsvc.services.index.term_stats import analyze
from graphsvc.services.recall import fusion
from tests import paraphrase_hard

CONFIG = RecallConfig()
K1, SPREAD = CONFIG.bm25_k1, CONFIG.spread


def idf(df: int, docs: int = 1000) -> float:
    return math.log(1 + (docs - df + 0.5) / (df + 0.5))


def test_one_shared_common_word_is_a_small_part_of_a_full_match() -> None:
    # "Is the user vegetarian?" over 1000 memories, "user" in 400 of them and "vegetarian" in 2;
    # both in the window and the own text (weights 1 and 0.5): the query's attainable BM25.
    attainable = 1.5 * (idf(400) + idf(2))
    common = 1.5 * idf(400) / (K1 + 1)  # "user" once, fields of average length
    rare = 1.5 * idf(2) / (K1 + 1)
    assert fusion.coverage(common, attainable, K1) < 0.15
    assert fusion.coverage(rare, attainable, K1) > 0.85
    assert fusion.coverage(common + rare, attainable, K1) == pytest.approx(1.0)


def test_keyword_coverage_does_not_depend_on_the_other_candidates() -> None:
    # Before issue 28 the best hit scored 1 whatever it shared; now a weak best hit stays weak.
    assert fusion.coverage(0.5, 10.0, K1) == pytest.approx(0.11)
    assert fusion.coverage(0.0, 10.0, K1) == 0.0
    assert fusion.coverage(1.0, 0.0, K1) == 0.0
    assert fusion.coverage(100.0, 10.0, K1) == 1.0


BGE = Calibration(floor=0.35, ceiling=0.75, gap=0.12)


def test_meaning_is_half_how_close_and_half_how_near_the_closest_candidate() -> None:
    floor, ceiling, gap = BGE.floor, BGE.ceiling, BGE.gap
    assert fusion.closeness(floor, floor + 0.5, BGE) == 0.0  # at the floor nothing, relative or not
    assert fusion.closeness(ceiling + 0.1, ceiling + 0.1, BGE) == 1.0  # a paraphrase, the closest
    middle = (floor + ceiling) / 2
    assert fusion.closeness(middle, middle, BGE) == pytest.approx(0.75)  # halfway, and the closest
    assert fusion.closeness(middle, middle + gap / 2, BGE) == pytest.approx(0.5)
    assert fusion.closeness(middle, middle + gap, BGE) == pytest.approx(0.25)  # a gap behind: absolute only
    assert fusion.closeness(0.9, 0.9, None) == 0.0  # embeddings off
    # A window neighbour's cosine counts SPREAD of itself; none at all is no meaning.
    assert fusion.nearness(None, middle / SPREAD, SPREAD) == pytest.approx(middle)
    assert fusion.nearness(0.5, 0.6, SPREAD) == 0.5 and fusion.nearness(None, None, SPREAD) == 0.0


def test_the_score_is_the_weighted_sum_of_its_parts() -> None:
    evidence = fusion.Evidence(bm25=1.0, attainable=2.2, own=0.8, hop=1, support=0.25, named=True)
    parts = fusion.fuse(evidence, CONFIG, 0.8, BGE)
    assert (parts.keyword, parts.meaning, parts.walk, parts.named) == (1.0, 1.0, 0.75, True)
    expected = CONFIG.keyword_weight * CONFIG.named_boost + 0.75 + CONFIG.meaning_weight
    assert parts.total == pytest.approx(expected)


def test_a_paraphrase_outranks_a_memory_sharing_one_common_word() -> None:
    # The shape of issue 28's misses: "The user uses a standing desk" (shares "user", in 400 of 1000
    # memories) against "I stopped eating meat last year" (no word, close in meaning), both hop 0.
    attainable = 1.5 * (idf(400) + idf(1))
    distractor = fusion.Evidence(bm25=1.5 * idf(400) / 2.2, attainable=attainable, own=0.45)
    paraphrase = fusion.Evidence(own=0.6)
    closest = fusion.nearness(paraphrase.own, None, SPREAD)
    assert (
        fusion.fuse(paraphrase, CONFIG, closest, BGE).total
        > fusion.fuse(distractor, CONFIG, closest, BGE).total
    )


def test_found_by_names_the_walk_for_a_memory_no_seed_found() -> None:
    assert fusion.signals(keyword=True, meaning=False, walk=False) == ("keyword",)
    assert fusion.signals(keyword=True, meaning=True, walk=True) == ("keyword", "meaning", "walk")
    assert fusion.signals(keyword=False, meaning=False, walk=False) == ("walk",)


def test_the_query_is_embedded_without_the_user() -> None:
    assert meaning_of("Is the user vegetarian?") == "Is vegetarian?"
    assert meaning_of("What is the user's hobby?") == "What is hobby?"
    assert meaning_of("The User\u2019s car?") == "car?"
    assert meaning_of("the user") == "the user"  # nothing else left: the query as it is


def test_recalled_memories_carry_their_score_parts_and_signals_in_json_not_in_text() -> None:
    memory = RecalledMemory(
        id="mem_1",
        text="I stopped eating meat last year.",
        score=2.4,
        distance=0,
        anchorId=None,
        tags=[],
        why=ScoreParts(keyword=0.0, meaning=0.9333, walk=1.0, time=0.0, named=False),
        foundBy=["meaning"],
    )
    result = RecallResult.build([memory], ["mem_1"], [], truncated=False)
    assert result.model_dump()["memories"][0] == {
        "id": "mem_1",
        "text": "I stopped eating meat last year.",
        "score": 2.4,
        "distance": 0,
        "anchorId": None,
        "tags": [],
        "why": {"keyword": 0.0, "meaning": 0.9333, "walk": 1.0, "time": 0.0, "named": False},
        "foundBy": ["meaning"],
    }
    assert (
        render.recall_text(result).splitlines()[1]
        == "1. I stopped eating meat last year.  (score 2.40, hop 0)"
    )


def _content(text: str) -> set[str]:
    return {term for word in keywords(text) for term in analyze(word)}


def _own(text: str) -> set[str]:
    return set(analyze(text))


def test_the_hard_set_asks_in_other_words_among_traps_sharing_one_common_word() -> None:
    pairs, distractors, near = paraphrase_hard.PAIRS, paraphrase_hard.DISTRACTORS, paraphrase_hard.NEAR
    assert len(pairs) >= 40 and len(near) >= 15
    for memory, question in pairs:
        assert not _content(question) & _own(memory), question
        assert any(len(_content(question) & _own(d)) == 1 for d in distractors + near), question
    texts = paraphrase_hard.ordered()
    assert len(set(texts)) == len(pairs) + len(distractors) + len(near)
    assert texts == paraphrase_hard.ordered()  # the same order every run
