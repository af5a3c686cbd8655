"""The two tiers (docs/testing.md): a test is `unit` when nothing it asks for reaches Neo4j, the chain
or Chromium and neither it nor its module is marked `processes`; every other test is the stack tier's.

The selection is read from each test's fixture closure, not kept by hand, and it is checked while the
tests run: a unit test that starts a process (Neo4j, anvil, Docker, Chromium, a tool, the CLI) or sets
up one of the stack's fixtures fails, in every run. So `./test unit` cannot hold a test that needs the
stack, and `./test unit` + `./test stack` is `./test`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

# The session's stack: every fixture that needs Neo4j, the chain or Chromium reaches one of these.
STACK_FIXTURES = frozenset({"neo4j_target", "chain_target", "chromium"})
UNIT = "unit"
PROCESSES = "processes"


class StackInUnitTest(AssertionError):
    """A test of the unit tier reached for the stack or started a process."""


def is_unit(item: pytest.Item) -> bool:
    closure = set(getattr(item, "fixturenames", ()))
    return not closure & STACK_FIXTURES and item.get_closest_marker(PROCESSES) is None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_unit(item):
            item.add_marker(UNIT)


_running_unit: list[str] = []  # the unit test being run, if one is


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker(UNIT) is None:
        yield
        return
    _running_unit.append(item.nodeid)
    original = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def refused(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        raise StackInUnitTest(
            f"{item.nodeid} is in the unit tier but starts a process ({args!r}): "
            f"mark its module `pytestmark = pytest.mark.{PROCESSES}` (docs/testing.md)"
        )

    subprocess.Popen._execute_child = refused  # type: ignore[attr-defined]
    try:
        yield
    finally:
        subprocess.Popen._execute_child = original  # type: ignore[attr-defined]
        _running_unit.clear()


_stack_set_up: list[str] = []  # what the unit test being run set up of the stack


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> None:
    """Noted, not refused here (pytest caches no exception raised before its own hook): the test's
    report fails. In a unit-tier run the stack's process is refused too, as it starts."""
    if _running_unit and fixturedef.argname in STACK_FIXTURES:
        _stack_set_up.append(f"{_running_unit[0]} is in the unit tier but sets up {fixturedef.argname}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    """A unit test that set up the stack fails; in CI (CI=true) nothing skips: a skipped test fails,
    whatever skipped it."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if _stack_set_up and not report.failed:
        report.outcome = "failed"
        report.longrepr = f"{StackInUnitTest.__name__}: " + "; ".join(_stack_set_up)
    _stack_set_up.clear()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} skipped in CI, where nothing may skip: {report.longrepr}"
