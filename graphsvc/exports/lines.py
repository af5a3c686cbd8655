"""Reading an export's lines as an attacker may have written them: bounded, strict, never a traceback.

A line is one JSON object in UTF-8 and ends with a line feed (LF) alone: no carriage return before
it, no blank line, at most MAX_LINE bytes (a longer line is skipped in chunks, never held whole).
Its JSON is strict: an object key appears once (a repeated key is how one value is shown to one reader
and another to the next), numbers are finite (no NaN or Infinity, no number too large for a double),
integers have at most MAX_DIGITS digits; a string holds no lone UTF-16 surrogate (no UTF-8 for it). What breaks one of these is a `json` finding: the file cannot
be read, whatever else it holds (`graphsvc audit` exits 2).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import IO, Any

MAX_LINE = 8_000_000
MAX_DIGITS = 20  # an integer of the format is at most 2**64 - 1
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # an escaped UTF-16 surrogate (paired or lone)


class Unreadable(ValueError):
    """A line that is not one strict JSON object: the reason, in words (never quoting the line)."""


def bounded_lines(source: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary file, each cut to MAX_LINE + 1 bytes (the rest of a longer line skipped):
    what `parse` then refuses by its length, without reading it into memory."""
    while line := source.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := source.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
        yield line


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise Unreadable(f"the key {json.dumps(key)[:40]} appears twice in one object")
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise Unreadable(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Unreadable("a number too large for a double")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise Unreadable(f"an integer of more than {MAX_DIGITS} digits")
    return int(text)


def parse(raw: bytes) -> Any:
    """The JSON value of one line.

    Raises:
        Unreadable: the line breaks a rule above.
    """
    if len(raw) > MAX_LINE:
        raise Unreadable(f"over {MAX_LINE:,} bytes: a line is at most {MAX_LINE:,}")
    if not raw.endswith(b"\n"):
        raise Unreadable("the line does not end with a line feed (the file was cut short?)")
    if raw.endswith(b"\r\n"):
        raise Unreadable("the line ends with CR LF: an export's lines end with LF alone")
    if not raw.strip():
        raise Unreadable("an empty line: an export has none")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8") from None
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
        )
    except Unreadable:
        raise
    except (json.JSONDecodeError, RecursionError, ValueError) as e:
        raise Unreadable(f"not JSON ({type(e).__name__})") from None
    if _SURROGATE.search(raw) and not _encodable(value):
        raise Unreadable("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff): it is not text")
    return value


def _encodable(value: Any) -> bool:
    """Whether every string of `value` (keys too) encodes to UTF-8."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        elif isinstance(item, list):
            stack += item  # pyright: ignore[reportUnknownArgumentType]
    return True
