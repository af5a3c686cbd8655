"""What every rule of an export's pass shares: a finding, the findings kept (the first MAX_KEPT, the
rest counted), a batch as seen, and how a string from the file is shown (inert)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from graphsvc.exports.format import BatchLine

Find = Callable[[int | None, str, str], None]  # (line, rule, text)
Shown = Callable[[object], str]

SHOWN = 60  # the longest string from the file a message quotes
MAX_KEPT = 100  # findings kept whole; the rest are counted, so a flood of bad lines costs no memory


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
class Findings:
    """The problems found: the first MAX_KEPT kept, every later one counted (`more`) with its rule."""

    kept: list[Finding] = field(default_factory=list[Finding])
    more: int = 0
    rules: set[str] = field(default_factory=set[str])  # of every finding, kept or counted

    def add(self, line: int | None, rule: str, text: str | Callable[[], str], times: int = 1) -> None:
        """A finding (`times` alike: lines `line`, `line + 1`, ... when `line` is given); `text` may be
        a function that words it, called only for a finding kept."""
        self.rules.add(rule)
        room = max(0, min(times, MAX_KEPT - len(self.kept)))
        if room:
            said = text if isinstance(text, str) else text()
            self.kept += [Finding(None if line is None else line + i, rule, said) for i in range(room)]
        self.more += times - room

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.add(f.line, f.rule, f.text)

    @property
    def count(self) -> int:
        """Every finding, kept or counted (not a __len__: list() would make room for them all)."""
        return len(self.kept) + self.more

    def __bool__(self) -> bool:
        return bool(self.kept)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.kept)

    def __add__(self, other: Findings) -> Findings:
        both = Findings(list(self.kept), self.more, self.rules | other.rules)
        both.extend(other.kept)
        both.more += other.more
        return both


@dataclass
class BatchSeen:
    line: int
    batch: BatchLine
    members: int = 0
