"""An installed wheel works without the source tree: it carries cypher/ and the contract artifact."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from graphsvc.chain.anchor import load_artifact
from graphsvc.store.cypher import load

pytestmark = pytest.mark.processes
REPO = Path(__file__).resolve().parents[2]
CHECK = """
import json, sys
import graphsvc
from graphsvc.chain.anchor import load_artifact
from graphsvc.store.cypher import load
assert graphsvc.__file__.startswith(sys.prefix), graphsvc.__file__
print(json.dumps({"statements": sorted(load()), "bytecode": load_artifact()["bytecode"]}))
"""


def _source(into: Path) -> Path:
    """The files a wheel is built from, copied so the build writes nothing into the repository."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, into / name)
    for folder in ("graphsvc", "cypher", "contracts"):
        ignore = shutil.ignore_patterns("node_modules", "__pycache__")
        shutil.copytree(REPO / folder, into / folder, ignore=ignore)
    return into


def _run(*command: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_installed_wheel_runs_and_loads_every_statement_and_the_artifact(tmp_path: Path) -> None:
    pip = (sys.executable, "-m", "pip")
    source = _source(tmp_path / "source")
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", source, cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("graphsvc-*.whl")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(*pip, "--python", python, "install", "--no-deps", "--no-index", wheel, cwd=tmp_path)
    # Its dependencies come from this environment (graphsvc itself is an editable finder here, not on
    # this path, so the fresh venv imports only its own copy).
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path)
    (Path(site.strip()) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    assert "serve" in _run(venv / "bin" / "graphsvc", "--help", cwd=tmp_path)
    installed = json.loads(_run(python, "-c", CHECK, cwd=tmp_path))
    assert installed == {"statements": sorted(load()), "bytecode": load_artifact()["bytecode"]}
