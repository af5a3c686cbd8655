"""The edges: inputs are validated once by the contract types, REST and MCP report the same errors,
every REST failure answers the error envelope, the caller is checked before the body, and an error
never closes the connection."""

from __future__ import annotations

import http.client
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from mcp import Client
from pydantic import BaseModel

from graphsvc.config import AuthSettings, Settings
from graphsvc.domain import locus, models
from graphsvc.store.graph import GraphStore
from tests.conftest import app_on_free_port, count_nodes, serve
from tests.transports import ToolFailure, connect

pytestmark = pytest.mark.neo4j

LONG_ID = "mem_" + "a" * 297  # 301 characters
POOL, USDC = {"label": "Pool", "name": "A"}, {"label": "Token", "name": "USDC"}
JSON = {"content-type": "application/json"}


def _body(data: dict[str, Any], **raw: str) -> bytes:
    """`data` as JSON, with each `"__name__"` placeholder replaced by the raw JSON text `raw[name]`."""
    text = json.dumps(data)
    for name, value in raw.items():
        text = text.replace(f'"__{name}__"', value)
    return text.encode()


def _answered_500_before(graph: str) -> list[tuple[str, str, str, bytes | None, dict[str, str], str]]:
    """(case, method, path, body, headers, field at fault) for each kind of request that answered 500."""
    link = {"from": POOL, "type": "QUOTES", "to": USDC, "graph": graph}
    event = {"event_kind": "fact", "graph": graph}
    return [
        ("301-character id, verify", "GET", f"/v1/memories/{LONG_ID}/verify", None, {}, "memory_id"),
        ("301-character id, proof", "GET", f"/v1/memories/{LONG_ID}/proof", None, {}, "memory_id"),
        (
            "301-character id, forget",
            "DELETE",
            f"/v1/memories/{LONG_ID}?graph={graph}",
            None,
            {},
            "memory_id",
        ),
        (
            "context name of 200 characters",
            "POST",
            "/v1/locus/store_event",
            _body({**event, "context_id": "skill:" + "x" * 200}),
            JSON,
            "context_id",
        ),
        (
            "31 related contexts",
            "POST",
            "/v1/locus/store_event",
            _body({**event, "payload": "x", "related_to": [f"skill:s{i}" for i in range(31)]}),
            JSON,
            "related_to",
        ),
        (
            "control character in a payload field",
            "POST",
            "/v1/locus/store_event",
            _body({**event, "payload": {"data": {"topic": "bell\x07", "value": "v"}}}),
            JSON,
            "payload",
        ),
        (
            "page 1e15",
            "POST",
            "/v1/locus/list_contexts",
            _body({"graph": graph, "page": "__p__"}, p="1e15"),
            JSON,
            "page",
        ),
        (
            "page 2^63",
            "POST",
            "/v1/locus/list_contexts",
            _body({"graph": graph, "page": 2**63}),
            JSON,
            "page",
        ),
        ("prop beyond int64", "POST", "/v1/links", _body({**link, "props": {"n": 2**64}}), JSON, "props"),
        ("NaN prop", "POST", "/v1/links", _body({**link, "props": {"n": "__n__"}}, n="NaN"), JSON, "props"),
        (
            "1e999 prop",
            "POST",
            "/v1/links",
            _body({**link, "props": {"n": "__n__"}}, n="1e999"),
            JSON,
            "props",
        ),
        (
            "lone surrogate",
            "POST",
            "/v1/memories",
            _body({"text": "__t__", "graph": graph}, t='"\\ud800"'),
            JSON,
            "text",
        ),
        (
            "X-Graph-Id with a space",
            "POST",
            "/v1/memories",
            _body({"text": "x"}),
            JSON | {"x-graph-id": "two words"},
            "x-graph-id",
        ),
        (
            "1,000-character X-Graph-Id",
            "POST",
            "/v1/memories",
            _body({"text": "x"}),
            JSON | {"x-graph-id": "g" * 1000},
            "x-graph-id",
        ),
    ]


async def test_what_answered_500_is_refused_as_invalid_input_and_writes_nothing(
    server_url: str, graph: str, store: GraphStore
) -> None:
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as http:
        for case, method, path, body, headers, field in _answered_500_before(graph):
            response = await http.request(method, path, content=body, headers=headers)
            assert response.status_code == 422, (case, response.text)
            error = response.json()["error"]
            assert (error["code"], error["fields"]) == ("invalid_input", [field]), case
    assert await count_nodes(store, graph) == 0


UNREADABLE_BODIES = [
    b'{"query": "\xff"}',  # not UTF-8
    b"[" * 50_000 + b"]" * 50_000,
    b'{"query": "swap",}',
    b"query=swap",
]


async def test_every_rest_error_answers_the_error_envelope(server_url: str) -> None:
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as http:
        for body in UNREADABLE_BODIES:
            response = await http.post("/v1/recall", content=body, headers=JSON)
            assert response.status_code == 422, body[:20]
            assert response.json() == {
                "error": {
                    "code": "invalid_input",
                    "message": response.json()["error"]["message"],
                    "fields": [],
                }
            }
        for method, path, status, code in [
            ("GET", "/v1/nowhere", 404, "not_found"),
            ("GET", "/v1/recall", 405, "method_not_allowed"),
            ("GET", f"/v1/memories/mem_{'0' * 16}/verify", 404, "not_found"),
        ]:
            response = await http.request(method, path)
            assert response.status_code == status, path
            assert set(response.json()) == {"error"}
            assert response.json()["error"]["code"] == code


SAME_ERRORS = [
    ("recall", {"query": "swap", "hops": 4}),
    ("recall", {"hops": 1}),
    ("remember", {"text": "x", "entities": [{"label": "Memory", "name": "n"}]}),
    ("remember", {"text": "x", "entities": [5]}),
    ("remember", {"text": 5}),
    ("link", {"from": POOL, "type": "QUOTES", "to": USDC, "props": {"n": 2**64}}),
    ("explore", {"start": []}),
    ("explore", {"start": 7}),
    ("store_event", {"event_kind": "rumour", "payload": 5}),
    ("list_contexts", {"page": 2**63}),
]
MODEL_NAMES = {
    name
    for module in (models, locus)
    for name, kind in inspect.getmembers(module, inspect.isclass)
    if issubclass(kind, BaseModel)
}


async def _failure(
    transport: str, url: str, tool: str, args: dict[str, Any], headers: dict[str, str]
) -> ToolFailure:
    async with connect(transport, url, headers) as call:
        with pytest.raises(ToolFailure) as failure:
            await call(tool, args)
    return failure.value


async def test_rest_and_mcp_report_the_same_error_without_library_or_model_names(
    server_url: str, graph: str
) -> None:
    calls = [(tool, args | {"graph": graph}, {}) for tool, args in SAME_ERRORS]
    calls.append(("recall", {"query": "swap"}, {"x-graph-id": "two words"}))
    for tool, args, headers in calls:
        rest = await _failure("rest", server_url, tool, args, headers)
        assert rest.code == "invalid_input" and rest.fields, (tool, args)
        for transport in ("mcp-streamable-http", "mcp-sse"):
            mcp = await _failure(transport, server_url, tool, args, headers)
            assert (mcp.code, mcp.detail) == (rest.code, rest.detail), (transport, tool, args)
        assert rest.detail.startswith(f"{rest.fields[0]}: "), rest.detail
        words = set(rest.detail.replace(".", " ").replace(",", " ").split())
        assert not words & MODEL_NAMES and "pydantic" not in rest.detail.lower() and "://" not in rest.detail


async def test_mcp_takes_lists_and_objects_a_client_sends_as_json_text(server_url: str, graph: str) -> None:
    entities = [POOL, USDC]
    async with connect("mcp-streamable-http", server_url) as call:
        stored = await call(
            "remember", {"text": "pool A quotes USDC", "entities": json.dumps(entities), "graph": graph}
        )
        linked = await call("link", {"from": json.dumps(POOL), "type": "QUOTES", "to": USDC, "graph": graph})
        recalled = await call(
            "recall", {"query": json.dumps(["pool"]), "graph": graph}
        )  # a string field stays
    assert [e["id"] for e in stored.data["entities"]] == ["Pool:A", "Token:USDC"]
    assert linked.data["from"]["id"] == "Pool:A"
    assert [m["id"] for m in recalled.data["memories"]] == [stored.data["id"]]  # words of the text


async def test_without_a_token_the_caller_is_refused_before_the_body_is_read(secured_url: str) -> None:
    async with httpx.AsyncClient(base_url=secured_url, timeout=30) as http:
        for body in [b'{"query": "swap", "hops": 99}', *UNREADABLE_BODIES]:
            response = await http.post("/v1/recall", content=body, headers=JSON)
            assert response.status_code == 401, body[:20]
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"]["code"] == "unauthorized"
        for response in (
            await http.post("/mcp", content=b'{"query": "swap", "hops": 99}', headers=JSON),
            await http.get("/sse"),
        ):
            assert response.status_code == 401, response.request.url
            assert response.headers["www-authenticate"] == "Bearer"


async def test_mcp_and_openapi_state_the_package_version(server_url: str) -> None:
    async with Client(f"{server_url}/mcp") as client:
        assert client.server_info is not None and client.server_info.version == version("graphsvc")
    async with httpx.AsyncClient(base_url=server_url) as http:
        assert (await http.get("/openapi.json")).json()["info"]["version"] == version("graphsvc")


@pytest.fixture(scope="module")
def crashing_url(settings: Settings) -> Iterator[str]:
    """graphsvc with one more route, which fails the way a bug would."""
    app, port = app_on_free_port(settings.model_copy(update={"auth": AuthSettings(required=False)}))

    @app.get("/v1/crash")
    async def crash() -> None:
        raise RuntimeError("a bug")

    yield from serve(app, port)


def _on_one_connection(base_url: str, answers: list[tuple[str, str, bytes | None, int]]) -> None:
    """Each request answers its status on the same open connection, never `Connection: close`."""
    url = urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    sockets = []
    for method, path, body, status in answers:
        connection.request(method, path, body, JSON)
        response = connection.getresponse()
        answer = json.loads(response.read())
        assert response.status == status, (path, answer)
        assert (response.getheader("connection") or "").lower() != "close", path
        if status == 500:
            assert answer["error"]["code"] == "internal"
        sockets.append(connection.sock)
    assert sockets[0] is not None and all(sock is sockets[0] for sock in sockets)
    connection.close()


def test_an_error_answer_keeps_the_connection_open(crashing_url: str, secured_url: str) -> None:
    _on_one_connection(
        crashing_url,
        [
            ("POST", "/v1/recall", b'{"hops": 9}', 422),
            ("GET", "/v1/crash", None, 500),
            ("GET", "/v1/nowhere", None, 404),
            ("POST", "/v1/recall", b"[" * 50_000, 422),
            ("GET", "/v1/crash", None, 500),
            ("GET", "/health", None, 200),
        ],
    )
    unread = b'{"query": "' + b"x" * 100_000 + b'"}'  # refused before it is read
    _on_one_connection(
        secured_url,
        [
            ("POST", "/v1/recall", unread, 401),
            ("POST", "/v1/recall", unread, 401),
            ("GET", "/health", None, 200),
        ],
    )


def test_the_cli_refuses_a_malformed_memory_id_with_its_field_not_a_traceback(settings: Settings) -> None:
    neo = settings.neo4j
    env = {
        "PATH": os.environ["PATH"],
        "GRAPHSVC_NEO4J_URI": neo.uri,
        "GRAPHSVC_NEO4J_USER": neo.user,
        "GRAPHSVC_NEO4J_PASSWORD": neo.password.get_secret_value(),
    }
    for command in ("verify", "proof"):
        done = subprocess.run(
            [sys.executable, "-m", "graphsvc.cli", command, "not-a-memory", "--graph", "g"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("graphsvc: id: ") and "Traceback" not in done.stderr
