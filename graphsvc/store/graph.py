"""The Neo4j adapter: runs the statements of `cypher/` and translates driver errors.

The only module that talks to Neo4j. Every statement is scoped by `graph`; nothing from a request is
ever formatted into Cypher text (labels and relation types travel as `$(...)` dynamic parameters).
Each statement's time, by name, goes to the `observe` callback it is handed (the app's metrics): the
store itself knows nothing of how it is measured.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from importlib.metadata import version
from typing import Any, TypeVar, cast

import neo4j
from neo4j import AsyncDriver, AsyncManagedTransaction, RoutingControl
from neo4j import exceptions as neo4j_errors

from graphsvc.domain.reserved import NAMES
from graphsvc.errors import Conflict, InvalidInput, NotConfigured, Refused, Unavailable
from graphsvc.store.cypher import Statement, load

T = TypeVar("T")
Row = dict[str, Any]
# (The driver types its **config keyword arguments as unknown: the calls that take them say
# `pyright: ignore[reportUnknownMemberType]`.)
Observer = Callable[[str, float], None]  # (statement name, seconds)
log = logging.getLogger("graphsvc")

# The schema of cypher/schema/, marked on the database at start-up (GraphsvcSchema). Raise it with a change
# that an existing database needs an upgrade step for, and add that step for the databases marked below it.
# Schema 2: the vector index holds each memory's graphKey (Neo4j 2026.02+ filters inside the index). An
# index made otherwise (without it, or quantized) is found by what it is, not by the marker, and dropped
# first (schema/old_vector_index.cypher): a start-up stopped while the new one populated keeps it next time.
SCHEMA_VERSION = 2
INDEX_POLL_S = 0.2  # start-up's wait for the indexes still building: how often it looks
INDEX_PROGRESS_S = 10.0  # and how often it logs how far they have come
VERSION = version("graphsvc")
# The oldest Neo4j whose Cypher has what cypher/ uses: vector indexes with filter properties and the
# SEARCH clause (Cypher 25, generally available from 2026.02). Tested on 2026.09.0.
MIN_NEO4J = "2026.02"
_OUT_OF_RANGE = {
    "Neo.ClientError.Statement.ArithmeticError",
    "Neo.ClientError.Statement.ArgumentError",
    "Neo.ClientError.Statement.TypeError",
}


@asynccontextmanager
async def _translated(deadline_s: float | None) -> AsyncGenerator[None]:
    """Every driver error as a GraphsvcError, and no wait longer than `deadline_s` (None: unbounded)."""
    try:
        async with asyncio.timeout(deadline_s):
            yield
    except TimeoutError as e:
        raise Unavailable(f"Neo4j did not answer within {deadline_s:g} s") from e
    except neo4j_errors.ConstraintError as e:
        raise Conflict("that id already exists in this graph") from e
    except neo4j_errors.CypherSyntaxError as e:
        raise InvalidInput("the request could not be turned into a valid query") from e
    except neo4j_errors.AuthError as e:
        raise NotConfigured("Neo4j refused graphsvc's credentials (GRAPHSVC_NEO4J_USER / _PASSWORD)") from e
    except neo4j_errors.ClientError as e:
        if e.code in _OUT_OF_RANGE:
            raise InvalidInput("a value is out of the range the database can store") from e
        log.error("Neo4j refused a statement: %s", e.code)
        raise Refused("Neo4j could not run the request") from e
    except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as e:
        # unreachable, restarting, a transient conflict that outlived the driver's retries
        raise Unavailable("Neo4j cannot be reached") from e


class GraphStore:
    """Runs named statements against one database; handed a driver, never creates one."""

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        statements: dict[str, Statement] | None = None,
        *,
        deadline_s: float = 10,
        observe: Observer | None = None,
    ):
        self._driver = driver
        self._database = database
        self.statements = statements if statements is not None else load()
        self.deadline_s = deadline_s
        self._observe = observe

    @contextmanager
    def timed(self, name: str) -> Generator[None, None, None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            if self._observe is not None:
                self._observe(name, time.perf_counter() - started)

    def statement(self, name: str, params: dict[str, Any]) -> Statement:
        """The named statement, checked to take exactly `params`."""
        statement = self.statements[name]
        if frozenset(params) != statement.params:
            raise TypeError(f"{name} takes {sorted(statement.params)}, given {sorted(params)}")
        return statement

    async def run(self, name: str, **params: Any) -> list[Row]:
        """Run one statement in its own managed transaction (reads are routed to readers).

        Raises:
            Unavailable: Neo4j did not answer within the deadline.
        """
        return await self._execute(name, params, self.deadline_s)

    async def _execute(self, name: str, params: dict[str, Any], deadline_s: float | None) -> list[Row]:
        statement = self.statement(name, params)
        routing = RoutingControl.READ if statement.mode == "read" else RoutingControl.WRITE
        with self.timed(name):
            async with _translated(deadline_s):
                records, _, _ = await self._driver.execute_query(
                    statement.text, params, database_=self._database, routing_=routing
                )
        # Statements return plain values, lists and maps (never nodes), which the driver already
        # decoded: Record.data()'s recursive copy cost a quarter of recall's time in the profile.
        return [_row(record) for record in records]

    async def write_transaction(
        self, work: Callable[[Transaction], Awaitable[T]], *, bounded: bool = True
    ) -> T:
        """Run several statements in one write transaction; any error rolls all of them back.
        `bounded`: give up after the deadline (not for work whose size the caller does not bound)."""
        deadline = self.deadline_s if bounded else None
        # The bookmark manager of `run`'s reads: on a cluster, a read that follows waits for this write
        # on whichever member serves it (causal consistency), as it does after a `run` write.
        bookmarks = self._driver.execute_query_bookmark_manager
        async with (
            _translated(deadline),
            self._driver.session(database=self._database, bookmark_manager=bookmarks) as session,  # pyright: ignore[reportUnknownMemberType]
        ):
            return await session.execute_write(lambda tx: work(Transaction(self, tx)))

    async def apply_schema(self) -> list[str]:
        """Check the server and which schema wrote the database, drop a vector index an older graphsvc
        made, create what `cypher/schema/` declares (`IF NOT EXISTS`), wait until every index is online,
        then mark the database with SCHEMA_VERSION and graphsvc's version; returns the statements applied.

        Raises:
            NotConfigured: the server is older than MIN_NEO4J, a newer schema than SCHEMA_VERSION
                wrote the database, or an index failed to build.
        """
        await self._check_version()
        marker = await self._execute("schema/marker", {}, None)
        _refuse_newer(marker)
        for mended in await self._execute("schema/unplant", {"reserved": sorted(NAMES)}, None):
            log.warning(
                "entity %s of graph %s carried graphsvc's own label(s) %s (planted before labels were "
                "checked): removed",
                mended["id"],
                mended["graph"],
                ", ".join(mended["planted"]),
            )
        old = await self._execute("schema/old_vector_index", {}, None)
        if old and old[0]["old"]:
            await self._execute("schema/drop_vector_index", {}, None)
        names = sorted(
            n for n, s in self.statements.items() if s.mode == "schema" and n != "schema/drop_vector_index"
        )
        for name in names:
            await self._execute(name, {}, None)
        await self._await_indexes()
        _refuse_newer(
            await self._execute("schema/mark", {"version": SCHEMA_VERSION, "writtenBy": VERSION}, None)
        )
        return names

    async def _await_indexes(self) -> None:
        """Until every index is online, logging which are building and how far they have come every
        INDEX_PROGRESS_S (a vector index made again over a million memories takes minutes here).

        Raises:
            NotConfigured: an index failed to build.
        """
        logged = None
        while building := await self._execute("schema/building_indexes", {}, None):
            if failed := [row["name"] for row in building if row["state"] == "FAILED"]:
                raise NotConfigured(
                    f"Neo4j failed to build the index {', '.join(failed)} (its log says why); drop it "
                    "(DROP INDEX name) and start graphsvc again to make it again"
                )
            if logged is None or time.monotonic() - logged >= INDEX_PROGRESS_S:
                log.warning(
                    "waiting for Neo4j to build %s",
                    ", ".join(f"{row['name']} ({row['populationPercent']:.0f}%)" for row in building),
                )
                logged = time.monotonic()
            await asyncio.sleep(INDEX_POLL_S)

    async def _check_version(self) -> None:
        async with _translated(None):
            records, _, _ = await self._driver.execute_query(
                "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0] AS v",
                database_=self._database,
            )
        version = records[0]["v"] if records else ""
        if too_old(version):
            raise NotConfigured(
                f"Neo4j {version} is too old: graphsvc needs Neo4j {MIN_NEO4J} or later (vector search "
                "filtered by graph, Cypher 25); upgrade the server (docs/running.md)"
            )

    async def ping(self, timeout_s: float = 3) -> bool:
        try:
            async with asyncio.timeout(timeout_s):
                await self._driver.verify_connectivity()  # pyright: ignore[reportUnknownMemberType]
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError, TimeoutError):
            return False
        return True

    async def close(self) -> None:
        await self._driver.close()

    async def explain(self, name: str) -> None:
        """Plan a statement without running it (every parameter null)."""
        statement = self.statements[name]
        query = "EXPLAIN " + statement.text
        async with self._driver.session(database=self._database) as session:  # pyright: ignore[reportUnknownMemberType]
            result = await session.run(query, dict.fromkeys(statement.params))  # type: ignore[arg-type]
            await result.consume()


class Transaction:
    """Named statements inside one managed transaction."""

    def __init__(self, store: GraphStore, tx: AsyncManagedTransaction):
        self._store, self._tx = store, tx

    async def run(self, name: str, **params: Any) -> list[Row]:
        statement = self._store.statement(name, params)
        with self._store.timed(name):
            result = await self._tx.run(statement.text, params)
            return [_row(record) async for record in result]


def too_old(version: str) -> bool:
    """A Neo4j version ("5.26.31", "2026.09.0", "2026.09-aura") older than MIN_NEO4J, or none."""

    def year_month(text: str) -> tuple[int, int]:
        found = re.match(r"(\d+)\.(\d+)", text)
        return (int(found[1]), int(found[2])) if found else (0, 0)

    return year_month(version) < year_month(MIN_NEO4J)


def _row(record: neo4j.Record) -> Row:
    return dict(zip(record.keys(), cast(tuple[Any, ...], record), strict=True))


def _refuse_newer(rows: list[Row]) -> None:
    """The marker's schema, refused when newer than this graphsvc's.

    Raises:
        NotConfigured: it is newer.
    """
    if rows and (rows[0]["version"] or 0) > SCHEMA_VERSION:
        raise NotConfigured(
            f"this database was written by graphsvc {rows[0]['writtenBy']} (schema {rows[0]['version']}); "
            f"graphsvc {VERSION} knows schema {SCHEMA_VERSION} at most: run that version or a newer one"
        )


def create_driver(
    uri: str, user: str, password: str, *, max_pool: int = 50, deadline_s: float = 10
) -> AsyncDriver:
    """A driver whose waits during an outage (connecting, a free connection, retrying a transaction)
    end within `deadline_s`, not the driver's defaults of 30 to 60 s."""
    return neo4j.AsyncGraphDatabase.driver(  # pyright: ignore[reportUnknownMemberType]
        uri,
        auth=(user, password),
        max_connection_pool_size=max_pool,
        notifications_min_severity="OFF",
        connection_timeout=min(5.0, deadline_s),
        connection_acquisition_timeout=deadline_s,
        max_transaction_retry_time=deadline_s,
    )
