"""A TCP proxy that can be cut and restored: a real outage of a real dependency (Neo4j's Bolt port, the
chain's RPC) for one client, while the dependency itself keeps serving the other tests."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to `target`, in a thread with its own event loop. `cut()` drops every
    connection and refuses new ones (as a stopped server does); `restore()` accepts again."""

    def __init__(self, host: str, port: int):
        self._target = (host, port)
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.restore()

    def _call(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)  # type: ignore[arg-type]

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._pipes.add(writer)
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._pipes.discard(writer)
            writer.close()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(*self._target)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(self._pipe(client_r, server_w), self._pipe(server_r, client_w))

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port, reuse_address=True)

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._pipes):
            with contextlib.suppress(Exception):
                writer.transport.abort()

    def restore(self) -> None:
        if self._server is None:
            self._call(self._start())

    def cut(self) -> None:
        self._call(self._stop())

    def close(self) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
