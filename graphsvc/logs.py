"""Log lines: JSON (one object a line) or plain text, each carrying the id of the request it belongs
to, none carrying a secret (a leaf: stdlib and the settings only).

    {"time": "2026-12-04T09:12:03.512Z", "level": "info", "logger": "graphsvc.access",
     "message": "POST /v1/recall 200", "request_id": "4f0c...", "method": "POST",
     "route": "/v1/recall", "status": 200, "duration_ms": 12.4, "tool": "recall"}

A request's id is the caller's `X-Request-Id` when it is well-formed, else a new one; the HTTP edge
binds it for the request (`bound`), so every line logged meanwhile carries it. Each line is scrubbed
before it is written: bearer credentials, `gsk_` tokens, and the configured secrets (the Neo4j
password, the signing key, the RPC URL's credentials, path and query) become `[redacted]`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, Literal
from urllib.parse import urlsplit

from graphsvc.config import Settings

Format = Literal["json", "plain"]
ACCESS = logging.getLogger("graphsvc.access")
REDACTED = "[redacted]"
_WELL_FORMED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_CREDENTIALS = re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;]+|gsk_[A-Za-z0-9_-]+")
_MIN_SECRET = 6  # shorter values would scrub ordinary words


@dataclass
class RequestInfo:
    """What the edge knows of one HTTP request, filled in as it is answered."""

    id: str
    transport: str  # rest, mcp-http or mcp-sse
    tool: str | None = None
    code: str | None = None  # the error code answered, if any


_current: ContextVar[RequestInfo | None] = ContextVar("graphsvc_request", default=None)
SCOPE_KEY = "graphsvc_request"  # where the edge leaves the RequestInfo in the ASGI scope's state


def request_id(header: str | None) -> str:
    """The caller's X-Request-Id when well-formed (1-128 letters, digits, `.`, `_`, `:`, `-`), else a new one."""
    return header if header and _WELL_FORMED.fullmatch(header) else uuid.uuid4().hex


def current() -> RequestInfo | None:
    return _current.get()


def of_scope(scope: dict[str, Any]) -> RequestInfo | None:
    """The RequestInfo the edge left in an ASGI scope (the MCP tools read it from their request's)."""
    return scope.get("state", {}).get(SCOPE_KEY)


@contextmanager
def bound(info: RequestInfo) -> Generator[None, None, None]:
    """`info` is the current request while the block runs."""
    token = _current.set(info)
    try:
        yield
    finally:
        _current.reset(token)


def secrets_of(settings: Settings) -> list[str]:
    """The configured values no line may hold."""
    values = [settings.neo4j.password.get_secret_value()]
    if settings.chain.private_key is not None:
        key = settings.chain.private_key.get_secret_value()
        values += [key, key.removeprefix("0x")]
    if settings.chain.rpc_url:
        values += _url_secrets(settings.chain.rpc_url)
    return [value for value in values if len(value) >= _MIN_SECRET]


def _url_secrets(url: str) -> list[str]:
    """What providers put keys in: credentials, path and query (scheme, host and port may show)."""
    try:
        parts = urlsplit(url)
        password = parts.password or ""
    except ValueError:
        return [url]
    return [parts.netloc.rpartition("@")[0], password, parts.path, parts.query]


class Scrubber:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        kept = {s for s in secrets if len(s) >= _MIN_SECRET}
        kept |= {json.dumps(s)[1:-1] for s in kept}  # as a JSON line writes it
        self._secrets = sorted(kept, key=len, reverse=True)  # a longer one first: it may hold a shorter

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return _CREDENTIALS.sub(_redact_credential, text)


def _redact_credential(match: re.Match[str]) -> str:
    scheme = match.group(1)
    return f"{scheme} {REDACTED}" if scheme else REDACTED


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    info = current()
    if info is not None:
        fields["request_id"] = info.id
    fields.update(getattr(record, "fields", {}))
    return fields


class JsonFormatter(logging.Formatter):
    def __init__(self, scrub: Scrubber) -> None:
        super().__init__()
        self._scrub = scrub

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")[:-6] + "Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **_fields(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return self._scrub(json.dumps(line, default=str, ensure_ascii=False))


class PlainFormatter(logging.Formatter):
    def __init__(self, scrub: Scrubber) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._scrub = scrub

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{key}={value}" for key, value in _fields(record).items())
        text = super().format(record)
        return self._scrub(f"{text} [{fields}]" if fields else text)


def handler(fmt: Format, secrets: Iterable[str] = (), stream: IO[str] | None = None) -> logging.Handler:
    """A handler writing `fmt` lines to `stream` (stderr), scrubbed of `secrets` and credentials."""
    out = logging.StreamHandler(stream or sys.stderr)
    scrub = Scrubber(secrets)
    out.setFormatter(JsonFormatter(scrub) if fmt == "json" else PlainFormatter(scrub))
    return out


def configure(settings: Settings, default: Format) -> None:
    """Every line of the process through one handler: graphsvc's at the configured level (INFO: one
    line per request), libraries' from WARNING."""
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler(settings.log.format or default, secrets_of(settings)))
    root.setLevel(logging.WARNING)
    logging.getLogger("graphsvc").setLevel(settings.log.level)
