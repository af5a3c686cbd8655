"""An offline replica of recall's fusion (services/recall/fusion.py), to choose its formula fast.

`dump` runs recall once per question, with embeddings on and off, over LoCoMo's development half
(each conversation bulk-remembered in its own graph, in order) and over the hard paraphrase set
(tests/paraphrase_hard.py), and writes every candidate's evidence (BM25, the query's attainable BM25,
own and neighbour cosines, hop, entity support, named, found by) with the answers' ids:

    .venv/bin/python bench/fusion_replica.py dump --out results/fusion-dump.json

`rank` re-ranks the dump in numpy under a grid of formulas and prints R@10 by category and by shared
words on LoCoMo, and hit@1 / hit@5 on the hard set, for each:

    .venv/bin/python bench/fusion_replica.py rank results/fusion-dump.json

`dump --model all-MiniLM-L6-v2` dumps with the other model; `rank --fifth` runs the fifth pass's grid
alone (meaning half absolute, half relative to the closest candidate: bench/README.md, *Fifth pass*).

The candidates are those of the service (keyword hits, nearest seeds, the walk from them), so the
replica is exact for a change of weights and calibration, not for a change of candidates. A bulk
loaded graph's categories differ a little from bench/locomo.py's MCP run (its windows are the same).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import secrets
import sys
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphsvc.domain.recall_config import Calibration, RecallConfig
from graphsvc.services.recall import fusion

RESULTS = Path(__file__).resolve().parent / "results"


async def dump(settings: Any, data: Path | None, out: Path, model: str) -> None:
    from graphsvc.app import Services
    from graphsvc.config import EmbeddingsSettings
    from graphsvc.domain.models import EntityIn, RecallInput, RememberInput
    from graphsvc.services.recall.service import RecallService
    from tests import paraphrase_hard

    settings.embeddings = EmbeddingsSettings(enabled=True, model=model)
    settings.deadline_s = 120  # a cold server on a loaded machine: the first writes take seconds
    services = Services.build(settings)
    await services.start()
    clock = lambda: datetime.now(UTC)  # noqa: E731
    on = RecallService(services.store, clock, services.embeddings, settings.recall)
    off = RecallService(services.store, clock, None, settings.recall)
    records: list[dict[str, Any]] = []

    async def ask(graph: str, question: str, names: dict[str, str], **fields: Any) -> None:
        for mode, recall in (("on", on), ("off", off)):
            found = (await recall.gather(RecallInput(query=question, graph=graph, limit=50))).found
            records.append(
                {
                    **fields,
                    "question": question,
                    "mode": mode,
                    "candidates": [
                        [
                            names.get(i, i),
                            e.bm25,
                            e.attainable,
                            e.own,
                            e.near,
                            e.hop,
                            e.support,
                            e.named,
                            list(e.found_by),
                        ]
                        for i, e in found.items()
                    ],
                }
            )

    async def remember(graph: str, inputs: list[RememberInput]) -> list[str]:
        ids: list[str] = []
        for start in range(0, len(inputs), 50):
            ids += [r.id for r in await services.memory.remember_many(inputs[start : start + 50])]
        while await services.embeddings.embed_pending():
            pass
        return [i for i in ids if i]

    try:
        graph = f"hard-{secrets.token_hex(4)}"
        texts = paraphrase_hard.ordered()
        ids = await remember(graph, [RememberInput(text=t, graph=graph) for t in texts])
        by_text = dict(zip(texts, ids, strict=True))
        for memory, question in paraphrase_hard.PAIRS:
            await ask(graph, question, {}, set="hard", wanted=[by_text[memory]])
        print(f"hard set: {len(paraphrase_hard.PAIRS)} questions", flush=True)
        if data is not None:
            import locomo

            for sample in locomo.chosen(json.loads(data.read_text()), locomo.DEV_HALF):
                graph = f"locomo-{secrets.token_hex(4)}"
                said = {dia_id: turn["text"] for _, dia_id, turn in locomo.turns(sample)}
                inputs = []
                for session, _, turn in locomo.turns(sample):
                    args = locomo.remember_input(sample, session, turn)
                    entities = [EntityIn(**e) for e in args["entities"]]
                    inputs.append(
                        RememberInput(text=args["text"], tags=args["tags"], entities=entities, graph=graph)
                    )
                ids = await remember(graph, inputs)
                names = {i: dia for i, (_, dia, _) in zip(ids, locomo.turns(sample), strict=True)}
                for qa in sample["qa"]:
                    evidence = [e for e in qa.get("evidence") or [] if e in said]
                    if not evidence:
                        continue
                    shared = locomo.shared_words(qa["question"], [said[e] for e in evidence])
                    category = locomo.CATEGORIES[qa["category"]]
                    await ask(
                        graph,
                        qa["question"],
                        names,
                        set="locomo",
                        wanted=evidence,
                        category=category,
                        shared=shared,
                    )
                print(f"{sample['sample_id']}: {len(sample['qa'])} questions", flush=True)
    finally:
        await services.close()
    out.write_text(json.dumps(records))
    print(f"wrote {out} ({len(records)} recalls)")


# ---- the replica --------------------------------------------------------------------------------


def formula(
    *,
    keyword: str = "coverage",
    kw: float = 2.0,
    mw: float = 1.5,
    floor: float = 0.2,
    ceiling: float = 0.6,
    spread: float = 0.7,
    named: float = 1.3,
    power: float = 1.0,
    gap: float | None = None,
) -> Callable[[list[Any], dict[str, float]], float]:
    """A score of one candidate row under the given fusion; `query` holds the query's best BM25 and
    best closeness (for the relative forms). With a `gap`, meaning is read as services/recall/fusion.py reads it
    since the fifth pass: half on the absolute scale, half beside the closest candidate."""

    def score(row: list[Any], query: dict[str, float]) -> float:
        _, bm25, attainable, own, near, hop, support, is_named, _ = row
        if keyword == "coverage":
            k = fusion.coverage(bm25, attainable, RecallConfig().bm25_k1) ** power
        else:  # relative: divided by the best hit's, as before issue 28
            k = bm25 / query["best_bm25"] if query["best_bm25"] > 0 else 0.0
        s = max(own if own is not None else 0.0, spread * near if near is not None else 0.0)
        if floor < 0:  # relative: divided by the best candidate's
            m = s / query["best_s"] if query["best_s"] > 0 else 0.0
        else:
            m = min(1.0, max(0.0, (s - floor) / (ceiling - floor)))
        if gap is not None:  # the service's own reading (half absolute, half beside the closest)
            m = fusion.closeness(s, query["best_s"], Calibration(floor=floor, ceiling=ceiling, gap=gap))
        return kw * k * (named if is_named else 1.0) + 1 / (1 + hop) + min(1.0, support) + mw * m

    return score


def ranked(
    record: dict[str, Any], score: Callable[[list[Any], dict[str, float]], float], spread: float
) -> list[str]:
    rows = record["candidates"]
    best_bm25 = max((r[1] for r in rows), default=0.0)
    best_s = max((max(r[3] or 0.0, spread * (r[4] if r[4] is not None else 0.0)) for r in rows), default=0.0)
    query = {"best_bm25": best_bm25, "best_s": best_s}
    keyed = sorted(rows, key=lambda r: (-round(score(r, query), 4), r[5], -r[1], r[0]))
    return [r[0] for r in keyed]


def evaluate(records: list[dict[str, Any]], mode: str, **params: Any) -> dict[str, float]:
    score = formula(**params)
    spread = params.get("spread", 0.7)
    sums: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if record["mode"] != mode:
            continue
        order = ranked(record, score, spread)
        wanted = set(record["wanted"])
        if record["set"] == "hard":
            sums["hit@1"].append(float(order[:1] == record["wanted"]))
            sums["hit@5"].append(float(bool(wanted & set(order[:5]))))
        else:
            r10 = len(wanted & set(order[:10])) / len(wanted)
            for name in ("all", record["category"], f"shared {record['shared']}"):
                sums[name].append(r10)
    return {k: sum(v) / len(v) for k, v in sums.items()}


COLUMNS = [
    "hit@1",
    "hit@5",
    "all",
    "multi-hop",
    "temporal",
    "open-domain",
    "single-hop",
    "adversarial",
    "shared 0",
    "shared 1",
    "shared 2+",
]


def show(name: str, figures: dict[str, float], tail: str = "") -> None:
    print(f"{name:58}" + "".join(f"{figures.get(c, math.nan):8.3f}" for c in COLUMNS) + tail, flush=True)


CATEGORIES = ["multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]


def rank(path: Path, fifth: bool = False) -> None:
    """The figures of today's formula and of the grid; `worst` is the lowest change of R@10 of a
    category against keywords alone with the same keyword weight (the target: no lower than -1 point).
    `fifth`: the fifth pass's grid alone (meaning relative to the closest candidate)."""
    records = json.loads(path.read_text())
    print(f"{'':58}" + "".join(f"{c[:7]:>8}" for c in COLUMNS) + "   worst")
    if fifth:
        off = evaluate(records, "off", power=1.5, kw=6.0, mw=0)
        show("keywords alone (power 1.5, kw 6)", off)
        axes = (
            (1.5, 2.0, 2.5),
            (0.2, 0.3, 0.35, 0.4, 0.5),
            (0.5, 0.7, 0.75, 0.8),
            (None, 0.05, 0.08, 0.12, 0.2),
        )
        for mw, floor, ceiling, gap in itertools.product(*axes):
            if ceiling <= floor:
                continue
            p = {"mw": mw, "floor": floor, "ceiling": ceiling, "gap": gap}
            figures = evaluate(records, "on", power=1.5, kw=6.0, **p)
            worst = min(figures[c] - off[c] for c in CATEGORIES)
            show(" ".join(f"{k} {v}" for k, v in p.items()), figures, f"{100 * worst:+8.1f}")
        return
    show("before issue 28, keywords alone (relative)", evaluate(records, "off", keyword="relative", mw=0))
    show("before issue 28, on (relative, relative)", evaluate(records, "on", keyword="relative", floor=-1))
    alone = {kw: evaluate(records, "off", kw=kw, mw=0) for kw in (1.0, 1.5, 2.0, 3.0, 4.0)}
    for kw, figures in alone.items():
        show(f"coverage kw {kw}, keywords alone", figures)
    grid = itertools.product(alone, (1.0, 1.5, 2.0, 3.0), (0.1, 0.2, 0.3), (0.5, 0.6, 0.7), (0.5, 0.7))
    for kw, mw, floor, ceiling, spread in grid:
        params = {"kw": kw, "mw": mw, "floor": floor, "ceiling": ceiling, "spread": spread}
        figures = evaluate(records, "on", **params)
        worst = min(figures[c] - alone[kw][c] for c in CATEGORIES)
        show(" ".join(f"{k} {v}" for k, v in params.items()), figures, f"{100 * worst:+8.1f}")
    # The keyword term as coverage ^ power (RecallConfig.keyword_power), around today's formula.
    for power, kw, ceiling in itertools.product(
        (1.25, 1.5, 1.75, 2.0), (4.0, 5.0, 6.0, 7.0, 8.0), (0.45, 0.5, 0.55)
    ):
        params = {"power": power, "kw": kw, "ceiling": ceiling}
        figures = evaluate(records, "on", **params)
        off = evaluate(records, "off", power=power, kw=kw, mw=0)  # keywords alone, the same code
        worst = min(figures[c] - off[c] for c in CATEGORIES)
        show(" ".join(f"{k} {v}" for k, v in params.items()), figures, f"{100 * worst:+8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--data", type=Path, default=None, help="locomo10.json or the development half's copy")
    d.add_argument("--hard-only", action="store_true", help="the hard paraphrase set alone")
    d.add_argument("--out", type=Path, default=RESULTS / "fusion-dump.json")
    d.add_argument("--model", default="bge-small-en-v1.5", help="GRAPHSVC_EMBEDDINGS_MODEL's choices")
    r = sub.add_parser("rank")
    r.add_argument("dump", type=Path)
    r.add_argument("--fifth", action="store_true", help="the fifth pass's grid (meaning beside the closest)")
    args = parser.parse_args()
    if args.command == "rank":
        rank(args.dump, args.fifth)
        return
    import locomo
    from common import neo4j_settings

    data = None if args.hard_only else args.data or (locomo.DATA if locomo.DATA.exists() else None)
    with neo4j_settings() as settings:
        asyncio.run(dump(settings, data, args.out, args.model))


if __name__ == "__main__":
    main()
