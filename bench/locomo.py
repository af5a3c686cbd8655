"""LoCoMo retrieval through graphsvc's public MCP tools (../shared/data/locomo-dev, CC BY-NC 4.0).

Ingests as an agent would: every turn is one `remember` with text "<speaker>: <text>", entities
Person:<speaker> and Session:<sample_id>/<session_N>, tag <session_N>, in conversation order. Then
every question is one `recall(query=<question>, limit=50)` with default settings. Prints R@1/5/10/25/50
(the fraction of a question's evidence turns among the top k, averaged) overall, per category and
without category 5, and the mean remember and recall latency; forgets everything it wrote.

    .venv/bin/python bench/locomo.py [--data PATH] [--conversations N]

Runs graphsvc in-process on its own local Neo4j unless GRAPHSVC_NEO4J_URI is set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import sys
import time
from collections import defaultdict
from pathlib import Path

from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings, served

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
KS = (1, 5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def turns(sample: dict) -> list[tuple[str, str, dict]]:
    """(session key, dia_id, turn) in conversation order."""
    conversation = sample["conversation"]
    keys = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    return [(key, turn["dia_id"], turn) for key in keys for turn in conversation[key]]


async def run(url: str, samples: list[dict]) -> None:
    graph = f"locomo-{secrets.token_hex(4)}"
    recalled_at: dict[str, list[float]] = defaultdict(list)
    remember_s: list[float] = []
    recall_s: list[float] = []
    async with Client(f"{url}/mcp") as client:
        for sample in samples:
            by_memory: dict[str, str] = {}
            for session, dia_id, turn in turns(sample):
                started = time.perf_counter()
                result = await client.call_tool(
                    "remember",
                    {
                        "text": f"{turn['speaker']}: {turn['text']}",
                        "graph": graph,
                        "tags": [session],
                        "entities": [
                            {"label": "Person", "name": turn["speaker"]},
                            {"label": "Session", "name": f"{sample['sample_id']}/{session}"},
                        ],
                    },
                )
                remember_s.append(time.perf_counter() - started)
                assert not result.is_error, result.content
                by_memory[result.structured_content["id"]] = dia_id
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or [])
                if not evidence:
                    continue
                started = time.perf_counter()
                result = await client.call_tool(
                    "recall", {"query": qa["question"], "limit": 50, "graph": graph}
                )
                recall_s.append(time.perf_counter() - started)
                ranked = [by_memory.get(m["id"]) for m in result.structured_content["memories"]]
                for k in KS:
                    score = len(evidence & set(ranked[:k])) / len(evidence)
                    recalled_at[f"all@{k}"].append(score)
                    recalled_at[f"{CATEGORIES[qa['category']]}@{k}"].append(score)
                    if qa["category"] != 5:
                        recalled_at[f"no-adversarial@{k}"].append(score)
            for memory_id in by_memory:
                await client.call_tool("forget", {"id": memory_id, "graph": graph})
    print(f"{'':16}" + "".join(f"{'R@' + str(k):>8}" for k in KS) + "   questions")
    for name in ["all", "no-adversarial", *CATEGORIES.values()]:
        rows = [recalled_at[f"{name}@{k}"] for k in KS]
        print(f"{name:16}" + "".join(f"{sum(r) / len(r):8.3f}" for r in rows) + f"   {len(rows[0])}")
    print(
        f"remember mean {1000 * sum(remember_s) / len(remember_s):.1f} ms over {len(remember_s)} turns; "
        f"recall mean {1000 * sum(recall_s) / len(recall_s):.1f} ms over {len(recall_s)} questions"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    samples = samples[: args.conversations] if args.conversations else samples
    with neo4j_settings() as settings, served(settings) as url:
        asyncio.run(run(url, samples))


if __name__ == "__main__":
    main()
