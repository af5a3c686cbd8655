"""Fixtures: one real Neo4j per test session, and graphsvc served over HTTP on it.

Where Neo4j comes from, first that applies:
1. GRAPHSVC_TEST_NEO4J_URI (+ _USER/_PASSWORD): an existing server;
2. a Docker engine that answers: testcontainers' Neo4jContainer with GRAPHSVC_TEST_NEO4J_IMAGE
   (default: the locally built graphsvc/neo4j:2026.09.0 if present, else neo4j:2026.09.0-community);
3. otherwise the project's own local server (graphsvc.devstack.neo4j) in a temporary home.
GRAPHSVC_TEST_NEO4J=testcontainers|local forces one of the last two (CI forces testcontainers).
A test module that needs a second, empty server (an export moved between servers) starts one the
same way with `started_neo4j` (2. or 3., the same image), for the module, and it is stopped after.
Nothing here skips: without Neo4j the tests fail.

The last two serve Neo4j Browser too, set up (as `graphsvc up` and compose do) to load the style and
the guide from the graphsvc of `server_url`, whose port is therefore chosen first.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.async_api import Browser

from graphsvc.app import create_app
from graphsvc.browser import neo4j_settings
from graphsvc.config import (
    AuthSettings,
    ChainSettings,
    EmbeddingsSettings,
    ExtractionSettings,
    Neo4jSettings,
    Settings,
)
from graphsvc.devstack import neo4j as local_neo4j
from graphsvc.services.index.term_fold import fold
from graphsvc.services.index.term_stats import fields_of, tally
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver
from tests import browser
from tests.tiers import (  # noqa: F401  (the tiers' hooks: tests/tiers.py)
    pytest_collection_modifyitems,
    pytest_fixture_setup,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
)

pytest_plugins = ["pytester"]  # tests/house/test_tiers.py runs a suite of its own
LOCAL_IMAGE = f"graphsvc/neo4j:{local_neo4j.NEO4J_VERSION}"
OFFICIAL_IMAGE = f"neo4j:{local_neo4j.NEO4J_VERSION}-community"
PASSWORD = "graphsvc-test-" + secrets.token_hex(4)
# Generous: a cold server on a loaded machine compiles a statement for seconds. The outage tests set
# their own short deadline.
TEST_DEADLINE_S = 60


@dataclass(frozen=True)
class Neo4jTarget:
    uri: str
    user: str
    password: str
    source: str
    browser_url: str | None = None  # Neo4j Browser, its connect form filled with `uri` and `user`


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _docker_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _test_image() -> str:
    configured = os.environ.get("GRAPHSVC_TEST_NEO4J_IMAGE")
    if configured:
        return configured
    local = subprocess.run(["docker", "image", "inspect", LOCAL_IMAGE], capture_output=True)
    return LOCAL_IMAGE if local.returncode == 0 else OFFICIAL_IMAGE


def _source() -> str:
    return os.environ.get("GRAPHSVC_TEST_NEO4J", "auto")


def _browser_url(http: str, bolt_uri: str) -> str:
    return f"{http}/browser/?dbms={bolt_uri.replace('://', '://neo4j@', 1)}"


def _env_name(setting: str) -> str:
    """The official image's variable for a setting: browser.post_connect_cmd is
    NEO4J_browser_post__connect__cmd (docker/neo4j/entrypoint.sh reads it the same way)."""
    return "NEO4J_" + setting.replace("_", "__").replace(".", "_")


@pytest.fixture(scope="session")
def server_port() -> int:
    """The port of `server_url`, known before Neo4j starts so that Browser can be pointed at it."""
    return free_port()


@contextmanager
def started_neo4j(home: Path, conf: dict[str, str]) -> Iterator[Neo4jTarget]:
    """A fresh Neo4j server, stopped on exit: testcontainers when Docker answers (or is asked for),
    else the project's local server in `home`. `conf`: settings for it (Browser's)."""
    if _source() == "testcontainers" or (_source() == "auto" and _docker_answers()):
        if not _docker_answers():
            pytest.fail("GRAPHSVC_TEST_NEO4J=testcontainers but no Docker engine answers")
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
        os.environ.setdefault("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
        from testcontainers.community.neo4j import Neo4jContainer

        container = Neo4jContainer(image=_test_image(), password=PASSWORD).with_exposed_ports(7474)
        for setting, value in conf.items():
            container.with_env(_env_name(setting), value)
        with container:
            uri = container.get_connection_url()
            http = f"http://127.0.0.1:{container.get_exposed_port(7474)}"
            source = f"testcontainers:{_test_image()}"
            yield Neo4jTarget(uri, "neo4j", PASSWORD, source, _browser_url(http, uri))
    else:
        server = local_neo4j.start(
            home,
            bolt_port=free_port(),
            http_port=free_port(),
            password=PASSWORD,
            conf=conf,
            cache=Settings().cache_dir,
        )
        try:
            http = f"http://127.0.0.1:{server.http_port}"
            yield Neo4jTarget(
                server.bolt_uri, "neo4j", PASSWORD, "local-server", _browser_url(http, server.bolt_uri)
            )
        finally:
            local_neo4j.stop(home)


@pytest.fixture(scope="session")
def neo4j_target(tmp_path_factory: pytest.TempPathFactory, server_port: int) -> Iterator[Neo4jTarget]:
    browser = neo4j_settings(f"http://127.0.0.1:{server_port}")
    if os.environ.get("GRAPHSVC_TEST_NEO4J_URI"):
        yield Neo4jTarget(
            os.environ["GRAPHSVC_TEST_NEO4J_URI"],
            os.environ.get("GRAPHSVC_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("GRAPHSVC_TEST_NEO4J_PASSWORD", "graphsvc-dev"),
            "external",
        )
    else:
        with started_neo4j(tmp_path_factory.mktemp("neo4j"), browser) as target:
            yield target


def pytest_report_header(config: pytest.Config) -> str:
    return "neo4j: GRAPHSVC_TEST_NEO4J_URI, else testcontainers when docker answers, else the local server"


@pytest.fixture(scope="session")
def settings(neo4j_target: Neo4jTarget, chain_target: ChainTarget) -> Settings:
    from graphsvc.devstack.chain import DEV_PRIVATE_KEY

    return Settings(
        deadline_s=TEST_DEADLINE_S,
        neo4j=Neo4jSettings(uri=neo4j_target.uri, user=neo4j_target.user, password=neo4j_target.password),
        chain=ChainSettings(
            network="local",
            rpc_url=chain_target.rpc_url,
            contract=chain_target.contract,
            private_key=DEV_PRIVATE_KEY,
            receipt_timeout_s=10,
            lease_ttl_s=5,
        ),
        # On by default; the tests of other features serve without the model's worker, and
        # tests/services/test_embeddings.py (and test_run_command.py, the default stack) turn it on.
        embeddings=EmbeddingsSettings(enabled=False),
        # On by default too; tests/services/test_extraction.py turns it on (the other features' graphs stay as
        # their agents wrote them).
        extraction=ExtractionSettings(enabled=False),
    )


@pytest.fixture(scope="session")
async def store(settings: Settings) -> AsyncIterator[GraphStore]:
    neo = settings.neo4j
    driver = create_driver(neo.uri, neo.user, neo.password.get_secret_value(), deadline_s=TEST_DEADLINE_S)
    store = GraphStore(driver, neo.database, deadline_s=TEST_DEADLINE_S)
    await store.apply_schema()
    yield store
    await store.close()


@pytest.fixture(scope="session")
def memory(store: GraphStore) -> MemoryService:
    return MemoryService(store)


@pytest.fixture
def graph() -> str:
    """A fresh tenant graph per test: tests never see each other's data."""
    return "t-" + secrets.token_hex(6)


async def count_nodes(store: GraphStore, graph: str) -> int:
    records, _, _ = await store._driver.execute_query(
        "MATCH (n {graph: $graph}) RETURN count(n) AS n", graph=graph, database_=store._database
    )
    return records[0]["n"]


def serve(app: Any, port: int) -> Iterator[str]:
    """`app` served by uvicorn on `port`, in a thread with its own event loop."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 180  # a cold server on a loaded machine
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("graphsvc did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def app_on_free_port(settings: Settings, port: int | None = None) -> tuple[Any, int]:
    port = port or free_port()
    return create_app(
        settings.model_copy(update={"http": settings.http.model_copy(update={"port": port})})
    ), port


def _serve(settings: Settings, port: int | None = None) -> Iterator[str]:
    """graphsvc served by uvicorn (on a free port unless given)."""
    yield from serve(*app_on_free_port(settings, port))


@pytest.fixture(scope="session")
def server_url(settings: Settings, server_port: int) -> Iterator[str]:
    """graphsvc on loopback without auth (development mode), where Neo4j Browser finds its guide."""
    yield from _serve(settings.model_copy(update={"auth": AuthSettings(required=False)}), server_port)


@pytest.fixture(scope="session")
def secured_url(settings: Settings) -> Iterator[str]:
    """graphsvc requiring a bearer token on every tool call."""
    yield from _serve(settings.model_copy(update={"auth": AuthSettings(required=True)}))


REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ChainTarget:
    rpc_url: str
    contract: str


@pytest.fixture(scope="session")
def chain_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChainTarget]:
    """anvil: a transaction is mined at once, and a block every 0.2 s, so a root is final (two blocks
    behind the head, like Monad) about 0.4 s after its transaction."""
    from graphsvc.chain.anchor import AnchorContract
    from graphsvc.devstack import chain as local_chain

    home = tmp_path_factory.mktemp("chain")
    node = local_chain.start(home, port=free_port(), block_time=0.2)

    async def deploy() -> str:
        contract = AnchorContract(node.rpc_url, None, local_chain.DEV_PRIVATE_KEY)
        try:
            return await contract.deploy()
        finally:
            await contract.close()

    try:
        yield ChainTarget(node.rpc_url, asyncio.run(deploy()))
    finally:
        local_chain.stop(home)


def mine(rpc_url: str, blocks: int = 2) -> None:
    from graphsvc.devstack.chain import _rpc

    _rpc(rpc_url, "anvil_mine", [hex(blocks)])


@pytest.fixture(scope="session")
async def chromium() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, one per session (tests/browser.py); each test opens its own pages."""
    async with browser.chromium() as launched:
        yield launched


async def term_stats(store: GraphStore, graph: str) -> tuple[dict, dict]:
    """A graph's GraphStats totals and its GraphTerm counts (term: [text, window, tags]), its pending
    deltas folded first."""
    await fold(store, graph)
    records, _, _ = await store._driver.execute_query(
        "MATCH (s:GraphStats {name: $graph}) "
        "RETURN properties(s) AS totals, "
        "COLLECT { MATCH (t:GraphTerm {graphName: $graph}) RETURN [t.term, t.text, t.window, t.tags] } AS terms",
        graph=graph,
        database_=store._database,
    )
    [row] = records
    return row["totals"], {term: counts for term, *counts in row["terms"]}


async def recounted(store: GraphStore, graph: str) -> tuple[dict, dict]:
    """What `term_stats` would read had the graph's statistics been counted from scratch from the
    memories it holds now: the oracle the incremental counts (deltas and folds) are held to."""
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) RETURN m.text AS text, m.window AS window, m.tags AS tags",
        graph=graph,
        database_=store._database,
    )
    counts = tally(c for r in records for c in fields_of(r["text"], r["window"], r["tags"] or [], 1))
    terms = {term: [c["text"], c["window"], c["tags"]] for term, c in counts.terms.items()}
    return {"name": graph, **counts.totals}, terms
