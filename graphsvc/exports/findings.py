"""What every rule of an export's pass shares: a finding, a batch as seen, and how a string from the
file is shown (inert)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from graphsvc.exports.format import BatchLine

Find = Callable[[int | None, str, str], None]  # (line, rule, text)
Shown = Callable[[object], str]

SHOWN = 60  # the longest string from the file a message quotes


def inert(value: object, width: int = SHOWN) -> str:
    """A string from the file as a message may show it: control and format characters (newlines,
    escapes, bidi overrides) escaped, and cut to `width`."""
    text = str(value)
    out: list[str] = []
    for ch in text[: width + 1]:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or ch == "\\":
            out.append(ch.encode("unicode_escape").decode("ascii") if ch != "\\" else "\\\\")
        else:
            out.append(ch)
    shown = "".join(out)
    return shown[:width] + "…" if len(text) > width else shown


@dataclass(frozen=True)
class Finding:
    line: int | None  # None: about the whole file
    rule: str
    text: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        return f"{where}: [{self.rule}] {self.text}"


@dataclass
class BatchSeen:
    line: int
    batch: BatchLine
    members: int = 0
