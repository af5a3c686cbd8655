"""store_event, retrieve_memories, list_contexts and generate_insights on the memory service.

An event's contexts are also tagged as words (skill:react_hooks -> "skill react hooks"), so that
keyword recall finds an event by its context as well as by its text.

generate_insights uses no LLM: it retrieves the knowledge most relevant to the task (recall on
`locus_query`, else the task), groups it by context (best score first), and for each context adds
how often it is reinforced, which events contradict it (latest first), and its most recent event.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from graphsvc.domain.locus import (
    LINK_TYPES,
    ContextInfo,
    ContextInsight,
    Contradiction,
    InsightsInput,
    InsightsResult,
    Knowledge,
    ListContextsInput,
    ListContextsResult,
    RetrievedMemory,
    RetrieveInput,
    RetrieveResult,
    StoreEventInput,
    StoreEventResult,
    occurred_at,
)
from graphsvc.domain.models import EntityIn, RecallInput, RememberInput
from graphsvc.services.memory import MemoryService
from graphsvc.services.ports import Reader

CANDIDATES = 50  # recall's largest page: the pool that context filters select from


def _words(context: str) -> str:
    """A context as words for the keyword index: skill:react_hooks -> "skill react hooks"."""
    return " ".join(context.replace(":", " ").replace("_", " ").split())[:64]


def _wanted(contexts: list[str], ids: list[str] | None, types: dict[str, list[str]] | None) -> bool:
    if ids is None and types is None:
        return True
    for context in contexts:
        kind, _, name = context.partition(":")
        if (ids and context in ids) or (types and kind in types and (not types[kind] or name in types[kind])):
            return True
    return False


class LocusService:
    def __init__(self, memory: MemoryService, store: Reader):
        self._memory = memory
        self._store = store

    async def store_event(self, req: StoreEventInput) -> StoreEventResult:
        linked = {kind: getattr(req, kind) for kind in LINK_TYPES}
        contexts = list(
            dict.fromkeys([c for c in [req.context_id] if c] + [c for cs in linked.values() for c in cs])
        )
        links = [(LINK_TYPES[kind], f"Context:{c}") for kind, cs in linked.items() for c in dict.fromkeys(cs)]
        extra: dict[str, Any] = {"eventKind": req.event_kind, "source": req.source}
        if req.timestamp:
            extra["timestamp"] = req.timestamp
        if req.payload is not None:
            extra["payload"] = json.dumps(req.payload, sort_keys=True, ensure_ascii=False)
        stored = await self._memory.remember(
            RememberInput(
                text=req.text(),
                entities=[EntityIn(label="Context", name=c) for c in contexts],
                tags=[req.event_kind, f"source:{req.source}", *map(_words, contexts)],
                occurredAt=occurred_at(req.timestamp),
                graph=req.graph,
            ),
            links=links,
            extra=extra,
        )
        return StoreEventResult(
            event_id=stored.id,
            hash=stored.hash,
            event_kind=req.event_kind,
            context_id=req.context_id,
            contexts=contexts,
            links=[{"type": t, "to": to.removeprefix("Context:")} for t, to in links],
            meaning=stored.meaning,
            extracted=stored.links,
        )

    async def retrieve(self, req: RetrieveInput) -> RetrieveResult:
        recalled = await self._memory.recall(RecallInput(query=req.query, limit=CANDIDATES, graph=req.graph))
        facts = {
            row["id"]: row
            for row in await self._store.run(
                "locus/event_facts", graph=req.graph, ids=[m.id for m in recalled.memories]
            )
        }
        found: list[RetrievedMemory] = []
        for memory in recalled.memories:
            fact: dict[str, Any] = facts.get(memory.id, {})
            contexts: list[str] = fact.get("contexts") or []
            if _wanted(contexts, req.context_ids, req.context_types):
                found.append(
                    RetrievedMemory(
                        text=memory.text,
                        score=memory.score,
                        event_kind=fact.get("eventKind"),
                        source=fact.get("source"),
                        timestamp=fact.get("timestamp"),
                        id=memory.id if req.include_ids else None,
                        context_ids=sorted(contexts) if req.include_ids else None,
                        why=memory.why,
                        found_by=memory.foundBy,
                    )
                )
        return RetrieveResult(memories=found[: req.limit], total=len(found))

    async def list_contexts(self, req: ListContextsInput) -> ListContextsResult:
        [row] = await self._store.run(
            "locus/list_contexts",
            graph=req.graph,
            contextType=req.context_type,
            contextName=req.context_name,
            skip=req.page * req.limit,
            limit=req.limit,
        )
        return ListContextsResult(
            contexts=[ContextInfo(**c) for c in row["page"]],
            total=row["total"],
            page=req.page,
            limit=req.limit,
        )

    async def insights(self, req: InsightsInput) -> InsightsResult:
        retrieved = await self.retrieve(
            RetrieveInput(
                query=req.locus_query or req.task,
                limit=req.limit,
                context_ids=req.context_ids,
                context_types=req.context_types,
                include_ids=True,
                graph=req.graph,
            )
        )
        groups: dict[str, list[Knowledge]] = {}
        ungrouped: list[Knowledge] = []
        for memory in retrieved.memories:
            knowledge = Knowledge(
                id=memory.id or "",
                text=memory.text,
                event_kind=memory.event_kind,
                timestamp=memory.timestamp,
                score=memory.score,
            )
            for context in memory.context_ids or []:
                groups.setdefault(context, []).append(knowledge)
            if not memory.context_ids:
                ungrouped.append(knowledge)
        stats = {
            row["context_id"]: row
            for row in await self._store.run("locus/context_stats", graph=req.graph, contexts=list(groups))
        }
        insights = [
            ContextInsight(
                context_id=context,
                knowledge=items,
                reinforced=stats.get(context, {}).get("reinforced", 0),
                contradicted_by=[
                    Contradiction(**c) for c in stats.get(context, {}).get("contradictedBy", [])
                ],
                most_recent=max(items, key=lambda k: (_seconds(k.timestamp), k.id)),
            )
            for context, items in groups.items()
        ]
        return InsightsResult(task=req.task, insights=insights, ungrouped=ungrouped)


def _seconds(timestamp: str | None) -> float:
    """Unix seconds from an event timestamp (seconds as text) or a createdAt time."""
    if not timestamp:
        return 0.0
    try:
        return float(timestamp)
    except ValueError:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
