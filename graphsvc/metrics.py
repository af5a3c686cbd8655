"""Prometheus metrics of one app, served at /metrics (a leaf: stdlib and prometheus_client only).

Every label value comes from a bounded set the code knows: tool and operation names, the three
transports, the error tree's codes, route templates, HTTP methods (others are `other`), Cypher file
names, batch statuses and worker names. No graph name is ever a label value (graphs are tenants'
names), nor any other caller-supplied string: the backlog per graph names the TOP_GRAPHS graphs with
the most memories waiting by their graph key (a hash of the name, the memories' `graphKey`) and the
rest as `other`.

What Neo4j holds (memories pending, batches per status, the last finalized anchor, background
backlogs) is read at scrape time by the probes the composition root hands over, all within
`SCRAPE_TIMEOUT_S`; when they fail, those figures are left out and `graphsvc_neo4j_sample_success`
is 0, never a stale value.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the classic text format every Prometheus reads
SCRAPE_TIMEOUT_S = 5.0  # well within Prometheus' default scrape timeout (10 s)
TOP_GRAPHS = 10  # graphs named in a backlog per graph; the rest are summed as `other`
TRANSPORTS = ("rest", "mcp-http", "mcp-sse")
# Write-to-searchable: milliseconds on the write path, minutes behind a backlog.
SEARCHABLE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600)
log = logging.getLogger(__name__)
disable_created_metrics()  # no `_created` series: they double the output and no dashboard here reads them


class AnchoringGauges(Protocol):
    """The anchoring state across every graph, as read at one scrape (services.anchoring.State)."""

    @property
    def memories_pending(self) -> int: ...
    @property
    def batches(self) -> Mapping[str, int]: ...  # per status
    @property
    def last_finalized_at(self) -> float | None: ...  # unix seconds of the newest finalized batch's block


class WorkerGauges(Protocol):
    """One background worker's state (services.worker.WorkerState), read in memory at each scrape."""

    @property
    def ok(self) -> bool: ...
    @property
    def last_success_age_s(self) -> float | None: ...


class QueueGauges(Protocol):
    """A backlog that every graph shares (services.backlog.State), as read at one scrape."""

    @property
    def waiting(self) -> int: ...
    @property
    def set_aside(self) -> int: ...  # memories no worker can read
    @property
    def graphs(self) -> Mapping[str, int]: ...  # waiting per graph key, the rest under `other`


AnchoringProbe = Callable[[], Awaitable[AnchoringGauges]]
BacklogProbe = Callable[[], Awaitable[int]]
QueueProbe = Callable[[int], Awaitable[QueueGauges]]  # (how many graphs to name)
WorkerProbe = Callable[[], WorkerGauges]
WaitProbe = Callable[[], float | None]


class Metrics:
    """The app's registry and the calls that move it.

    `backlogs` maps a background worker's name to a probe of its unfinished work, read at each scrape
    as `graphsvc_backlog{worker=...}`: a new worker adds one line where the app is composed, e.g.
    `metrics.backlogs["term_stats"] = folder.backlog`; `queues` does the same for a backlog of memories
    that every graph shares (its total, per graph, and set aside). `workers` maps the same names to
    their state (failing, the age of the last success), and `waits` to how long what they claim waited,
    read from memory even when Neo4j does not answer.
    """

    def __init__(self, anchoring: AnchoringProbe | None = None) -> None:
        self.registry = CollectorRegistry()
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            self.registry.register(collector)
        self.anchoring = anchoring
        self.backlogs: dict[str, BacklogProbe] = {}
        self.queues: dict[str, QueueProbe] = {}
        self.workers: dict[str, WorkerProbe] = {}
        self.waits: dict[str, WaitProbe] = {}
        self._sampled = _Sampled()
        self.registry.register(self._sampled)
        self.registry.register(_Workers(self.workers, self.waits))
        self._define()

    def _define(self) -> None:
        registry = self.registry
        self.tool_calls = Counter(
            "graphsvc_tool_calls",
            "Tool calls by tool, transport and outcome (ok or the error code); over REST every /v1 "
            "operation, named by its operation id",
            ["tool", "transport", "code"],
            registry=registry,
        )
        self.tool_seconds = Histogram(
            "graphsvc_tool_call_duration_seconds",
            "Time to answer a tool call",
            ["tool", "transport"],
            registry=registry,
        )
        self.errors = Counter(
            "graphsvc_errors",
            "Errors answered, by code: every REST or HTTP error envelope and every MCP tool error",
            ["code", "transport"],
            registry=registry,
        )
        self.http_requests = Counter(
            "graphsvc_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=registry,
        )
        self.http_seconds = Histogram(
            "graphsvc_http_request_duration_seconds",
            "Time from a request's arrival to the end of its response (an event stream: its whole life)",
            ["method", "route"],
            registry=registry,
        )
        self.statement_seconds = Histogram(
            "graphsvc_neo4j_statement_duration_seconds",
            "Time to run one Cypher statement, by its file (cypher/<area>/<name>.cypher)",
            ["statement"],
            registry=registry,
        )
        self.searchable_seconds = Histogram(
            "graphsvc_searchable_seconds",
            "Seconds from a memory's write to its vector in the index (found by meaning), by path: write "
            "(written with the memory, from the request's arrival) or backlog (by the background worker)",
            ["path"],
            buckets=SEARCHABLE_BUCKETS,
            registry=registry,
        )
        self.pending_receipts = Counter(
            "graphsvc_pending_receipts",
            "New memories of interactive writes (remember, store_event, small batches) whose receipt said "
            "pending, by part: meaning (its vector left to the background worker: past the write's budget) "
            "or links (extraction left to the background worker)",
            ["part"],
            registry=registry,
        )

    def tool_call(self, tool: str, transport: str, code: str, seconds: float) -> None:
        self.tool_calls.labels(tool, transport, code).inc()
        self.tool_seconds.labels(tool, transport).observe(seconds)

    def error(self, code: str, transport: str) -> None:
        self.errors.labels(code, transport).inc()

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_seconds.labels(method, route).observe(seconds)

    def statement(self, name: str, seconds: float) -> None:
        self.statement_seconds.labels(name).observe(seconds)

    def searchable(self, path: str, seconds: float) -> None:
        """`path`: "write" or "backlog"."""
        self.searchable_seconds.labels(path).observe(seconds)

    def pending(self, part: str) -> None:
        """`part`: "meaning" or "links"."""
        self.pending_receipts.labels(part).inc()

    async def scrape(self) -> bytes:
        """The text exposition, with what Neo4j holds read now (bounded by SCRAPE_TIMEOUT_S)."""
        self._sampled.sample = await self._sample()
        return generate_latest(self.registry)

    async def _sample(self) -> _Sample | None:
        names, queued = list(self.backlogs), list(self.queues)
        try:
            async with asyncio.timeout(SCRAPE_TIMEOUT_S):
                anchoring = await self.anchoring() if self.anchoring else None
                backlogs = await asyncio.gather(*(self.backlogs[name]() for name in names))
                queues = await asyncio.gather(*(self.queues[name](TOP_GRAPHS) for name in queued))
        except Exception as e:  # Neo4j away or slow: leave its figures out, say so
            log.warning("metrics: Neo4j's figures left out of this scrape: %s", type(e).__name__)
            return None
        return _Sample(
            anchoring, dict(zip(names, backlogs, strict=True)), dict(zip(queued, queues, strict=True))
        )


@dataclass(frozen=True)
class _Sample:
    anchoring: AnchoringGauges | None
    backlogs: dict[str, int]
    queues: dict[str, QueueGauges]


class _Sampled(Collector):
    """The figures read from Neo4j at the current scrape."""

    sample: _Sample | None = None

    def collect(self) -> Iterator[Metric]:
        sample = self.sample
        yield GaugeMetricFamily(
            "graphsvc_neo4j_sample_success",
            "1 when this scrape read the figures Neo4j holds, else 0 (they are left out)",
            value=0 if sample is None else 1,
        )
        if sample is None:
            return
        if sample.anchoring is not None:
            yield from _anchoring(sample.anchoring)
        backlog = GaugeMetricFamily(
            "graphsvc_backlog", "Unfinished work of each background worker", labels=["worker"]
        )
        for worker, count in sample.backlogs.items():
            backlog.add_metric([worker], count)
        for worker, queue in sample.queues.items():
            backlog.add_metric([worker], queue.waiting)
        yield backlog
        yield from _queues(sample.queues)


def _queues(queues: Mapping[str, QueueGauges]) -> Iterator[Metric]:
    graphs = GaugeMetricFamily(
        "graphsvc_graph_backlog",
        f"Memories waiting for a background worker in each of the {TOP_GRAPHS} graphs where most wait (by "
        "graph key: a hash of the graph's name, the memories' graphKey) and in all others (`other`)",
        labels=["worker", "graph"],
    )
    aside = GaugeMetricFamily(
        "graphsvc_set_aside",
        "Memories a background worker cannot read (no text, or a text its model raises on), out of its "
        "backlog",
        labels=["worker"],
    )
    for worker, queue in queues.items():
        for key, count in queue.graphs.items():
            graphs.add_metric([worker, key], count)
        aside.add_metric([worker], queue.set_aside)
    yield graphs
    yield aside


class _Workers(Collector):
    """Each background worker's state, as it is now."""

    def __init__(self, probes: dict[str, WorkerProbe], waits: dict[str, WaitProbe]) -> None:
        self._probes = probes
        self._waits = waits

    def collect(self) -> Iterator[Metric]:
        failing = GaugeMetricFamily(
            "graphsvc_worker_failing",
            "1 while a background worker's step fails (retried with back-off), else 0",
            labels=["worker"],
        )
        age = GaugeMetricFamily(
            "graphsvc_worker_last_success_age_seconds",
            "Seconds since a background worker's step last succeeded (absent before the first)",
            labels=["worker"],
        )
        waited = GaugeMetricFamily(
            "graphsvc_worker_wait_seconds",
            "The longest that a memory a background worker claimed in its current or last round over the "
            "graphs had waited (absent before its first round; /health calls the worker behind past a "
            "setting)",
            labels=["worker"],
        )
        for worker, probe in self._probes.items():
            state = probe()
            failing.add_metric([worker], 0 if state.ok else 1)
            if state.last_success_age_s is not None:
                age.add_metric([worker], state.last_success_age_s)
        for worker, wait in self._waits.items():
            if (seconds := wait()) is not None:
                waited.add_metric([worker], seconds)
        yield failing
        yield age
        yield waited


def _anchoring(gauges: AnchoringGauges) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "graphsvc_memories_pending",
        "Memories no batch holds yet, across every graph",
        value=gauges.memories_pending,
    )
    batches = GaugeMetricFamily(
        "graphsvc_batches", "Batches by status, across every graph", labels=["status"]
    )
    for status, count in gauges.batches.items():
        batches.add_metric([status], count)
    yield batches
    if gauges.last_finalized_at is not None:
        yield GaugeMetricFamily(
            "graphsvc_last_finalized_anchor_age_seconds",
            "Seconds since the block of the newest finalized batch (absent before the first)",
            value=max(0.0, time.time() - gauges.last_finalized_at),
        )
