"""`graphsvc export`, `graphsvc import-export` and `graphsvc audit`: a graph as a file, moved between
servers, and checked against the chain alone (the README's "Export, import and audit")."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphsvc import verifier
from graphsvc.app import Services
from graphsvc.cli.common import with_services
from graphsvc.config import Settings
from graphsvc.exports import audit
from graphsvc.exports import render as audit_render
from graphsvc.exports.chain_reads import Pins
from graphsvc.exports.export import Exporter, graph_tag
from graphsvc.exports.importer import ExportImporter, ExportRejected, confirmation
from graphsvc.exports.lines import bounded_lines

SettingsOf = Callable[[argparse.Namespace], Settings]


class _Progress:
    """`label done/total rate` on one line of a terminal's stderr (nothing when stderr is a file)."""

    def __init__(self, label: str):
        self.label, self.started, self.shown = label, time.monotonic(), sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if self.shown:
            rate = done / max(time.monotonic() - self.started, 1e-6)
            print(
                f"\r{self.label} {done:,}/{total:,} memories {rate:,.0f}/s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    def end(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def _chain_of(settings: Settings) -> tuple[int | None, str | None]:
    chain = settings.chain
    return (chain.chain_id, chain.contract) if chain.configured else (None, None)


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    """Stream the graph to FILE (written as FILE.partial, renamed when complete) or stdout."""
    progress = _Progress(f"export {args.graph}")
    chain_id, contract = _chain_of(settings)
    target: Path | None = args.out
    partial = target.with_name(target.name + ".partial") if target else None

    async def work(services: Services) -> int:
        exporter = Exporter(
            services.store, args.graph, chain_id=chain_id, contract=contract, progress=progress
        )
        with partial.open("wb") if partial else os.fdopen(os.dup(sys.stdout.fileno()), "wb") as out:
            async for line in exporter.lines():
                out.write(line)
        return exporter.lines_written

    started = time.monotonic()
    lines = with_services(work, settings)
    progress.end()
    if partial and target:
        partial.replace(target)
    print(
        f"exported graph {args.graph!r}: {lines:,} lines in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


def _pins(args: argparse.Namespace, contract: str | None) -> Pins:
    """The trust roots of the command line. Raises: OSError, verifier.BundleError (a bundle)."""
    return audit.pins_of(contract, args.graph_tag, args.known_root, args.bundle)


def _cannot_read(error: Exception) -> int:
    """`graphsvc: <file>: <why>` on stderr for a file (or an RPC address) that cannot be read; exit 2."""
    why = str(getattr(error, "strerror", None) or error)
    name = getattr(error, "filename", None)
    print(f"graphsvc: {verifier.inert(f'{name}: {why}' if name else why)}", file=sys.stderr)
    return 2


def cmd_import_export(args: argparse.Namespace, settings: Settings) -> int:
    progress = _Progress("import")
    chain_id, contract = _chain_of(settings)
    if contract is None and not args.no_chain:
        print(
            "graphsvc: import-export confirms the export's batches on the chain this server anchors on: "
            "configure MONAD_RPC_URL and ANCHOR_CONTRACT, or pass --no-chain (the batches are then "
            "imported as not final)",
            file=sys.stderr,
        )
        return 2
    try:
        pins = _pins(args, contract)
        source = args.file.open("rb")  # opened and read once: a pipe works
    except (OSError, verifier.BundleError) as e:
        return _cannot_read(e)

    async def work(services: Services) -> Any:
        importer = ExportImporter(
            services.store,
            chain_id=chain_id,
            contract=contract,
            confirm=None if args.no_chain else confirmation(settings.chain.rpc_url or "", pins),
            written=lambda graph: services.memory.folder.written([graph]),
        )
        return await importer.run(bounded_lines(source), args.graph, progress)

    started = time.monotonic()
    try:
        with source:
            done = with_services(work, settings)
    except ExportRejected as e:
        print(f"graphsvc: {args.file}: the export was refused; nothing was written:", file=sys.stderr)
        for finding in e.findings[:50]:
            print(f"  {finding}", file=sys.stderr)
        if len(e.findings) + e.more > 50:
            print(f"  … {len(e.findings) + e.more - 50:,} more problems", file=sys.stderr)
        return 2 if e.unreadable else 1  # as `graphsvc audit`
    progress.end()
    print(
        f"imported graph {done.graph!r}{' (resumed)' if done.resumed else ''}: {done.memories:,} memories, "
        f"{done.tombstones:,} tombstones, {done.batches:,} batches "
        f"({'confirmed on chain: final' if done.final else 'not confirmed (--no-chain): not final'}), "
        f"{done.entities:,} entities in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    for said in done.said:
        print(f"  {said}", file=sys.stderr)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    try:
        rpc = verifier.Rpc(args.rpc)
        pins = _pins(args, args.contract)
        source = args.file.open("rb")  # read once: a pipe works
    except (OSError, verifier.RpcError, verifier.BundleError) as e:
        return _cannot_read(e)
    with source:
        report = audit.audit(bounded_lines(source), rpc, pins)
    shown = json.dumps(audit_render.as_json(report), indent=2) if args.json else audit_render.render(report)
    try:
        print(shown, flush=True)
    except BrokenPipeError:  # the reader left (`graphsvc audit g.jsonl | head`): no traceback, same exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere at exit
    return report.exit_code


def cmd_graph_tag(args: argparse.Namespace, settings: Settings) -> int:
    """Print the graph's tag: what an auditor pins (`graphsvc audit --graph-tag`)."""
    tag = with_services(lambda s: graph_tag(s.store, args.graph), settings)
    if tag is None:
        print(f"graphsvc: graph {args.graph!r} has no tag yet: it was never anchored", file=sys.stderr)
        return 1
    print(tag)
    return 0


def _with_settings(
    command: Callable[[argparse.Namespace, Settings], int], settings_of: SettingsOf
) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return command(args, settings_of(args))

    return run


def register(
    commands: Any, stack: argparse.ArgumentParser, settings_of: SettingsOf, address: Callable[[str], str]
) -> None:
    """Add the export, import-export, audit and graph-tag commands to `graphsvc`'s subcommands."""
    export = commands.add_parser(
        "export", parents=[stack], help="stream a graph as JSON lines (graphsvc.export/v1)"
    )
    export.add_argument("--graph", required=True)
    export.add_argument("--out", type=Path, help="the file to write (default: stdout)")
    export.set_defaults(run=_with_settings(cmd_export, settings_of))
    load = commands.add_parser(
        "import-export",
        parents=[stack],
        help="import an export into an empty graph (same ids, batches, proofs)",
    )
    load.add_argument("file", type=Path)
    load.add_argument(
        "--graph", help="the graph to import into: the export's own (its name is in every hash)"
    )
    _trust_roots(load)
    load.add_argument(
        "--no-chain",
        action="store_true",
        help="import without confirming the batches on chain (they are imported as not final)",
    )
    load.set_defaults(run=_with_settings(cmd_import_export, settings_of))
    check = commands.add_parser(
        "audit",
        help="check an export against the chain alone: unchanged, and complete against your trust roots",
        epilog="exit codes: 0 every check made holds (the verdict says which), 1 changed or missing, "
        "2 the file or arguments unreadable, 3 could not check the chain",
    )
    check.add_argument("file", type=Path, help="a graphsvc.export/v1 file (graphsvc export), or /dev/stdin")
    check.add_argument("--rpc", required=True, help="an RPC URL of the export's chain")
    check.add_argument("--contract", type=address, help="the anchor contract you trust (else the export's)")
    _trust_roots(check)
    check.add_argument("--json", action="store_true", help="the verdict as JSON")
    check.set_defaults(run=cmd_audit)
    tag = commands.add_parser(
        "graph-tag", parents=[stack], help="print a graph's tag, for auditors to pin (audit --graph-tag)"
    )
    tag.add_argument("--graph", required=True)
    tag.set_defaults(run=_with_settings(cmd_graph_tag, settings_of))


def _hex32(text: str) -> str:
    if not re.fullmatch(r"0x[0-9a-fA-F]{64}", text):
        raise argparse.ArgumentTypeError("0x and 64 hex digits")
    return text.lower()


def _trust_roots(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--graph-tag", type=_hex32, help="the graph's tag as its operator publishes it (graphsvc graph-tag)"
    )
    parser.add_argument(
        "--known-root",
        type=_hex32,
        action="append",
        default=[],
        help="a batch root of the graph you hold (repeatable): the chain names its graph tag",
    )
    parser.add_argument(
        "--bundle",
        type=Path,
        action="append",
        default=[],
        help="a proof bundle of the graph you hold (repeatable): its root, contract and graph",
    )
