"""LoCoMo retrieval through graphsvc's public MCP tools.

Data: the public LoCoMo release (Maharana et al., ACL 2024; CC BY-NC 4.0), the file
`data/locomo10.json` of the GitHub repository snap-research/LoCoMo: ten conversations with their
questions. Its first five (0-4: conv-26, conv-30, conv-41, conv-42, conv-43) are this project's
development half, the only ones its settings were chosen on; the other five are held out. `--data`
takes that file (or any file of the same shape, such as the development half's copy in the project's
shared/data/locomo-dev/locomo-dev.json, the default when present); `--conversations` picks which.

Recall's semantic signal is on, as in the service (`--no-embeddings`: keywords alone), and so is
extraction (`--no-extraction`: the graph holds only the entities given); after each conversation the
benchmark waits until the background workers have embedded and extracted every turn before asking its
questions.
Besides the categories, questions are split by the content words they share with their evidence
(`shared`: the distinct terms, analyzed as recall analyzes them, that the question's keywords and
the evidence turns' own text, without the speaker's name, have in common: 0, 1, 2 or more).

Ingests as an agent would: every turn is one `remember` with text "<speaker>: <text>", entities
Person:<speaker> and Session:<sample_id>/<session_N>, tag <session_N>, in conversation order
(`--no-entities`: text, tag and date only, as an agent that names nothing). Then every question is
one `recall(query=<question>, limit=50)` with default settings. Prints R@1/5/10/25/50 (the fraction of
a question's evidence turns among the top k, averaged) overall, per category and without category 5,
the one-hit rate at 10 (the share of questions with at least one evidence turn in the top 10: beside
R@10 it tells "found one, missed the rest" from "found none"), and the mean remember and recall
latency; forgets everything it wrote.

    .venv/bin/python bench/locomo.py --data locomo10.json [--conversations 0-4] [--pollute]

`--dates` passes each session's date (`session_N_date_time`, "1:56 pm on 8 May, 2023") as the
`occurredAt` of its turns, so the times the turns mention ("last Friday") and the questions name
("in May 2023") can be matched. Questions are also split by whether they name a time (`names a
time`: recall reads a time expression in them, domain/when.py, against the benchmark's own clock).

`--variant NAME=JSON` (repeatable) also asks every question in-process under a variant of the recall
configuration (`RecallConfig`'s fields, e.g. `w1='{"bridge_weight": 1}'`), on the same graph after
the same ingest, and prints a table per variant: settings compared on one ingest.

`--pollute` first fills the server with other tenants' data (bench/pollute.py: 100,000 memories of
other graphs, one copy of these conversations' turns among them, and 10,000 copies of the turns
remembered and forgotten), to show whether they move this graph's scores.

Runs graphsvc in-process on its own local Neo4j unless GRAPHSVC_NEO4J_URI is set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings, served
from pollute import pollute

from graphsvc.app import Services
from graphsvc.config import EmbeddingsSettings, ExtractionSettings, Settings
from graphsvc.domain.models import RecallInput
from graphsvc.domain.recall_config import RecallConfig
from graphsvc.domain.spans import Occurred
from graphsvc.domain.when import Reference, mentions
from graphsvc.domain.when_words import ENGLISH
from graphsvc.services.index.keywords import keywords
from graphsvc.services.index.term_stats import analyze
from graphsvc.services.memory import MemoryService
from graphsvc.store.graph import GraphStore, create_driver

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
DEV_HALF = "0-4"
KS = (1, 5, 10, 25, 50)
EMBEDDED_WITHIN_S = 1800  # the worker embeds a conversation's turns in a minute or so on a busy machine
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def turns(sample: dict) -> list[tuple[str, str, dict]]:
    """(session key, dia_id, turn) in conversation order."""
    conversation = sample["conversation"]
    keys = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    return [(key, turn["dia_id"], turn) for key in keys for turn in conversation[key]]


SESSION_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m) on (\d{1,2}) ([A-Za-z]+),? (\d{4})")


def session_date(sample: dict, session: str) -> str:
    """A session's `session_N_date_time` ("1:56 pm on 8 May, 2023") as an ISO instant."""
    text = sample["conversation"][f"{session}_date_time"]
    match = SESSION_DATE.search(text)
    if match is None:
        raise ValueError(f"{sample['sample_id']}/{session}: unreadable date {text!r}")
    hour, minute, half, day, month, year = match.groups()
    hour24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    number = ENGLISH.months[month.lower()]
    return f"{year}-{number:02d}-{int(day):02d}T{hour24:02d}:{minute}:00Z"


def names_a_time(question: str) -> bool:
    return bool(mentions(question, Reference.of(Occurred.at(datetime.now(UTC)))))


def remember_input(
    sample: dict, session: str, turn: dict, dates: bool = False, entities: bool = True
) -> dict:
    """One turn as the `remember` arguments an agent would send (with its session's date if `dates`;
    its speaker and session as entities unless not `entities`)."""
    named = [
        {"label": "Person", "name": turn["speaker"]},
        {"label": "Session", "name": f"{sample['sample_id']}/{session}"},
    ]
    return {
        **({"occurredAt": session_date(sample, session)} if dates else {}),
        "text": f"{turn['speaker']}: {turn['text']}",
        "tags": [session],
        **({"entities": named} if entities else {}),
    }


def content_words(text: str) -> set[str]:
    return {term for word in keywords(text) for term in analyze(word)}


def shared_words(question: str, evidence: list[str]) -> str:
    """How many content words the question shares with its evidence turns: "0", "1" or "2+"."""
    shared = len(content_words(question) & set().union(*(content_words(text) for text in evidence)))
    return str(shared) if shared < 2 else "2+"


async def embedded(settings: Settings) -> float:
    """Wait (bounded) until the server's background workers have drained their backlogs (embedding,
    and extraction where it is on); returns the seconds waited."""
    neo = settings.neo4j
    store = GraphStore(create_driver(neo.uri, neo.user, neo.password.get_secret_value()), neo.database)
    backlogs = [
        *(["embed/backlog"] if settings.embeddings.enabled else []),
        *(["extract/backlog"] if settings.extraction.enabled else []),
    ]
    started = time.monotonic()
    try:
        for backlog in backlogs:
            while (await store.run(backlog, top=0))[0]["backlog"]:
                if time.monotonic() - started > EMBEDDED_WITHIN_S:
                    raise TimeoutError(f"{backlog} did not empty within {EMBEDDED_WITHIN_S} s")
                await asyncio.sleep(0.5)
    finally:
        await store.close()
    return time.monotonic() - started


def chosen(samples: list[dict], spec: str) -> list[dict]:
    """The conversations `spec` names by position: "0-4", "5-9", "0,2" or "all"."""
    if spec == "all":
        return samples
    picked: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        picked += range(int(first), int(last or first) + 1)
    return [samples[i] for i in picked if i < len(samples)]


async def pollute_server(settings: Any, samples: list[dict], live: int, forgotten: int) -> None:
    services = Services.build(settings)
    await services.start()
    try:
        turns_in = [
            remember_input(sample, session, turn) for sample in samples for session, _, turn in turns(sample)
        ]
        done = await pollute(services.memory, turns_in, live=live, forgotten=forgotten)
        print(f"polluted: {json.dumps(done)}")
    finally:
        await services.close()


async def run(
    url: str,
    samples: list[dict],
    settings: Settings,
    dates: bool = False,
    entities: bool = True,
    variants: dict[str, dict[str, Any]] | None = None,
) -> None:
    graph = f"locomo-{secrets.token_hex(4)}"
    recalled_at: dict[str, list[float]] = defaultdict(list)
    by_variant: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in variants or {}}
    remember_s: list[float] = []
    recall_s: list[float] = []
    waited_s = 0.0
    asking = await _variants(settings, variants or {})
    async with Client(f"{url}/mcp") as client:
        for sample in samples:
            by_memory: dict[str, str] = {}
            said = {dia_id: turn["text"] for _, dia_id, turn in turns(sample)}
            for session, dia_id, turn in turns(sample):
                started = time.perf_counter()
                said_as = remember_input(sample, session, turn, dates, entities)
                result = await client.call_tool("remember", {**said_as, "graph": graph})
                remember_s.append(time.perf_counter() - started)
                assert not result.is_error, result.content
                by_memory[result.structured_content["id"]] = dia_id
            if settings.embeddings.enabled or settings.extraction.enabled:
                waited_s += await embedded(settings)
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
                _score(recalled_at, qa, evidence, ranked, said)
                for name, memory in asking.items():
                    asked = RecallInput(query=qa["question"], limit=50, graph=graph)
                    found = (await memory.recall(asked)).memories
                    _score(by_variant[name], qa, evidence, [by_memory.get(m.id) for m in found], said)
            for memory_id in by_memory:
                await client.call_tool("forget", {"id": memory_id, "graph": graph})
    _report(recalled_at)
    for name, scores in by_variant.items():
        print(f"\nvariant {name} ({json.dumps((variants or {})[name])}), in-process:")
        _report(scores)
    print(
        f"remember mean {1000 * sum(remember_s) / len(remember_s):.1f} ms, "
        f"p50 {1000 * statistics.median(remember_s):.1f} ms over {len(remember_s)} turns; "
        f"recall mean {1000 * sum(recall_s) / len(recall_s):.1f} ms, "
        f"p50 {1000 * statistics.median(recall_s):.1f} ms over {len(recall_s)} questions"
    )
    if settings.embeddings.enabled or settings.extraction.enabled:
        print(f"waited {waited_s:.0f} s in all for the workers to drain after the conversations")


def _score(
    recalled_at: dict[str, list[float]], qa: dict, evidence: set[str], ranked: list[str | None], said: dict
) -> None:
    """One question's R@k and one-hit, under its category, shared words and time."""
    shared = shared_words(qa["question"], [said[e] for e in evidence if e in said])
    timed = "names a time" if names_a_time(qa["question"]) else "names no time"
    hit = float(bool(evidence & set(ranked[:10])))
    for name in ("all", CATEGORIES[qa["category"]]):
        recalled_at[f"{name}@one-hit"].append(hit)
    for k in KS:
        score = len(evidence & set(ranked[:k])) / len(evidence)
        recalled_at[f"all@{k}"].append(score)
        recalled_at[f"shared {shared}@{k}"].append(score)
        recalled_at[f"{timed}@{k}"].append(score)
        recalled_at[f"{CATEGORIES[qa['category']]}@{k}"].append(score)
        if qa["category"] != 5:
            recalled_at[f"no-adversarial@{k}"].append(score)


def _report(recalled_at: dict[str, list[float]]) -> None:
    print(f"{'':16}" + "".join(f"{'R@' + str(k):>8}" for k in KS) + f"{'one-hit':>9}   questions")
    names = ["all", "no-adversarial", *CATEGORIES.values(), "shared 0", "shared 1", "shared 2+"]
    for name in [*names, "names a time", "names no time"]:
        rows = [recalled_at[f"{name}@{k}"] for k in KS]
        hits = recalled_at.get(f"{name}@one-hit")
        one = f"{sum(hits) / len(hits):9.3f}" if hits else f"{'':9}"
        print(f"{name:16}" + "".join(f"{sum(r) / len(r):8.3f}" for r in rows) + f"{one}   {len(rows[0])}")


async def _variants(settings: Settings, variants: dict[str, dict[str, Any]]) -> dict[str, MemoryService]:
    """An in-process recall per variant of the recall configuration (its fields over the settings'),
    on the served graph: the same store and sentence model, no worker of its own."""
    if not variants:
        return {}
    services = Services.build(settings)
    await services.start(listening=False)
    return {
        name: MemoryService(
            services.store,
            embeddings=services.embeddings,
            recall=settings.recall.model_copy(
                update=RecallConfig.model_validate(over).model_dump(include=set(over))
            ),
        )
        for name, over in variants.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA if DATA.exists() else None, help="locomo10.json")
    parser.add_argument(
        "--conversations", default=DEV_HALF, help='positions in the file: "0-4" (the development half), "all"'
    )
    parser.add_argument(
        "--pollute", action="store_true", help="fill the server with other tenants' data first"
    )
    parser.add_argument(
        "--embeddings",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="recall with the semantic signal (on by default, as the service); --no-embeddings: keywords alone",
    )
    parser.add_argument(
        "--extraction",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="read entities and key phrases from the turns (on by default, as the service)",
    )
    parser.add_argument("--dates", action="store_true", help="remember each turn with its session's date")
    parser.add_argument(
        "--entities",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="name each turn's speaker and session as entities (--no-entities: text, tags and dates only)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="also ask in-process under a variant of the recall configuration, e.g. w1='{\"bridge_weight\": 1}'",
    )
    parser.add_argument("--pollute-live", type=int, default=100_000)
    parser.add_argument("--pollute-forgotten", type=int, default=10_000)
    args = parser.parse_args()
    if args.data is None:
        parser.error("--data: the path of data/locomo10.json from snap-research/LoCoMo")
    samples = chosen(json.loads(args.data.read_text()), args.conversations)
    print(f"{args.data}: conversations {', '.join(s['sample_id'] for s in samples)}")
    with neo4j_settings() as settings:
        settings.embeddings = EmbeddingsSettings(enabled=args.embeddings)
        settings.extraction = ExtractionSettings(enabled=args.extraction)
        settings.deadline_s = 60  # on a loaded machine a cold server's first writes took over 10 s
        if args.pollute:
            asyncio.run(pollute_server(settings, samples, args.pollute_live, args.pollute_forgotten))
        with served(settings) as url:
            variants = {name: json.loads(over) for name, _, over in (v.partition("=") for v in args.variant)}
            asyncio.run(run(url, samples, settings, args.dates, args.entities, variants))


if __name__ == "__main__":
    main()
