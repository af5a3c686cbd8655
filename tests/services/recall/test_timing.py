"""Time in remember and recall, without the database: what a memory is stored with and the time term."""

from __future__ import annotations

from datetime import UTC, datetime

from graphsvc.domain.models import RecallInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.domain.spans import parse_occurred
from graphsvc.services.index.times import stamp
from graphsvc.services.recall.timing import Reading, Times, overlaps, read, term


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
    scores = overlaps(may, map(Times.of, rows))
    assert scores["day"] == 1.0 and 0.08 < scores["year"] < 0.09 and abs(scores["mentions"] - 3 / 7) < 1e-9
    assert "outside" not in scores and "older version" not in scores


def test_a_question_that_asks_when_favours_the_memories_that_state_a_time() -> None:
    rows = [
        Times.of({"id": "states", "mentionFrom": [_day("2023-05-05")], "mentionTo": [_day("2023-05-06")]}),
        Times.of({"id": "silent", "mentionFrom": None, "mentionTo": None}),
    ]
    asks = Reading(None, None, None, "when did Ann swim", asks_when=True)
    assert term(asks, rows, 0.5) == {"states": 0.5}
    assert term(Reading(None, None, None, "did Ann swim"), rows, 0.5) == {}
    windowed = Reading(parse_occurred("2023-05-05").span, "query", "5 May", "when on 5 May", asks_when=True)
    assert term(windowed, rows, 0.5) == {"states": 1.0}  # the window's overlap, when larger


async def test_relative_time_words_leave_the_keywords_and_absolute_ones_stay() -> None:
    now = datetime(2023, 5, 8, tzinfo=UTC)

    async def keywords(query: str, config: RecallConfig | None = None) -> str | None:
        reading = await read(_NoExtent(), RecallInput(query=query, graph="g"), now, config or RecallConfig())
        return reading.keywords

    assert (await keywords("what did I do yesterday")).split() == ["what", "did", "I", "do"]
    assert (await keywords("chess two weeks ago")).split() == ["chess"]
    assert await keywords("chess in June 2022") == "chess in June 2022"
    # The configuration's other readings: every time word out, or none.
    assert await keywords("chess in June 2022", RecallConfig(time_words="all")) == "chess in"
    assert await keywords("chess two weeks ago", RecallConfig(time_words="keep")) == "chess two weeks ago"


async def test_a_configuration_without_time_windows_reads_no_window_and_no_when() -> None:
    req = RecallInput(query="when did I play chess last week", graph="g")
    now = datetime(2023, 5, 8, tzinfo=UTC)
    reading = await read(_NoExtent(), req, now, RecallConfig(time_windows=False))
    assert (reading.window, reading.asks_when, reading.keywords) == (None, False, req.query)
    assert (await read(_NoExtent(), req, now, RecallConfig())).window is not None


class _NoExtent:
    """The store a reading asks for the graph's time extent: an empty graph."""

    async def run(self, name: str, **params: object) -> list[dict[str, object]]:
        assert name == "memory/time_extent"
        return [{"start": None, "end": None}]


def test_only_a_window_of_at_most_the_narrow_days_gives_memories_an_inside_share() -> None:
    rows = [Times.of({"id": "day", "occurredFrom": _day("2023-05-05"), "occurredTo": _day("2023-05-06")})]
    day = Reading(parse_occurred("2023-05-05").span, "query", "5 May", "swim on 5 May")
    month = Reading(parse_occurred("2023-05").span, "query", "May", "swim in May")
    assert day.inside(rows, 7) == {"day": 1.0}
    assert month.inside(rows, 7) == {} and month.inside(rows, 31) == {"day": 1.0}
    assert day.inside(rows, 0) == {}  # narrow_days 0: no window is narrow
    assert Reading(None, None, None, "swim").inside(rows, 7) == {}
