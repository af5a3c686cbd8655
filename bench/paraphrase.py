"""The paraphrase check of tests/paraphrase.py as figures: each memory asked for in words it does not
contain, recalled with embeddings off and on (hit@1, hit@5 over the ten questions).

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
from tests.paraphrase import OTHERS, PAIRS


async def hits(memory: MemoryService, graph: str, ids: list[str]) -> tuple[int, int]:
    first = top5 = 0
    for (_, question), wanted in zip(PAIRS, ids, strict=False):
        result = await memory.recall(RecallInput(query=question, graph=graph, limit=5))
        ranked = [m.id for m in result.memories]
        first += ranked[:1] == [wanted]
        top5 += wanted in ranked
    return first, top5


async def run(settings: Settings) -> None:
    settings.embeddings = EmbeddingsSettings(enabled=True)
    services = Services.build(settings)
    await services.start()
    try:
        graph = f"paraphrase-{secrets.token_hex(4)}"
        texts = [m for m, _ in PAIRS] + OTHERS
        ids = [(await services.memory.remember(RememberInput(text=t, graph=graph))).id for t in texts]
        while await services.embeddings.embed_pending():
            pass
        for name, memory in (("off", MemoryService(services.store)), ("on", services.memory)):
            first, top5 = await hits(memory, graph, ids)
            print(f"embeddings {name}: hit@1 {first}/{len(PAIRS)}, hit@5 {top5}/{len(PAIRS)}")
    finally:
        await services.close()


if __name__ == "__main__":
    with neo4j_settings() as settings:
        asyncio.run(run(settings))
