"""The time resolver (domain/when.py): occurredAt values and the time expressions of a text, against
fixed reference dates."""

from __future__ import annotations

import time

import pytest

from graphsvc.domain.spans import Span, parse_occurred
from graphsvc.domain.when import Reference, asks_when, mentions, window_of, without

MONDAY = Reference.of(parse_occurred("2023-05-08T13:56:00Z"))  # 8 May 2023 was a Monday
FRIDAY = Reference.of(parse_occurred("2023-05-12"))


def days(text: str, ref: Reference = MONDAY) -> list[tuple[str, str, str]]:
    """Each expression found with its first and last day (inclusive)."""
    out: list[tuple[str, str, str]] = []
    for m in mentions(text, ref):
        first, end = m.span.iso()
        last = Span(m.span.end - 1, m.span.end).iso()[0]
        out.append((m.text, first[:10], last[:10]))
        assert end > first
    return out


def one(text: str, ref: Reference = MONDAY) -> tuple[str, str]:
    [(_, first, last)] = days(text, ref)
    return first, last


# ---- occurredAt -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text", "precision", "first", "end"),
    [
        ("2023", "2023", "year", "2023-01-01", "2024-01-01"),
        ("2023-02", "2023-02", "month", "2023-02-01", "2023-03-01"),
        ("2024-02-29", "2024-02-29", "day", "2024-02-29", "2024-03-01"),
        ("2023-05-08T13:56:00", "2023-05-08T13:56:00.000Z", "instant", "2023-05-08", "2023-05-08"),
        ("2023-05-08T15:56:00+02:00", "2023-05-08T13:56:00.000Z", "instant", "2023-05-08", "2023-05-08"),
        ("2023-12", "2023-12", "month", "2023-12-01", "2024-01-01"),
        ("9999", "9999", "year", "9999-01-01", "10000-01-01"),
    ],
)
def test_occurred_at_keeps_its_precision_and_spans_it(
    value: str, text: str, precision: str, first: str, end: str
) -> None:
    occurred = parse_occurred(value)
    assert (occurred.text, occurred.precision) == (text, precision)
    start, stop = occurred.span.iso()
    assert start[:10] == first and stop[: len(end)] == end


def test_an_instant_is_one_millisecond_long() -> None:
    span = parse_occurred("2023-05-08T13:56:00.123Z").span
    assert span.end - span.start == 1


@pytest.mark.parametrize(
    "value",
    ["yesterday", "2023-13", "2023-02-29", "2023-5-7", "999", "0999-01-01", "12023", "2023-05-08T25:00", ""],
)
def test_an_occurred_at_that_is_not_a_date_or_out_of_range_is_refused(value: str) -> None:
    with pytest.raises(ValueError):
        parse_occurred(value)


# ---- relative expressions -------------------------------------------------------------------------


def test_last_friday_said_on_a_monday_is_three_days_before() -> None:
    assert days("Yes, I went last Friday") == [("last Friday", "2023-05-05", "2023-05-05")]


def test_last_friday_said_on_a_friday_is_a_week_before() -> None:
    assert one("last Friday", FRIDAY) == ("2023-05-05", "2023-05-05")


def test_a_bare_weekday_is_the_latest_on_or_before_the_day() -> None:
    assert one("on Friday", FRIDAY) == ("2023-05-12", "2023-05-12")
    assert one("on Friday") == ("2023-05-05", "2023-05-05")


def test_next_and_this_weekday() -> None:
    assert one("next Friday", FRIDAY) == ("2023-05-19", "2023-05-19")
    assert one("this Friday") == ("2023-05-12", "2023-05-12")


def test_yesterday_today_tomorrow() -> None:
    assert days("yesterday, today and tomorrow") == [
        ("yesterday", "2023-05-07", "2023-05-07"),
        ("today", "2023-05-08", "2023-05-08"),
        ("tomorrow", "2023-05-09", "2023-05-09"),
    ]


def test_yesterday_crosses_a_month_and_a_year_boundary() -> None:
    assert one("yesterday", Reference.of(parse_occurred("2023-03-01"))) == ("2023-02-28", "2023-02-28")
    assert one("yesterday", Reference.of(parse_occurred("2024-03-01"))) == ("2024-02-29", "2024-02-29")
    assert one("yesterday", Reference.of(parse_occurred("2024-01-01"))) == ("2023-12-31", "2023-12-31")


def test_weeks_run_monday_to_sunday() -> None:
    assert one("last week") == ("2023-05-01", "2023-05-07")
    assert one("this week", FRIDAY) == ("2023-05-08", "2023-05-14")
    assert one("the past week", FRIDAY) == ("2023-05-06", "2023-05-12")


def test_last_weekend_on_a_weekday_is_the_one_just_gone_and_on_a_sunday_the_one_before() -> None:
    assert one("last weekend") == ("2023-05-06", "2023-05-07")
    assert one("last weekend", Reference.of(parse_occurred("2023-05-14"))) == ("2023-05-06", "2023-05-07")


def test_months_and_years_relative_to_the_reference() -> None:
    assert one("last month") == ("2023-04-01", "2023-04-30")
    assert one("this month") == ("2023-05-01", "2023-05-31")
    assert one("last month", Reference.of(parse_occurred("2023-01-15"))) == ("2022-12-01", "2022-12-31")
    assert one("last year") == ("2022-01-01", "2022-12-31")


def test_n_units_ago() -> None:
    assert one("three days ago") == ("2023-05-05", "2023-05-05")
    assert one("two weeks ago") == ("2023-04-21", "2023-04-27")
    assert one("2 months ago") == ("2023-03-01", "2023-03-31")
    assert one("four years ago") == ("2019-01-01", "2019-12-31")


def test_a_few_days_ago_is_a_wider_span_than_three_days_ago() -> None:
    first, last = one("a few days ago")
    assert first < "2023-05-05" and last > "2023-05-05" and last < "2023-05-08"


def test_relative_days_need_a_reference_known_to_the_day() -> None:
    month_only = Reference.of(parse_occurred("2023-05"))
    assert days("yesterday, last Friday", month_only) == []
    assert one("last year", month_only) == ("2022-01-01", "2022-12-31")


# ---- absolute expressions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["on 7 May 2023", "7th of May, 2023", "May 7, 2023", "2023-05-07", "05/07/2023", "on 7 May", "May 7"],
)
def test_one_day_many_spellings(text: str) -> None:
    assert one(text) == ("2023-05-07", "2023-05-07")


def test_a_month_with_its_year_and_a_year() -> None:
    assert one("in March 2023") == ("2023-03-01", "2023-03-31")
    assert one("in 2022") == ("2022-01-01", "2022-12-31")
    assert one("2023-02") == ("2023-02-01", "2023-02-28")


def test_in_march_said_in_january_is_last_years_march() -> None:
    assert one("in March", Reference.of(parse_occurred("2024-01-10"))) == ("2023-03-01", "2023-03-31")
    assert one("in March", Reference.of(parse_occurred("2024-03-10"))) == ("2024-03-01", "2024-03-31")


def test_next_march_said_in_january_is_this_years_march() -> None:
    assert one("next March", Reference.of(parse_occurred("2024-01-10"))) == ("2024-03-01", "2024-03-31")


def test_a_yearless_date_prefers_the_graphs_own_times() -> None:
    extent = parse_occurred("2021").span
    ref = Reference.of(parse_occurred("2026-12-05"), extent)
    assert one("in June", ref) == ("2021-06-01", "2021-06-30")
    assert one("in June", Reference.of(parse_occurred("2026-12-05"))) == ("2026-06-01", "2026-06-30")


def test_29_february_without_a_year_is_the_latest_leap_day() -> None:
    assert one("on 29 February") == ("2020-02-29", "2020-02-29")


def test_a_date_that_does_not_exist_is_no_time_and_an_impossible_day_leaves_its_month() -> None:
    assert days("2023-13-01 and 2023-02-30") == []
    assert one("on 30 February 2023") == ("2023-02-01", "2023-02-28")


def test_an_ambiguous_numeric_date_is_month_then_day_unless_the_first_is_over_12() -> None:
    assert one("03/04/2023") == ("2023-03-04", "2023-03-04")
    assert one("13/04/2023") == ("2023-04-13", "2023-04-13")


@pytest.mark.parametrize(
    "text",
    [
        "You may go",
        "I paid $2023 at 10:30",
        "in the 1990s",
        "she marched on",
        "call 555-2023-11",
        "on Fridays",
    ],
)
def test_words_and_numbers_that_are_not_times(text: str) -> None:
    assert days(text) == []


# ---- offsets --------------------------------------------------------------------------------------


def test_the_week_before_a_date() -> None:
    assert days("the week before 9 June 2023") == [
        ("the week before 9 June 2023", "2023-06-02", "2023-06-08")
    ]


def test_the_friday_before_and_the_weekend_before_a_date() -> None:
    assert one("on the Friday before 14 June 2023") == ("2023-06-09", "2023-06-09")
    assert one("last weekend before April 10, 2023") == ("2023-04-08", "2023-04-09")
    assert one("the day after 28 February 2024") == ("2024-02-29", "2024-02-29")
    assert one("the month before May 2023") == ("2023-04-01", "2023-04-30")


# ---- the question's window ------------------------------------------------------------------------


def test_a_question_window_is_the_hull_of_its_times_and_its_keywords_lose_them() -> None:
    question = "What did Melanie paint between March 2023 and 7 May 2023?"
    found = mentions(question, MONDAY)
    window = window_of(found)
    assert (
        window is not None and window.iso()[0][:10] == "2023-03-01" and window.iso()[1][:10] == "2023-05-08"
    )
    assert without(question, found) == "What did Melanie paint between and ?"
    assert window_of([]) is None


def test_overlap_is_the_fraction_of_a_span_inside_the_window() -> None:
    may = parse_occurred("2023-05").span
    assert parse_occurred("2023-05-07").span.overlap(may) == 1.0
    assert parse_occurred("2023-06-07").span.overlap(may) == 0.0
    assert 0.08 < parse_occurred("2023").span.overlap(may) < 0.09


def test_resolving_a_turn_costs_well_under_a_millisecond() -> None:
    text = "Melanie: Yes, we went camping with the kids last Friday, two weeks after the trip in May!"
    started, rounds = time.perf_counter(), 200
    for _ in range(rounds):
        mentions(text, MONDAY)
    assert (time.perf_counter() - started) / rounds < 0.002


def test_relative_expressions_are_told_from_absolute_ones() -> None:
    said = MONDAY
    text = "yesterday, last Friday, two weeks ago, this month, in June, 7 May 2023, 2022"
    assert [(m.text, m.relative) for m in mentions(text, said)] == [
        ("yesterday", True),
        ("last Friday", True),
        ("two weeks ago", True),
        ("this month", True),
        ("in June", False),
        ("7 May 2023", False),
        ("2022", False),
    ]


def test_a_question_that_asks_for_a_time_is_recognised() -> None:
    asked = ["When did Ann move?", "what year was it", "How long ago did we meet", "Which month?"]
    assert all(asks_when(q) for q in asked)
    assert not any(asks_when(q) for q in ["Where did Ann move?", "What did we do when it rained?"])
