"""A flood of empty or malformed lines, read by `graphsvc audit` and by an import's first pass (issue 43,
item 7): the time and the peak memory of each, in a process of its own.

Three readers: the audit alone (`audit.audit` on the file, in a process that has imported only it);
`graphsvc audit FILE --rpc …` (the command, with its start-up; the file cannot be read, so the RPC is
never asked); and an import reading the flood through a pipe, as `cat FLOOD | graphsvc import-export
/dev/stdin` does, with its first pass (exports/importer.py: the checks, the spool): the file is refused
there, before the store is asked anything, so no Neo4j is needed. `--tree DIR` runs the audit alone
from another checkout's graphsvc/ (before the exports room: `git archive d1fa0e0 graphsvc | tar -x -C
DIR`), to compare.

    .venv/bin/python bench/export_flood.py [--mb 4 50] [--kinds lf x] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

UNITS = {"lf": b"\n", "x": b"x\n", "crlf": b"\r\n"}
IMPORT = """
import asyncio, sys
from graphsvc.exports.importer import ExportImporter, ExportRejected
from graphsvc.exports.lines import bounded_lines


class Unreached:  # the flood is refused by the first pass: the store is never asked
    async def run(self, name, **params):
        raise AssertionError(name)

    async def write_transaction(self, work, *, bounded=True):
        raise AssertionError("write")


importer = ExportImporter(Unreached(), chain_id=None, contract=None, confirm=None)
try:
    asyncio.run(importer.run(bounded_lines(sys.stdin.buffer)))
except ExportRejected as e:
    print(f"refused: {len(e.findings)} findings kept, {e.more} more, rules {sorted(e.rules)}")
"""


def _flood(path: Path, unit: bytes, mb: int) -> None:
    block = unit * (1_000_000 // len(unit))
    with path.open("wb") as out:
        for _ in range(mb):
            out.write(block)


ALONE = """
import sys, time
sys.path.insert(0, sys.argv[1])
try:  # before the exports room (tried first: the editable install finds the new modules anywhere)
    from graphsvc import audit
    from graphsvc.domain.export_lines import bounded_lines
except ImportError:
    from graphsvc.exports import audit
    from graphsvc.exports.lines import bounded_lines
assert audit.__file__.startswith(sys.argv[1]), audit.__file__
started = time.monotonic()
with open(sys.argv[2], "rb") as source:
    report = audit.audit(bounded_lines(source), None)
print(f"exit {report.exit_code}, {report.checked.lines:,} lines in {time.monotonic() - started:.1f} s")
"""
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
print((done.stdout.strip().splitlines() or [done.stderr.strip()[-90:]])[0][:90])
"""


def _run(command: list[str], stdin: Path | None = None) -> tuple[float, int, str]:
    """Seconds, peak RSS (MB) of `command` (measured by a process of its own) and its first line."""
    started = time.monotonic()
    with stdin.open("rb") if stdin else open(os.devnull, "rb") as source:
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, *command],
            stdin=source,
            capture_output=True,
            text=True,
            check=True,
        )
    peak, said = done.stdout.splitlines()[:2]
    return time.monotonic() - started, int(peak), said


def _audit(path: Path) -> list[str]:
    return [sys.executable, "-m", "graphsvc.cli", "audit", str(path), "--rpc", "http://127.0.0.1:9"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mb", type=int, nargs="+", default=[4, 50])
    parser.add_argument("--kinds", nargs="+", choices=sorted(UNITS), default=["lf", "x"])
    parser.add_argument("--tree", type=Path, help="run the audit alone from this checkout's graphsvc/ too")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    trees = [("audit alone", here), *([("audit alone (--tree)", args.tree)] if args.tree else [])]
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("flood            what                      seconds  peak RSS  said")
    with tempfile.TemporaryDirectory() as home:
        empty = Path(home) / "empty.jsonl"
        empty.write_bytes(b"")
        seconds, peak, said = _run(_audit(empty))
        print(f"{'an empty file':<16} {'graphsvc audit (start-up)':<25} {seconds:7.1f}  {peak:5d} MB  {said}")
        for kind in args.kinds:
            for mb in args.mb:
                path = Path(home) / f"{kind}-{mb}.jsonl"
                _flood(path, UNITS[kind], mb)
                runs = [
                    (what, [sys.executable, "-c", ALONE, str(tree), str(path)], None) for what, tree in trees
                ]
                runs += [
                    ("graphsvc audit", _audit(path), None),
                    ("import, through a pipe", [sys.executable, "-c", IMPORT], path),
                ]
                for what, command, stdin in runs:
                    seconds, peak, said = _run(command, stdin)
                    print(f"{mb:>3} MB of {kind:<5} {what:<25} {seconds:7.1f}  {peak:5d} MB  {said}")
                path.unlink()


if __name__ == "__main__":
    main()
