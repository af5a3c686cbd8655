"""list_memories and list_tags over REST (through graphsvc.client), on the real Neo4j: tags read as
paths, current memories only by default, the data kept with a memory, paging, and refusals."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from graphsvc.client import Client
from graphsvc.domain.listing import ListMemoriesInput, ListTagsInput
from graphsvc.domain.models import RememberInput


@pytest.fixture
def client(server_url: str, graph: str) -> Iterator[Client]:
    with Client(server_url, graph=graph) as made:
        yield made


def test_memories_are_listed_by_tags_and_tag_paths_newest_first_with_their_data(client: Client) -> None:
    alice = client.remember(
        RememberInput(text="alice likes tea", tags=["users/alice", "prefs"], data={"n": 1})
    )
    nested = client.remember(RememberInput(text="alice at work", tags=["users/alice/work"]))
    client.remember(RememberInput(text="alicex is someone else", tags=["users/alicex"]))
    under = client.list_memories(ListMemoriesInput(under="users/alice"))
    assert [m.id for m in under.memories] == [nested.id, alice.id] and under.total == 2
    [tagged] = client.list_memories(ListMemoriesInput(tags=["users/alice", "prefs"])).memories
    assert (tagged.id, tagged.data, tagged.text) == (alice.id, {"n": 1}, "alice likes tea")
    assert client.list_memories(ListMemoriesInput(ids=[nested.id])).memories[0].id == nested.id


def test_a_superseded_memory_is_listed_only_when_history_is_asked_for(client: Client) -> None:
    old = client.remember(RememberInput(text="v1", tags=["doc"]))
    new = client.remember(RememberInput(text="v2", tags=["doc"], supersedes=[old.id]))
    assert [m.id for m in client.memories(ListMemoriesInput(tags=["doc"]))] == [new.id]
    listed = [m.id for m in client.memories(ListMemoriesInput(tags=["doc"], current=False, limit=1))]
    assert listed == [new.id, old.id]


def test_tags_are_counted_and_paged_in_order(client: Client) -> None:
    client.remember_batch([RememberInput(text=f"memory {i}", tags=[f"t/{i % 3}", "all"]) for i in range(7)])
    assert [(t.tag, t.memories) for t in client.tags(ListTagsInput(under="t", limit=2))] == [
        ("t/0", 3),
        ("t/1", 2),
        ("t/2", 2),
    ]
    assert client.list_tags().total == 4


def test_data_that_breaks_the_contract_is_refused_and_nothing_is_written(
    server_url: str, graph: str, client: Client
) -> None:
    for data in ({"big": 2**64}, {"long": "x" * 70_000}):
        answer = httpx.post(
            f"{server_url}/v1/memories",
            json={"text": "refused", "data": data},
            headers={"X-Graph-Id": graph},
            timeout=30,
        )
        assert (answer.status_code, answer.json()["error"]["fields"]) == (422, ["data"])
    assert client.list_memories().total == 0


def test_a_method_the_list_paths_do_not_take_is_405_not_a_malformed_id(server_url: str) -> None:
    assert httpx.delete(f"{server_url}/v1/memories/list", timeout=30).status_code == 405
