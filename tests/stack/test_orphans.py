"""graphsvc killed outright (`kill -9`) leaves no process of its own behind: the embedding and extraction
workers' processes and multiprocessing's resource tracker end with it (services/worker.Child)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from graphsvc.config import Settings
from tests.conftest import REPO, free_port

pytestmark = pytest.mark.neo4j
START_WITHIN_S = 180  # a cold server on a loaded machine
GONE_WITHIN_S = 10  # "within a few seconds"


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every process now: pid -> (parent pid, state, command line)."""
    found: dict[int, tuple[int, str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        state, parent = stat.rpartition(")")[2].split()[:2]
        found[int(entry.name)] = (int(parent), state, command)
    return found


def _descendants(root: int) -> dict[int, str]:
    """The processes under `root` (children, theirs, ...): pid -> command line."""
    processes, frontier = _processes(), [root]
    tree: dict[int, str] = {}
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _, command) in processes.items():
            if ppid == parent and pid not in tree:
                tree[pid] = command
                frontier.append(pid)
    return tree


def _alive(pids: dict[int, str]) -> dict[int, str]:
    """Those of `pids` still running as the same command (a zombie has ended; its parent reaps it)."""
    now = _processes()
    return {
        pid: command
        for pid, command in pids.items()
        if pid in now and now[pid][2] == command and now[pid][1] not in ("Z", "X")
    }


def _environment(settings: Settings, port: int) -> dict[str, str]:
    neo = settings.neo4j
    outside = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHSVC_", "MONAD_", "ANCHOR_"))}
    return outside | {
        "GRAPHSVC_NEO4J_URI": neo.uri,
        "GRAPHSVC_NEO4J_USER": neo.user,
        "GRAPHSVC_NEO4J_PASSWORD": neo.password.get_secret_value(),
        "GRAPHSVC_HTTP_PORT": str(port),
        "GRAPHSVC_AUTH_REQUIRED": "false",
        "GRAPHSVC_EMBEDDINGS_ENABLED": "true",
        "GRAPHSVC_EMBEDDINGS_INTERVAL_S": "0.2",
        "GRAPHSVC_EXTRACTION_ENABLED": "true",
        "GRAPHSVC_EXTRACTION_INTERVAL_S": "0.2",
        "GRAPHSVC_WRITE_BUDGET_S": "0",  # the memory goes to the workers (a write would embed it itself)
    }


def _until(done: Callable[[], object], within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_graphsvc_killed_outright_leaves_no_process_of_its_own(
    settings: Settings, graph: str, tmp_path: Path
) -> None:
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "graphsvc.cli", "serve"]
    server = subprocess.Popen(command, cwd=REPO, env=_environment(settings, port), stdout=log, stderr=log)
    try:
        url = f"http://127.0.0.1:{port}"

        def answers() -> bool:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                return httpx.get(f"{url}/health", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        _until(answers, START_WITHIN_S, "graphsvc did not start")
        made = httpx.post(
            f"{url}/v1/memories", json={"text": "Alice met Bob in Lisbon", "graph": graph}, timeout=60
        )
        assert made.status_code == 201, made.text
        # each worker claims it and starts its process (and the resource tracker with the first)
        _until(
            lambda: sum("spawn_main" in c for c in _descendants(server.pid).values()) == 2,
            START_WITHIN_S,
            "the workers' processes did not start",
        )
        children = _descendants(server.pid)
        assert any("resource_tracker" in c for c in children.values()), children
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
        _until(lambda: not _alive(children), GONE_WITHIN_S, f"still running: {_alive(children)}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)
        log.close()
