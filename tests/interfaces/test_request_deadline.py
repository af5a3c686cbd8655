"""The edge's promises: one deadline per request counted from its arrival (the token look-up's wait is
part of it), and a start-up refused in one line, not inside a traceback."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from graphsvc.config import Settings
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.errors import Unavailable
from graphsvc.services import deadline
from graphsvc.services.anchoring import AnchoringService
from graphsvc.services.locus import LocusService
from graphsvc.services.memory import MemoryService
from graphsvc.services.operations import TOOLS, Backends
from graphsvc.store.graph import GraphStore
from tests import stdio
from tests.conftest import count_nodes, free_port

pytestmark = pytest.mark.neo4j
DEADLINE_S = 10.0
OPERATIONS = {op.name: op for op in TOOLS}


async def test_work_past_the_deadline_of_its_arrival_is_cancelled_and_answered_unavailable() -> None:
    started = asyncio.Event()

    async def slow() -> str:
        started.set()
        await asyncio.sleep(60)
        return "never"

    with pytest.raises(Unavailable):
        await deadline.within(slow(), DEADLINE_S, arrived=deadline.now() - DEADLINE_S + 0.05)
    assert started.is_set()  # it ran, for what was left of the deadline, and no longer


@pytest.fixture
def backends(store: GraphStore, memory: MemoryService) -> Backends:
    return Backends(memory, AnchoringService(store, None), LocusService(memory, store))


async def test_an_operation_gets_what_is_left_of_its_requests_deadline_not_a_deadline_of_its_own(
    backends: Backends, store: GraphStore, graph: str
) -> None:
    remember = OPERATIONS["remember"]
    spent = deadline.now() - DEADLINE_S  # a token look-up that took the whole deadline
    with pytest.raises(Unavailable):
        await remember.run(backends, RememberInput(text="too late", graph=graph), DEADLINE_S, spent)
    assert await count_nodes(store, graph) == 0  # given up before it was written
    stored = await remember.run(
        backends, RememberInput(text="in time", graph=graph), DEADLINE_S, deadline.now()
    )
    recalled = await OPERATIONS["recall"].run(
        backends, RecallInput(query="in time", graph=graph), DEADLINE_S, None
    )
    assert [m.id for m in recalled.memories] == [stored.id]
    assert not OPERATIONS["anchor_now"].deadline  # it waits for finality, within its own bounds


def test_serving_a_public_address_without_auth_is_refused_in_one_line(settings: Settings) -> None:
    env = stdio.environment(
        settings,
        GRAPHSVC_HTTP_HOST="0.0.0.0",
        GRAPHSVC_HTTP_PORT=str(free_port()),
        GRAPHSVC_AUTH_REQUIRED="false",
        GRAPHSVC_LOG_FORMAT="plain",
    )
    done = subprocess.run(
        [stdio.GRAPHSVC, "serve"], env=env, capture_output=True, text=True, timeout=180, cwd=stdio.REPO
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    [refusal] = [line for line in done.stderr.splitlines() if "cannot start" in line]
    assert "without auth" in refusal
