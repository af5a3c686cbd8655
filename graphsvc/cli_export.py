"""`graphsvc export`, `graphsvc import-export` and `graphsvc audit`: a graph as a file, moved between
servers, and checked against the chain alone (the README's "Export, import and audit")."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphsvc import audit, verifier
from graphsvc.app import Services
from graphsvc.config import Settings
from graphsvc.domain.export_lines import bounded_lines
from graphsvc.services.export import Exporter
from graphsvc.services.import_export import ExportImporter, ExportRejected

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


def with_services(work: Callable[[Services], Any], settings: Settings) -> Any:
    """Run `work` on started services (closed after), from a synchronous command."""

    async def run() -> Any:
        services = Services.build(settings)
        try:
            await services.start()
            return await work(services)
        finally:
            await services.close()

    return asyncio.run(run())


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


def cmd_import_export(args: argparse.Namespace, settings: Settings) -> int:
    progress = _Progress("import")
    chain_id, contract = _chain_of(settings)
    try:
        source = args.file.open("rb")  # opened and read once: a pipe works
    except OSError as e:
        print(f"graphsvc: {args.file}: {e.strerror or e}", file=sys.stderr)
        return 2

    async def work(services: Services) -> Any:
        importer = ExportImporter(
            services.store,
            chain_id=chain_id,
            contract=contract,
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
        return 1
    progress.end()
    print(
        f"imported graph {done.graph!r}{' (resumed)' if done.resumed else ''}: {done.memories:,} memories, "
        f"{done.tombstones:,} tombstones, {done.batches:,} batches, {done.entities:,} entities "
        f"in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    try:
        rpc = verifier.Rpc(args.rpc)
        source = args.file.open("rb")  # read once: a pipe works
    except (OSError, verifier.RpcError) as e:
        print(f"graphsvc: {args.file}: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        return 2
    with source:
        report = audit.audit(bounded_lines(source), rpc, args.contract)
    print(audit.render(report))
    return report.exit_code


def _with_settings(
    command: Callable[[argparse.Namespace, Settings], int], settings_of: SettingsOf
) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return command(args, settings_of(args))

    return run


def register(
    commands: Any, stack: argparse.ArgumentParser, settings_of: SettingsOf, address: Callable[[str], str]
) -> None:
    """Add the three commands to `graphsvc`'s subcommands."""
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
    load.set_defaults(run=_with_settings(cmd_import_export, settings_of))
    check = commands.add_parser(
        "audit", help="check an export against the chain alone: unchanged and complete"
    )
    check.add_argument("file", type=Path, help="a graphsvc.export/v1 file (graphsvc export)")
    check.add_argument("--rpc", required=True, help="an RPC URL of the export's chain")
    check.add_argument("--contract", type=address, help="the anchor contract you trust (else the export's)")
    check.set_defaults(run=cmd_audit)
