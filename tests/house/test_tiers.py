"""The tiers (tests/tiers.py) on a suite of their own, run in this process by pytester: a test is unit
when its fixtures reach no stack fixture, a unit test that starts a process or sets up the stack fails,
and in CI a skip fails."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.processes  # the suite it runs starts one (and this process's guard would refuse it)
CONFTEST = """
import pytest
from tests.tiers import (
    pytest_collection_modifyitems,
    pytest_fixture_setup,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
)

@pytest.fixture(scope="session")
def neo4j_target():
    return "a server"

@pytest.fixture
def store(neo4j_target):
    return neo4j_target
"""

SUITE = """
import subprocess
import sys

import pytest

def test_pure():
    assert 1 + 1 == 2

def test_starting_a_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.processes
def test_starting_a_process_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_reaching_for_the_stack(request):
    request.getfixturevalue("neo4j_target")

def test_on_the_stack(store):  # after the one above: a stack fixture already set up is not set up again
    assert store == "a server"

def test_skipping():
    pytest.skip("for the CI check")
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n  unit: u\n  processes: p\n"
    )
    return pytester


def test_the_unit_tier_is_read_from_the_fixture_closure_and_the_processes_mark(
    suite: pytest.Pytester,
) -> None:
    listed = suite.runpytest_inprocess("-m", "unit", "--collect-only", "-q", "-p", "no:cacheprovider")
    unit = {line.split("::")[1] for line in listed.outlines if "::" in line}
    assert unit == {"test_pure", "test_starting_a_process", "test_reaching_for_the_stack", "test_skipping"}


def test_a_unit_test_that_starts_a_process_or_sets_up_the_stack_fails(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest_inprocess("-p", "no:cacheprovider", "-ra")
    result.assert_outcomes(passed=3, failed=2, skipped=1)
    failed = {line.split("::")[1].split()[0] for line in result.outlines if line.startswith("FAILED")}
    assert failed == {"test_starting_a_process", "test_reaching_for_the_stack"}
    result.stdout.fnmatch_lines(
        ["*StackInUnitTest*starts a process*", "*StackInUnitTest*sets up neo4j_target*"]
    )


def test_in_ci_a_skipped_test_fails(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest_inprocess("-p", "no:cacheprovider", "-k", "skipping")
    result.assert_outcomes(failed=1)
