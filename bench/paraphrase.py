"""The paraphrase checks as figures: each memory asked for in words it does not contain, recalled with
embeddings off and on (hit@1, hit@5). Two sets, both written for graphsvc: tests/paraphrase.py (ten
pairs among six unrelated memories) and tests/paraphrase_hard.py (46 pairs among distractors that share
one common word with the questions and near-duplicates of the answers).

    .venv/bin/python bench/paraphrase.py

In-process on its own local Neo4j unless GRAPHSVC_NEO4J_URI is set.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings

from graphsvc.app import Services
from graphsvc.config import EmbeddingsSettings, Settings
from graphsvc.domain.models import RecallInput, RememberInput
from graphsvc.services.memory import MemoryService
from tests import paraphrase, paraphrase_hard


async def hits(
    memory: MemoryService, graph: str, pairs: list[tuple[str, str]], ids: dict[str, str]
) -> tuple[int, int]:
    """How many questions recall their memory first, and among the first five."""
    first = top5 = 0
    for text, question in pairs:
        result = await memory.recall(RecallInput(query=question, graph=graph, limit=5))
        ranked = [m.id for m in result.memories]
        first += ranked[:1] == [ids[text]]
        top5 += ids[text] in ranked
    return first, top5


async def run(settings: Settings) -> None:
    settings.embeddings = EmbeddingsSettings(enabled=True)
    settings.deadline_s = 120  # a cold server on a loaded machine
    services = Services.build(settings)
    await services.start()
    sets = {
        "tests/paraphrase.py": (paraphrase.PAIRS, [m for m, _ in paraphrase.PAIRS] + paraphrase.OTHERS),
        "tests/paraphrase_hard.py": (paraphrase_hard.PAIRS, paraphrase_hard.ordered()),
    }
    try:
        for name, (pairs, texts) in sets.items():
            graph = f"paraphrase-{secrets.token_hex(4)}"
            ids = {t: (await services.memory.remember(RememberInput(text=t, graph=graph))).id for t in texts}
            while await services.embeddings.embed_pending():
                pass
            for mode, memory in (("off", MemoryService(services.store)), ("on", services.memory)):
                first, top5 = await hits(memory, graph, pairs, ids)
                n = len(pairs)
                print(
                    f"{name}, embeddings {mode}: hit@1 {first}/{n} ({first / n:.3f}), "
                    f"hit@5 {top5}/{n} ({top5 / n:.3f})"
                )
    finally:
        await services.close()


if __name__ == "__main__":
    with neo4j_settings() as settings:
        asyncio.run(run(settings))
