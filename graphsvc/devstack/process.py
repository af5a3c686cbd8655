"""Start and stop the local servers by pid, reaping the ones this process started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

# Servers this process started, kept so that they are reaped (not left as zombies) when stopped.
_children: dict[int, subprocess.Popen[bytes]] = {}


def spawn(command: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, start_new_session=True, **kwargs)  # type: ignore[call-overload]
    _children[process.pid] = process
    return process


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def port_free(port: int) -> bool:
    """Nothing listens on `port` (TIME_WAIT sockets of a stopped server do not count: the server
    itself binds with SO_REUSEADDR, so the probe does too)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def terminate(pid: int, timeout: float) -> bool:
    """SIGTERM to its process group (a launcher and what it started), wait up to `timeout`, then
    SIGKILL; True if it was running."""
    child = _children.pop(pid, None)
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(pid, signal.SIGKILL)
            child.wait()
        return True
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.killpg(pid, signal.SIGKILL)
    return True
