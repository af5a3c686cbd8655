"""The README's run command on the embedded defaults: local Neo4j (Maven Central), local chain, graphsvc."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from graphsvc.browser import neo4j_settings
from graphsvc.extractor.rules import VERSION as EXTRACTOR
from tests.conftest import REPO, free_port

pytestmark = pytest.mark.neo4j
START_TIMEOUT_S = 240
SLOW_S = 60  # a fresh server's first queries compile for seconds on a loaded machine


def _read_urls(process: subprocess.Popen[str]) -> tuple[dict[str, str], str]:
    urls: dict[str, str] = {}
    token = ""
    deadline = time.monotonic() + START_TIMEOUT_S
    assert process.stdout is not None
    while "Neo4j Browser" not in urls:
        line = process.stdout.readline()
        if not line:
            pytest.fail(f"graphsvc up exited ({process.wait()}) before printing its URLs")
        if time.monotonic() > deadline:
            pytest.fail("graphsvc up did not print its URLs in time")
        match = re.match(r"\s+(.+?)\s{2,}(http\S+)", line)
        if match:
            urls[match.group(1)] = match.group(2)
        token = re.search(r"Bearer (gsk_\S+)", line).group(1) if "Bearer gsk_" in line else token
    return urls, token


@pytest.mark.processes
def test_graphsvc_up_starts_everything_prints_working_urls_and_sigterm_stops_it_all(tmp_path: Path) -> None:
    bolt, browser, http, rpc = free_port(), free_port(), free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")} | {
        "GRAPHSVC_HTTP_PORT": str(http)
    }
    command = [
        sys.executable,
        "-m",
        "graphsvc.cli",
        "up",
        "--home",
        str(tmp_path),
        "--bolt-port",
        str(bolt),
        "--http-port",
        str(browser),
        "--chain-port",
        str(rpc),
    ]
    env = {k: v for k, v in env.items() if k not in ("MONAD_RPC_URL", "ANCHOR_CONTRACT")}
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True) as process:
        try:
            _check_stack(process, http, browser)
            _check_cli_reaches_the_stack(tmp_path, env)
        finally:
            process.send_signal(signal.SIGTERM)
            exit_code = process.wait(timeout=90)
    assert exit_code == 0
    assert not (tmp_path / "neo4j" / "neo4j.pid").exists()
    assert not (tmp_path / "chain" / "anvil.pid").exists()
    for stopped in (
        f"http://127.0.0.1:{browser}/",
        f"http://127.0.0.1:{rpc}/",
        f"http://127.0.0.1:{http}/health",
    ):
        with pytest.raises(httpx.ConnectError):
            httpx.get(stopped)


def _check_stack(process: subprocess.Popen[str], http: int, browser: int) -> None:
    urls, token = _read_urls(process)
    bearer = {"authorization": f"Bearer {token}"}
    assert urls["MCP (streamable HTTP)"] == f"http://127.0.0.1:{http}/mcp"
    assert urls["MCP (SSE)"] == f"http://127.0.0.1:{http}/sse"
    health = httpx.get(timeout=SLOW_S, url=urls["Health"]).json()
    workers = health.pop("workers")
    expected = {"status": "ok", "neo4j": True, "chain": True, "embeddings": "ok", "down": [], "behind": []}
    assert health == {
        **expected,
        "embeddingsModel": "bge-small-en-v1.5",
        "extraction": "ok",
        "extractor": EXTRACTOR,
        "extractionProblem": None,
    }
    assert {"term_stats", "reconcile", "embeddings", "extraction"} <= set(workers)
    assert httpx.get(timeout=SLOW_S, url=urls["REST API docs"]).status_code == 200
    assert "graphsvc_http_requests_total" in httpx.get(timeout=SLOW_S, url=urls["Metrics (Prometheus)"]).text
    assert "graphsvcVerify" in httpx.get(timeout=SLOW_S, url=urls["Verify a proof bundle"]).text
    assert "Neo4j Browser" in httpx.get(timeout=SLOW_S, url=f"http://127.0.0.1:{browser}/browser/").text
    assert httpx.get(timeout=SLOW_S, url=urls["Browser guide"]).status_code == 200
    assert _browser_settings(browser) == neo4j_settings(f"http://127.0.0.1:{http}")
    refused = httpx.post(
        timeout=SLOW_S, url=f"http://127.0.0.1:{http}/v1/memories", json={"text": "no token"}
    )
    assert refused.status_code == 401
    stored = httpx.post(
        timeout=SLOW_S,
        url=f"http://127.0.0.1:{http}/v1/memories",
        json={"text": "run command works"},
        headers=bearer,
    )
    assert stored.status_code == 201
    anchored = httpx.post(
        timeout=SLOW_S, url=f"http://127.0.0.1:{http}/v1/anchor", json={}, headers=bearer
    ).json()
    assert (anchored["status"], anchored["count"]) == ("anchored", 1)
    verified = httpx.get(
        timeout=SLOW_S,
        url=f"http://127.0.0.1:{http}/v1/memories/{stored.json()['id']}/verify",
        headers=bearer,
    )
    assert verified.json()["verified"] is True  # anchor_now answered once the batch was final
    assert httpx.get(timeout=SLOW_S, url=urls["MCP (SSE)"]).status_code == 401  # auth is on: the dev token
    with httpx.stream("GET", urls["MCP (SSE)"], timeout=10, headers=bearer) as sse:
        assert sse.status_code == 200
        assert next(sse.iter_lines()).startswith("event: endpoint")


def _check_cli_reaches_the_stack(home: Path, env: dict[str, str]) -> None:
    """The other commands find the stack `up` runs with no exports (its stack file in --home)."""

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "graphsvc.cli", *args, "--home", str(home)]
        return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    (home / "one.jsonl").write_text('{"text": "imported through the CLI"}\n')
    stored = cli("import", str(home / "one.jsonl"))
    assert stored.returncode == 0, stored.stderr
    anchored = cli("anchor")
    assert anchored.returncode == 0 and anchored.stdout.startswith("Anchored 1 memory."), anchored.stderr
    assert "(this chain has no block explorer)" in anchored.stdout
    memory_id = json.loads(stored.stdout)["id"]
    verified = cli("verify", memory_id)
    assert verified.returncode == 0 and verified.stdout.startswith("✓ Verified"), verified.stdout


def _browser_settings(http_port: int) -> dict[str, str]:
    """The browser.* settings Neo4j gives Browser (dbms.clientConfig, as Browser reads them)."""
    answer = httpx.post(
        f"http://127.0.0.1:{http_port}/db/neo4j/tx/commit",
        auth=("neo4j", "graphsvc-dev"),
        json={"statements": [{"statement": "CALL dbms.clientConfig() YIELD name, value RETURN name, value"}]},
    ).json()
    rows = [row["row"] for row in answer["results"][0]["data"]]
    return {name: value for name, value in rows if name in neo4j_settings("http://x")}


def test_a_busy_port_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    import socket

    from graphsvc.devstack import chain as local_chain
    from graphsvc.devstack import neo4j as local_neo4j

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(local_chain.ChainError, match="in use"):
            local_chain.start(tmp_path / "chain", port=port)
        with pytest.raises(local_neo4j.DevstackError, match="in use"):
            local_neo4j.start(
                tmp_path / "neo4j", bolt_port=port, http_port=free_port(), password="long-enough"
            )


@pytest.mark.processes
def test_the_local_chain_starts_again_at_once_on_the_port_it_just_left(tmp_path: Path) -> None:
    from graphsvc.devstack import chain as local_chain

    port = free_port()
    node = local_chain.start(tmp_path, port=port)
    local_chain._rpc(node.rpc_url, "eth_chainId")  # anvil closes this connection: TIME_WAIT on its port
    local_chain.stop(tmp_path)
    again = local_chain.start(tmp_path, port=port)
    try:
        assert local_chain._rpc(again.rpc_url, "eth_chainId") == hex(local_chain.DEV_CHAIN_ID)
    finally:
        local_chain.stop(tmp_path)


def _fake_java(home: Path, version: str) -> Path:
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home


def test_a_java_older_than_21_is_refused_naming_what_was_found(tmp_path: Path) -> None:
    from graphsvc.devstack import neo4j as local_neo4j

    old = _fake_java(tmp_path / "jdk-17", "17.0.15")
    with pytest.raises(local_neo4j.DevstackError, match=r"needs Java 21 or later.*jdk-17 \(Java 17\)"):
        local_neo4j.find_java(old)
    new = _fake_java(tmp_path / "jdk-25", "25.0.3")
    assert local_neo4j.find_java(new) == new / "bin" / "java"


def test_data_an_older_neo4j_wrote_is_copied_once_before_the_in_place_upgrade(tmp_path: Path) -> None:
    """The embedded Neo4j upgrades a home written by 5.26 when it opens it, one way: a copy stays."""
    from graphsvc.devstack import neo4j as local_neo4j

    assert local_neo4j.keep_before_upgrade(tmp_path) is None  # a fresh home: nothing to keep
    store = tmp_path / "data" / "databases" / "neo4j"
    store.mkdir(parents=True)
    (store / "neostore").write_text("5.26")
    copy = local_neo4j.keep_before_upgrade(tmp_path)  # no version recorded: written by 5.26.31
    assert copy == tmp_path / "data-5.26.31"
    assert (copy / "databases" / "neo4j" / "neostore").read_text() == "5.26"
    (store / "neostore").write_text("upgraded")
    assert local_neo4j.keep_before_upgrade(tmp_path) == copy  # once: the first copy is kept
    assert (copy / "databases" / "neo4j" / "neostore").read_text() == "5.26"
    (tmp_path / local_neo4j.VERSION_FILE).write_text(local_neo4j.NEO4J_VERSION)
    assert local_neo4j.keep_before_upgrade(tmp_path) is None
    (tmp_path / local_neo4j.VERSION_FILE).write_text("2099.01.0")
    with pytest.raises(local_neo4j.DevstackError, match=r"written by Neo4j 2099\.01\.0"):
        local_neo4j.keep_before_upgrade(tmp_path)
