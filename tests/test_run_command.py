"""The README's run command on the embedded defaults: local Neo4j (Maven Central), local chain, graphsvc."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, free_port

pytestmark = pytest.mark.neo4j
START_TIMEOUT_S = 240


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
    assert httpx.get(urls["Health"]).json() == {"status": "ok", "neo4j": True}
    assert httpx.get(urls["REST API docs"]).status_code == 200
    assert "Neo4j Browser" in httpx.get(f"http://127.0.0.1:{browser}/browser/").text
    refused = httpx.post(f"http://127.0.0.1:{http}/v1/memories", json={"text": "no token"})
    assert refused.status_code == 401
    stored = httpx.post(
        f"http://127.0.0.1:{http}/v1/memories", json={"text": "run command works"}, headers=bearer
    )
    assert stored.status_code == 201
    anchored = httpx.post(f"http://127.0.0.1:{http}/v1/anchor", json={}, timeout=60, headers=bearer).json()
    assert (anchored["status"], anchored["count"]) == ("anchored", 1)
    with httpx.stream("GET", urls["MCP (SSE)"], timeout=10) as sse:
        assert sse.status_code == 200
        assert next(sse.iter_lines()).startswith("event: endpoint")


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
