"""graphsvc.client against graphsvc served over HTTP on the real Neo4j and chain (tests/conftest.py):
every operation through `Client` and `AsyncClient`, every error code as its class with the server's
message, timeouts, retries that never store a memory twice, and paging."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from graphsvc import errors as server_errors
from graphsvc.client import AsyncClient, Client, errors
from graphsvc.client.calls import Call
from graphsvc.domain.locus import ListContextsInput, StoreEventInput
from graphsvc.domain.models import (
    EntityIn,
    LinkInput,
    RecallInput,
    RecallResult,
    RelationIn,
    RememberInput,
    RememberResult,
)
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.store.graph import GraphStore


async def _count(store: GraphStore, graph: str) -> int:
    records, _, _ = await store._driver.execute_query(
        "MATCH (m:Memory {graph: $graph}) RETURN count(m) AS n", graph=graph, database_=store._database
    )
    return records[0]["n"]


def test_a_client_remembers_recalls_links_explores_and_forgets_with_the_contract_models(
    server_url: str, graph: str
) -> None:
    with Client(server_url, graph=graph) as client:
        stored = client.remember(
            RememberInput(
                text="Alice trades on the MON/USDC pool",
                entities=[EntityIn(label="Person", name="Alice"), EntityIn(label="Pool", name="MON/USDC")],
                relations=[RelationIn(from_="Alice", type="TRADES_ON", to="MON/USDC")],
                tags=["defi"],
            )
        )
        assert isinstance(stored, RememberResult) and stored.id.startswith("mem_")
        found = client.recall("Alice pool")
        assert isinstance(found, RecallResult) and [m.id for m in found.memories] == [stored.id]
        linked = client.link(
            LinkInput(
                from_=EntityIn(label="Person", name="Alice"),
                type="AVOIDS",
                to=EntityIn(label="Token", name="X"),
            )
        )
        assert linked.created
        walked = client.explore("Person:Alice")
        assert {"Pool:MON/USDC", "Token:X", stored.id} <= {n.id for n in walked.nodes}
        assert client.forget(stored.id).deleted
        assert client.recall(RecallInput(query="Alice pool", hops=0)).memories == []


async def test_an_async_client_anchors_verifies_and_proves_a_memory(server_url: str, graph: str) -> None:
    async with AsyncClient(server_url, graph=graph) as client:
        stored = await client.remember("the async client was here")
        anchored = await client.anchor_now()
        assert anchored.status == "anchored" and anchored.count >= 1
        assert (await client.verify(stored.id)).verified
        bundle = await client.proof(stored.id)
        assert (bundle.id, bundle.hash) == (stored.id, stored.hash)
        assert (await client.recall("async client")).memories[0].id == stored.id


@pytest.fixture
async def token(store: GraphStore, graph: str) -> str:
    return (await AccessService(store, required=True).create(graph, [READ, WRITE]))[0]


def test_each_error_the_server_answers_is_its_class_with_the_servers_code_and_fields(
    server_url: str, secured_url: str, token: str, graph: str
) -> None:
    with Client(secured_url) as anonymous, pytest.raises(errors.Unauthorized) as no_token:
        anonymous.recall("anything")
    assert (no_token.value.code, no_token.value.status) == ("unauthorized", 401)
    with (
        Client(secured_url, token, graph="not-" + graph) as elsewhere,
        pytest.raises(errors.Forbidden) as other_graph,
    ):
        elsewhere.recall("anything")
    assert other_graph.value.status == 403 and graph in other_graph.value.message
    with Client(server_url, graph=graph) as client:
        with pytest.raises(errors.NotFound) as missing:
            client.forget("mem_00000000")
        assert missing.value.status == 404 and "mem_00000000" in missing.value.message
        with pytest.raises(errors.InvalidInput) as refused:  # past the client's own check
            client.send(Call("remember", "POST", "/v1/memories", RememberResult, {"text": " ", "hops": 1}))
        assert refused.value.status == 422 and refused.value.fields == ["hops", "text"]
        client.remember(
            RememberInput(
                text="two Alices",
                entities=[EntityIn(label="Person", name="Alice"), EntityIn(label="Cat", name="Alice")],
            )
        )
        with pytest.raises(errors.Conflict) as ambiguous:
            client.remember(
                RememberInput(
                    text="which Alice?", relations=[RelationIn(from_="Alice", type="KNOWS", to="Alice")]
                )
            )
        assert ambiguous.value.status == 409
        with pytest.raises(errors.MethodNotAllowed):
            client.send(Call("recall", "DELETE", "/v1/recall", RecallResult))
    with Client(secured_url, token) as mine:  # the token's own graph, unnamed
        assert mine.remember("mine alone").id.startswith("mem_")


def test_the_client_refuses_input_that_breaks_the_contract_before_sending(graph: str) -> None:
    with Client("http://127.0.0.1:9", graph=graph) as client:  # nothing listens there: nothing is sent
        with pytest.raises(errors.InvalidInput) as blank:
            client.remember("   ")
        assert blank.value.fields == ["text"]
        with pytest.raises(errors.InvalidInput):
            client.forget("../../v1/anchor")
        with pytest.raises(errors.InvalidInput):
            client.remember_batch([])


@pytest.mark.parametrize(
    "code", sorted({cls.code for cls in errors.BY_CODE.values()} | {"unavailable", "chain_unavailable"})
)
def test_every_code_of_the_error_tree_becomes_its_class_with_the_message(code: str) -> None:
    raised = errors.from_answer(
        503, {"error": {"code": code, "message": "the server's words", "fields": ["x"]}}
    )
    assert (raised.code, raised.message, raised.fields) == (code, "the server's words", ["x"])


def test_every_code_the_server_defines_has_a_class_in_the_client() -> None:
    def codes(cls: type[server_errors.GraphsvcError]) -> set[str]:
        inner = {
            c for sub in cls.__subclasses__() if sub.__module__ == server_errors.__name__ for c in codes(sub)
        }
        return {cls.code, *inner}

    assert codes(server_errors.GraphsvcError) - {"error"} <= set(errors.BY_CODE)


def test_an_answer_without_graphsvcs_envelope_is_classed_by_its_status() -> None:
    assert isinstance(errors.from_answer(502, "<html>Bad gateway</html>"), errors.ServerError)
    assert isinstance(errors.from_answer(503, None), errors.Unavailable)


@contextmanager
def _silent_server() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_server_that_does_not_answer_is_a_timeout_that_says_so() -> None:
    with _silent_server() as url, Client(url, timeout=0.2) as client, pytest.raises(errors.Timeout) as waited:
        client.recall("anything")
    assert waited.value.code == "timeout" and waited.value.sent and "0.2 s" in waited.value.message


async def test_an_async_client_whose_server_does_not_answer_raises_a_timeout() -> None:
    with _silent_server() as url:
        async with AsyncClient(url, timeout=0.2) as client:
            with pytest.raises(errors.Timeout):
                await client.remember("never answered")


def test_a_server_that_is_not_there_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens
    with Client(f"http://127.0.0.1:{port}") as client, pytest.raises(errors.Unreachable) as away:
        client.recall("anything")
    assert away.value.code == "unreachable"


class _LosesFirstAnswer:
    """A proxy in front of graphsvc that forwards every request but drops the first answer (the
    server acted; the client never hears): what a retry after a lost answer meets."""

    def __init__(self, url: str) -> None:
        target = urlsplit(url)
        self._target = (target.hostname or "127.0.0.1", target.port or 80)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.dropped = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with client, socket.create_connection(self._target, timeout=60) as server:
            while request := _message(client):
                server.sendall(request)
                answer = _message(server)
                if self.dropped == 0:
                    self.dropped += 1
                    return  # the answer is lost with the connection
                client.sendall(answer)

    def close(self) -> None:
        self._listener.close()


def _message(sock: socket.socket) -> bytes:
    """One HTTP/1.1 message with a Content-Length body (what httpx and uvicorn send here), or b""."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head + b"\r\n\r\n" + rest


async def test_a_remember_whose_answer_was_lost_is_sent_again_and_stored_once(
    server_url: str, graph: str, store: GraphStore
) -> None:
    proxy = _LosesFirstAnswer(server_url)
    try:
        async with AsyncClient(proxy.url, graph=graph) as client:
            stored = await client.remember("remembered once although sent twice")
    finally:
        proxy.close()
    assert proxy.dropped == 1
    assert await _count(store, graph) == 1
    with Client(server_url, graph=graph) as check:
        assert [m.id for m in check.recall("remembered once").memories] == [stored.id]


def test_contexts_pages_through_every_context(server_url: str, graph: str) -> None:
    with Client(server_url, graph=graph) as client:
        names = [f"topic:t{i}_{secrets.token_hex(2)}" for i in range(5)]
        for name in names:
            client.store_event(StoreEventInput(event_kind="fact", payload=f"about {name}", context_id=name))
        listed = [c.context_id for c in client.contexts(ListContextsInput(limit=2))]
    assert sorted(listed) == sorted(names)
