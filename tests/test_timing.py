"""Time in remember and recall, without the database: what a memory is stored with and the time term."""

from __future__ import annotations

from datetime import UTC, datetime

from graphsvc.domain.models import RecallInput
from graphsvc.domain.when import parse_occurred
from graphsvc.services.recall.timing import WHEN_SCORE, Reading, overlaps, read, stamp, term


def _day(value: str) -> int:
    return parse_occurred(value).span.start


def test_a_memory_is_stored_with_its_own_time_the_times_it_mentions_and_their_hull() -> None:
    stored = stamp(parse_occurred("2023-05-08"), datetime(2026, 1, 1, tzinfo=UTC), "I went last Friday")
    assert (stored["occurredFrom"], stored["occurredTo"]) == (_day("2023-05-08"), _day("2023-05-09"))
    assert (stored["mentionFrom"], stored["mentionTo"]) == ([_day("2023-05-05")], [_day("2023-05-06")])
    assert (stored["timeFrom"], stored["timeTo"]) == (_day("2023-05-05"), _day("2023-05-09"))


def test_without_occurred_at_a_memorys_time_is_when_it_was_remembered() -> None:
    stored = stamp(None, datetime(2023, 5, 8, 13, 56, tzinfo=UTC), "nothing about time")
    assert stored["occurredTo"] - stored["occurredFrom"] == 1 and "mentionFrom" not in stored
    assert stored["occurredFrom"] == parse_occurred("2023-05-08T13:56:00Z").span.start


def test_the_time_term_is_the_largest_share_of_one_of_a_memorys_times_inside_the_window() -> None:
    may = parse_occurred("2023-05").span
    rows = [
        {"id": "day", "occurredFrom": _day("2023-05-08"), "occurredTo": _day("2023-05-09")},
        {"id": "year", "occurredFrom": _day("2023-01-01"), "occurredTo": _day("2024-01-01")},
        {
            "id": "mentions",
            "occurredFrom": _day("2023-06-02"),
            "occurredTo": _day("2023-06-03"),
            "mentionFrom": [_day("2023-05-29")],
            "mentionTo": [_day("2023-06-05")],
        },
        {"id": "outside", "occurredFrom": _day("2023-06-08"), "occurredTo": _day("2023-06-09")},
        {
            "id": "older version",
            "occurredFrom": None,
            "occurredTo": None,
            "mentionFrom": None,
            "mentionTo": None,
        },
    ]
    scores = overlaps(may, rows)
    assert scores["day"] == 1.0 and 0.08 < scores["year"] < 0.09 and abs(scores["mentions"] - 3 / 7) < 1e-9
    assert "outside" not in scores and "older version" not in scores


def test_a_question_that_asks_when_favours_the_memories_that_state_a_time() -> None:
    rows = [
        {"id": "states", "mentionFrom": [_day("2023-05-05")], "mentionTo": [_day("2023-05-06")]},
        {"id": "silent", "mentionFrom": None, "mentionTo": None},
    ]
    asks = Reading(None, None, None, "when did Ann swim", asks_when=True)
    assert term(asks, rows) == {"states": WHEN_SCORE}
    assert term(Reading(None, None, None, "did Ann swim"), rows) == {}
    windowed = Reading(parse_occurred("2023-05-05").span, "query", "5 May", "when on 5 May", asks_when=True)
    assert term(windowed, rows) == {"states": 1.0}  # the window's overlap, when larger


async def test_relative_time_words_leave_the_keywords_and_absolute_ones_stay() -> None:
    now = datetime(2023, 5, 8, tzinfo=UTC)

    async def keywords(query: str) -> str | None:
        return (await read(_NoExtent(), RecallInput(query=query, graph="g"), now)).keywords

    assert (await keywords("what did I do yesterday")).split() == ["what", "did", "I", "do"]
    assert (await keywords("chess two weeks ago")).split() == ["chess"]
    assert await keywords("chess in June 2022") == "chess in June 2022"


class _NoExtent:
    """The store a reading asks for the graph's time extent: an empty graph."""

    async def run(self, name: str, **params: object) -> list[dict[str, object]]:
        assert name == "memory/time_extent"
        return [{"start": None, "end": None}]
