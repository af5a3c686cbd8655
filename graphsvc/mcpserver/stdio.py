"""MCP over stdio: one JSON-RPC message a line on stdin and stdout, and nothing else on stdout.

While it serves, file descriptor 1 points at stderr and 0 at the null device, so a stray `print` or a
child process cannot corrupt the stream (as the SDK's `stdio_server` does); the wire is a private
copy of each. Unlike the SDK's transport, every line gets an answer or reaches the server:

    not JSON                      -> JSON-RPC error -32700 (parse error), id null
    JSON, not a JSON-RPC message  -> -32600 (invalid request), with the message's id when it has one
    over MAX_LINE bytes           -> -32600, with the id when it leads the message; the rest of the
                                     line is read and dropped, never held in memory
    stdin closed                  -> the calls in flight are answered, then `serve` returns (the SDK's
                                     server would answer them "Connection closed" at once)
    stdout closed by the client   -> `ClientGone` (the answer being written is lost; what its call
                                     did stays done), the other work cancelled

Lines are read by a daemon thread, so a process that ends while its client still holds stdin open
does not wait on the read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Generator, Iterator
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server import Server
from mcp.server.models import InitializationOptions
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

log = logging.getLogger("graphsvc")
MAX_LINE = 4 * 1024 * 1024  # the MCP SDK's limit on an HTTP request body, for one line here
_QUEUED = 16  # lines read ahead of the server
IN_FLIGHT_WAIT_S = 120  # the longest stdin closing waits for answers (anchor_now waits for finality)
# An id among the members that lead a message (`{"jsonrpc": "2.0", "id": 7, "method": ...}`), found
# without parsing a line too long to parse.
_LEADING_ID = re.compile(
    rb'^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,\s*)*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")'
)


class ClientGone(Exception):
    """The client closed its end of stdout: no answer can reach it any more."""


@dataclass(frozen=True)
class _Oversized:
    head: bytes  # the line's first bytes, where its id may be


_Line = bytes | _Oversized | None  # None: stdin closed


@contextmanager
def claimed_stdio() -> Generator[tuple[BinaryIO, BinaryIO]]:
    """Private copies of stdin and stdout for the wire; fd 0 reads the null device and fd 1 writes to
    stderr meanwhile, and both are restored after."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        yield os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def _lines(source: BinaryIO, limit: int) -> Iterator[_Line]:
    """The lines of `source`, each at most `limit` bytes, else its head; then None."""
    while line := source.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while (rest := source.readline(limit)) and not rest.endswith(b"\n"):
            pass  # the rest of an oversized line, dropped as it is read
        yield _Oversized(line[:4096])
    yield None


def _reader(
    source: BinaryIO, limit: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[_Line]
) -> None:
    """Feeds `queue` from `source` (in a daemon thread) until stdin closes or the loop is gone."""
    try:
        for line in _lines(source, limit):
            asyncio.run_coroutine_threadsafe(queue.put(line), loop).result()
    except (
        RuntimeError,
        OSError,
        ValueError,
        CancelledError,
    ):  # the loop closed (its put cancelled), or stdin
        pass


class _InFlight:
    """The requests the server has not answered yet, so that stdin closing ends the session only after
    they are (the SDK's server would answer them "Connection closed" at once)."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.idle = anyio.Event()
        self.idle.set()

    def sent(self, message: SessionMessage) -> None:
        sent = message.message
        if isinstance(sent, JSONRPCRequest):
            if not self.ids:
                self.idle = anyio.Event()
            self.ids.add(sent.id)
        elif isinstance(sent, JSONRPCNotification) and sent.method == "notifications/cancelled":
            self._done((sent.params or {}).get("requestId"))  # a cancelled request gets no answer

    def answered(self, message: SessionMessage) -> None:
        if isinstance(message.message, JSONRPCResponse | JSONRPCError):
            self._done(message.message.id)

    def _done(self, request_id: Any) -> None:
        if self.ids:
            self.ids.discard(request_id)
            if not self.ids:
                self.idle.set()


def _error(code: int, message: str, request_id: Any = None) -> SessionMessage:
    valid = isinstance(request_id, int | str) and not isinstance(request_id, bool)
    error = ErrorData(code=code, message=message)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id if valid else None, error=error))


def _message(line: bytes | _Oversized, limit: int) -> SessionMessage | tuple[SessionMessage, str]:
    """A line as a message for the server, or the error to answer (with what to log)."""
    if isinstance(line, _Oversized):
        found = _LEADING_ID.match(line.head)
        request_id = json.loads(found.group(1)) if found else None
        text = f"a message over {limit:,} bytes is refused"
        return _error(INVALID_REQUEST, text, request_id), text
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValidationError:
        pass
    try:
        parsed: object = json.loads(line)
    except (ValueError, RecursionError):
        return _error(PARSE_ERROR, "Parse error: the line is not JSON"), "a line that is not JSON"
    request_id = cast(dict[str, Any], parsed).get("id") if isinstance(parsed, dict) else None
    text = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    return _error(INVALID_REQUEST, text, request_id), text


async def _pump_in(
    queue: asyncio.Queue[_Line],
    to_server: ObjectSendStream[SessionMessage | Exception],
    answers: ObjectSendStream[SessionMessage],
    limit: int,
    in_flight: _InFlight,
) -> None:
    async with to_server, answers:
        while (line := await queue.get()) is not None:
            if isinstance(line, bytes) and not line.strip():
                continue
            read = _message(line, limit)
            if isinstance(read, SessionMessage):
                in_flight.sent(read)
                await to_server.send(read)
            else:
                log.warning("stdio: %s; answered with a JSON-RPC error", read[1])
                await answers.send(read[0])
        with anyio.move_on_after(IN_FLIGHT_WAIT_S):  # stdin closed: the calls in flight are answered first
            await in_flight.idle.wait()


async def _pump_out(
    messages: ObjectReceiveStream[SessionMessage], wire: BinaryIO, in_flight: _InFlight
) -> None:
    async with messages:
        async for message in messages:
            data = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write, wire, data)
            in_flight.answered(message)


def _write(wire: BinaryIO, data: bytes) -> None:
    wire.write(data)
    wire.flush()


async def serve(
    server: Server[Any],
    options: InitializationOptions,
    wire_in: BinaryIO,
    wire_out: BinaryIO,
    *,
    limit: int = MAX_LINE,
) -> None:
    """Serve `server` over the two streams until `wire_in` closes and the calls in flight are answered."""
    queue: asyncio.Queue[_Line] = asyncio.Queue(_QUEUED)
    loop = asyncio.get_running_loop()
    threading.Thread(
        target=_reader, args=(wire_in, limit, loop, queue), name="graphsvc-stdin", daemon=True
    ).start()
    to_server, from_stdin = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    answers, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    in_flight = _InFlight()
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_pump_out, outgoing, wire_out, in_flight)
            async with answers:  # the output ends once the server and the input pump have closed theirs
                tasks.start_soon(_pump_in, queue, to_server, answers.clone(), limit, in_flight)
                async with answers.clone() as to_client:
                    await server.run(from_stdin, to_client, options)
    except BaseExceptionGroup as failed:
        if failed.subgroup(BrokenPipeError) is None:
            raise
        raise ClientGone("the client closed stdout; stopping") from None
