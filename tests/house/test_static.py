"""Lint and types are part of the suite: ruff over the code, pyright strict over graphsvc/
(its settings in pyproject.toml). Neither needs Neo4j or the chain."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_and_the_code_is_formatted() -> None:
    lint = run(str(BIN / "ruff"), "check", "graphsvc", "tests", "bench")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = run(str(BIN / "ruff"), "format", "--check", "graphsvc", "tests", "bench")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_pyright_strict_finds_no_error_in_graphsvc() -> None:
    typed = run(str(BIN / "pyright"), "--project", ".")
    assert typed.returncode == 0, typed.stdout[-6000:] + typed.stderr[-2000:]
