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
from collections.abc import Callable, Iterator
from typing import IO, Any

MAX_LINE = 8_000_000
MAX_RUN = 1 << 20  # empty lines read as one item: a flood of line feeds costs no time per line
MAX_DIGITS = 20  # an integer of the format is at most 2**64 - 1
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # an escaped UTF-16 surrogate (paired or lone)


class Unreadable(ValueError):
    """A line that is not one strict JSON object: the reason, in words (never quoting the line)."""


def bounded_lines(source: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary file, each cut to MAX_LINE + 1 bytes (the rest of a longer line skipped):
    what `parse` then refuses by its length, without reading it into memory. From a buffered file, a
    run of empty lines comes as one item of up to MAX_RUN line feeds, each a line (what
    checks.check_lines counts so)."""
    peek: Callable[[int], bytes] | None = getattr(source, "peek", None)
    while line := source.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := source.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
        elif line == b"\n" and peek is not None:
            line += _line_feeds(source, peek)
        yield line


def _line_feeds(source: IO[bytes], peek: Callable[[int], bytes]) -> bytes:
    """The line feeds next in `source`, read (fewer than MAX_RUN)."""
    count = 0
    while ahead := peek(1)[: MAX_RUN - 1 - count]:  # peek gives what is buffered, maybe more than 1
        feeds = len(ahead) - len(ahead.lstrip(b"\n"))
        source.read(feeds)
        count += feeds
        if feeds < len(ahead) or not feeds:
            break
    return b"\n" * count


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


_JSON_STARTS = frozenset(b'{["-0123456789tfnNI \t\r')  # what a JSON text may start with (or NaN)
_DECODER = json.JSONDecoder(  # made once: making one a line was a third of a flood's time
    object_pairs_hook=_unique_keys, parse_constant=_constant, parse_float=_float, parse_int=_int
)


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
    if raw[0] not in _JSON_STARTS:  # a flood of garbage lines refused without a parser each
        raise Unreadable("not JSON (JSONDecodeError)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8") from None
    try:
        value = _DECODER.decode(text)  # a byte-order mark is not JSON to it either
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
