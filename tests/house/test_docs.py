"""The README is a front door and the docs build: mkdocs strict fails on a broken link or anchor, and
docs/hooks/repo_links.py on a link to a repository file that is not there. No Neo4j needed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).parent / "mkdocs"
LINK = re.compile(r"\]\(([^)\s#]+)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [str(MKDOCS), "build", "--strict", "-f", str(config), "-d", str(site)]
    return subprocess.run(command, cwd=config.parent, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.processes
def test_the_docs_build_strictly_with_every_link_and_anchor_resolved(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    # The files the pages link outside docs/ are in the site, the benchmark figures as a page.
    assert (tmp_path / "site" / "repo" / "bench" / "index.html").is_file()
    assert (tmp_path / "site" / "repo" / "contracts" / "conformance" / "pass-v1.json").is_file()


def _one_page_site(tmp_path: Path, page: str) -> Path:
    """A copy of the real config (its hook and validation) over a docs/ of one page, in a repository
    that holds one file beside docs/."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.pop("nav")
    config["hooks"] = [str(ROOT / "docs" / "hooks" / "repo_links.py")]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n## A section\n\n" + page + "\n")
    (tmp_path / "notes.txt").write_text("a file of the repository\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return tmp_path / "mkdocs.yml"


@pytest.mark.processes
@pytest.mark.parametrize(
    "page",
    [
        "[a page that is not there](missing.md)",
        "[a heading that is not there](#no-such-section)",
        "[a repository file that is not there](../missing.txt)",
        "[a repository folder](../docs/../)",
    ],
)
def test_a_broken_link_fails_the_docs_build(tmp_path: Path, page: str) -> None:
    assert build(_one_page_site(tmp_path, page), tmp_path / "site").returncode != 0


@pytest.mark.processes
def test_a_link_to_a_repository_file_builds_and_ships_the_file(tmp_path: Path) -> None:
    config = _one_page_site(tmp_path, "[notes](../notes.txt) and [a section](#a-section)")
    done = build(config, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "repo" / "notes.txt").read_text() == "a file of the repository\n"
    assert 'href="repo/notes.txt"' in (tmp_path / "site" / "index.html").read_text()


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_is_a_front_door_whose_run_and_test_commands_are_ci_s() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert "```sh\n./run\n```" in _section(readme, "Run it")
    assert "```sh\n./test\n```" in _section(readme, "Test it")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "./test" in ci, "CI runs the test command the README gives"
    for target in LINK.findall(readme):
        assert (ROOT / target).exists(), target
