"""schemathesis over /openapi.json: every operation, with a token, on the real Neo4j and chain.

Its coverage phase sends each operation the boundaries and the violations of its schema (deterministic),
then fuzzing draws FUZZ_EXAMPLES more requests per operation (fixed seed). Every response must be no
server error, a status the operation documents, in the documented shape, and a request that keeps to
the schema must not be refused as invalid (401, 403, 404 and 409 stay possible: a token bound to
another graph, a memory that does not exist). A valid graph name in a request is pointed at the
token's graph, so that requests reach the services rather than stop at 403 (tests/interfaces/test_access.py
covers that refusal); invalid names are sent as generated. The one rule JSON Schema cannot state,
`validFrom` not after `validTo` (in the field's description; tests/services/test_temporal.py covers its refusal),
is kept by dropping a generated `validTo` that would break it (an equal one is an empty interval, kept);
recall's `from` before `to` (tests/services/test_time.py) by dropping a generated `to` that would break it.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime

import httpx
import pytest
import schemathesis
from pydantic import TypeAdapter, ValidationError
from schemathesis import Case, HookContext
from schemathesis.engine import Status, from_schema
from schemathesis.engine.events import EngineEvent, NonFatalError, ScenarioFinished

from graphsvc.domain.models import Graph, Instant
from graphsvc.domain.spans import parse_occurred
from graphsvc.services.access import READ, WRITE, AccessService
from graphsvc.store.graph import GraphStore

pytestmark = pytest.mark.neo4j

SEED = 20261203
FUZZ_EXAMPLES = 20
MIN_CASES = 1000
GRAPH: TypeAdapter[str] = TypeAdapter(Graph)
INSTANT: TypeAdapter[datetime] = TypeAdapter(Instant)
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "response_schema_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "positive_data_acceptance",
]


@dataclass
class Run:
    cases: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def record(self, event: EngineEvent) -> None:
        if isinstance(event, NonFatalError):
            self.failures.append(f"{event.label}: {event.info.message}")
        if not isinstance(event, ScenarioFinished):
            return
        recorder = event.recorder
        self.cases[event.label or ""] += len(recorder.cases)
        self.statuses.update(i.response.status_code for i in recorder.interactions.values() if i.response)
        for case_id, checks in recorder.checks.items():
            for check in checks:
                if check.status == Status.FAILURE and check.failure_info is not None:
                    case = recorder.cases[case_id].value
                    self.failures.append(
                        f"{event.label} {check.name}: {check.failure_info.failure.title}\n"
                        f"  {case.as_curl_command(headers={'Authorization': 'Bearer ...'})}"
                    )


def _is_graph(value: object) -> bool:
    try:
        GRAPH.validate_python(value)
    except ValidationError:
        return False
    return isinstance(value, str)


def _reversed(start: object, end: object) -> bool:
    try:
        return INSTANT.validate_python(start) > INSTANT.validate_python(end)
    except ValidationError:
        return False


def _window_reversed(start: object, end: object) -> bool:
    if start is None or end is None:
        return False
    try:
        return parse_occurred(str(start)).span.start >= parse_occurred(str(end)).span.end
    except ValueError:
        return False


def _into(graph: str) -> Callable[[HookContext, Case], Case]:
    """A map_case hook: valid graph names in the body, query and X-Graph-Id become `graph`."""

    def point(_: HookContext, case: Case) -> Case:
        for values, key in ((case.body, "graph"), (case.query, "graph"), (case.headers, "x-graph-id")):
            if isinstance(values, MutableMapping) and _is_graph(values.get(key)):
                values[key] = graph
        body = case.body
        if isinstance(body, MutableMapping) and _reversed(body.get("validFrom"), body.get("validTo")):
            del body["validTo"]
        if isinstance(body, MutableMapping) and _window_reversed(body.get("from"), body.get("to")):
            del body["to"]
        return case

    return point


def _config(token: str) -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "headers": {"Authorization": f"Bearer {token}"},
            "request-timeout": 60,
            "generation": {"max-examples": FUZZ_EXAMPLES, "deterministic": True, "database": "none"},
            "phases": {"stateful": {"enabled": False}},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        }
    )


def _operations(base_url: str) -> set[str]:
    paths = httpx.get(f"{base_url}/openapi.json").json()["paths"]
    return {f"{method.upper()} {path}" for path, methods in paths.items() for method in methods}


@pytest.fixture
async def fuzz_token(store: GraphStore) -> tuple[str, str]:
    graph = "fuzz-" + secrets.token_hex(4)
    token, _ = await AccessService(store, required=True).create(graph, [READ, WRITE])
    return graph, token


def test_fuzzing_every_operation_finds_no_failure(secured_url: str, fuzz_token: tuple[str, str]) -> None:
    graph, token = fuzz_token
    schema = schemathesis.openapi.from_url(f"{secured_url}/openapi.json", config=_config(token))
    schema.hook("map_case")(_into(graph))
    run = Run()
    for event in from_schema(schema).execute():
        run.record(event)
    print(f"schemathesis: {run.cases.total()} cases, statuses {dict(sorted(run.statuses.items()))}")
    assert not run.failures, "\n".join(run.failures)
    assert set(run.cases) == _operations(secured_url)
    assert run.cases.total() >= MIN_CASES
