"""How long the sentences of Markdown pages are, in words: median and 90th percentile, over the pages
given and page by page.

    .venv/bin/python scripts/sentences.py docs/*.md

Prose only: fenced code, tables, headings and HTML comments are left out; a link counts as its text.
A sentence ends at `.`, `!` or `?` followed by a space and more text, or at the end of a paragraph or
list item; a colon or semicolon does not end one.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"*_0-9])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")


def paragraphs(text: str) -> list[str]:
    """The page's prose, a paragraph or list item each, joined onto one line."""
    text = _LINK.sub(r"\1", _COMMENT.sub("", _FENCE.sub("", text)))
    found: list[str] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        starts = re.match(r"([-*+]|\d+\.)\s", stripped)
        if not stripped or stripped.startswith(("#", "|", ">")) or starts:
            if current:
                found.append(" ".join(current))
            current = [stripped[starts.end() :]] if starts else []
            if stripped.startswith(">"):
                current = [stripped.lstrip("> ")]
        else:
            current.append(stripped)
    return [p for p in found if p.strip()]


def sentences(text: str) -> list[str]:
    found: list[str] = []
    for paragraph in paragraphs(text):
        protected = paragraph
        for abbreviation in _ABBREVIATIONS:
            protected = protected.replace(abbreviation + " ", abbreviation.replace(".", "\0") + " ")
        found += [s.replace("\0", ".") for s in _END.split(protected) if s.strip()]
    return found


def lengths(paths: list[Path]) -> list[int]:
    return [len(s.split()) for path in paths for s in sentences(path.read_text())]


def _figures(counts: list[int]) -> str:
    if not counts:
        return "no sentences"
    p90 = statistics.quantiles(counts, n=10)[-1] if len(counts) > 1 else counts[0]
    return f"{len(counts):4d} sentences, median {statistics.median(counts):4.1f}, p90 {p90:5.1f}, max {max(counts)}"


def main(args: list[str]) -> None:
    paths = [Path(a) for a in args]
    for path in paths:
        print(f"{path}: {_figures(lengths([path]))}")
    print(f"all: {_figures(lengths(paths))}")


if __name__ == "__main__":
    main(sys.argv[1:])
