"""What the benchmarks share: a Neo4j (a fresh local one unless GRAPHSVC_NEO4J_URI is set), and
graphsvc served in-process (for MCP clients) or as a process of its own, as deployed."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from graphsvc.app import create_app
from graphsvc.config import AuthSettings, Neo4jSettings, Settings
from graphsvc.devstack import neo4j as local_neo4j

PASSWORD = "graphsvc-bench"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def neo4j_settings(*, heap: str = "1g", pagecache: str = "512m") -> Iterator[Settings]:
    """Settings (auth off) for GRAPHSVC_NEO4J_URI if set, else for a fresh local Neo4j, stopped after."""
    uri = os.environ.get("GRAPHSVC_NEO4J_URI")
    if uri:
        password = os.environ.get("GRAPHSVC_NEO4J_PASSWORD", "graphsvc-dev")
        yield Settings(neo4j=Neo4jSettings(uri=uri, password=password), auth=AuthSettings(required=False))
        return
    with tempfile.TemporaryDirectory() as home:
        server = local_neo4j.start(
            Path(home),
            bolt_port=free_port(),
            http_port=free_port(),
            password=PASSWORD,
            heap=heap,
            pagecache=pagecache,
        )
        try:
            yield Settings(
                neo4j=Neo4jSettings(uri=server.bolt_uri, password=PASSWORD), auth=AuthSettings(required=False)
            )
        finally:
            local_neo4j.stop(Path(home))


@contextmanager
def served(settings: Settings, port: int | None = None) -> Iterator[str]:
    """graphsvc on 127.0.0.1:`port` (a free one by default) in a thread; yields its base URL.

    Raises:
        RuntimeError: it did not start within 60 s (say, the port was taken).
    """
    port = port or free_port()
    app = create_app(settings.model_copy(update={"http": settings.http.model_copy(update={"port": port})}))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError(f"graphsvc did not start on port {port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def spawn(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`graphsvc serve` as a process of its own on a free port, configured by `env` (GRAPHSVC_*
    variables of this process left out), its output appended to `log`; returns it and its base URL
    once /health answers 200.

    Raises:
        RuntimeError: it did not answer within 120 s.
    """
    port = free_port()
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GRAPHSVC_", "MONAD_", "ANCHOR_"))},
        "GRAPHSVC_HTTP_PORT": str(port),
        **env,
    }
    with log.open("ab") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "graphsvc.cli", "serve"], env=environment, stdout=out, stderr=out
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"graphsvc did not start (its log: {log})")
