"""The write side of memory: remember (alone, in a group commit, or in bulk) and forget.

Both keep a graph's remember order, its memories' windows (services/index/windows.py's WINDOW) and its term
statistics' deltas in step, in the transaction that writes them. An interactive remember also writes
its memory's vector and links in that transaction, when they are read in time (services/at_write.py).
Depends on a small store Protocol, not on the driver. Validation of shapes and bounds happens in the
contract models; this layer checks what needs the graph (relation endpoints, superseded memories,
unknown ids).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from graphsvc.domain.hashing import format_timestamp
from graphsvc.domain.models import (
    EntityIn,
    ForgetResult,
    IdInput,
    RememberInput,
    RememberReceipt,
    RememberResult,
)
from graphsvc.errors import Conflict, GraphsvcError, InvalidInput, NotFound, Refused, Unavailable
from graphsvc.services import provenance
from graphsvc.services.at_write import BUDGET_S, INTERACTIVE_BATCH, AtWrite, Freshness
from graphsvc.services.drafts import BULK, Draft, Found, Readiness, Reading, Stored, Triple
from graphsvc.services.embeddings import EmbeddingService
from graphsvc.services.extraction import ExtractionService
from graphsvc.services.group_commit import GroupCommit
from graphsvc.services.index.term_fold import TermFolder
from graphsvc.services.index.term_stats import Change, as_delta, fields_of, rewindowed, tally
from graphsvc.services.index.windows import WINDOW, windows
from graphsvc.services.ports import Reader, Store
from graphsvc.services.remember_rows import Around, Begun, Gone, Known

RETRY_WINDOW_S = 300  # a remember of the same content within it is a retry: the stored receipt answers
SPAN = 2 * WINDOW  # memories on each side whose windows a memory's arrival or departure can change
Outcome = Stored | GraphsvcError  # a draft's fate in a write: where it landed, or why it was refused
States = dict[str, tuple[Readiness, Readiness]]  # a memory id's vector and links, as receipts say them


class RememberService:
    def __init__(
        self,
        store: Store,
        folder: TermFolder,
        clock: Callable[[], datetime],
        embeddings: EmbeddingService | None = None,
        deadline_s: float | None = None,
        extraction: ExtractionService | None = None,
        *,
        budget_s: float = BUDGET_S,
        freshness: Freshness | None = None,
    ):
        """`deadline_s`: how long a remember waits for its answer, counted from its arrival (None:
        as long as the store's own deadlines take); `budget_s`: how long, from its arrival, it waits
        for its memory's vector and links (services/at_write.py; 0: it leaves them to the workers)."""
        self._store = store
        self._folder = folder
        self._clock = clock
        self._embeddings = embeddings
        self._extraction = extraction
        self._deadline_s = deadline_s
        self.at_write = AtWrite(embeddings, extraction, budget_s, freshness)
        self._commits: GroupCommit[Draft, Stored] = GroupCommit(self._flush)

    async def remember(
        self,
        req: RememberInput,
        *,
        links: Sequence[tuple[str, str]] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> RememberResult:
        """Store a memory. `links` (type, entity id) and `extra` properties serve store_event.

        Retry-safe: the same content remembered in the same graph within RETRY_WINDOW_S (a retry whose
        answer was lost, by the driver or the client) answers the stored memory's receipt. Concurrent
        remembers share a transaction (group commit, whatever their graphs), each with its own answer.
        Its text is read (vector, links) from now on, and written with it if read within the budget.

        Raises:
            NotFound, InvalidInput: a relation endpoint is unknown or ambiguous (nothing is written).
            Unavailable: no answer within the deadline, counted from this call (the write may stand).
        """
        written_by = {**provenance.properties(), **(extra or {})}
        reading = self.at_write.reading(req.text)
        draft = Draft.of(req, format_timestamp(self._clock()), links, written_by, reading)
        try:
            stored = await self._commits.submit(draft, within_s=self._deadline_s)
        except TimeoutError as e:
            raise Unavailable(f"Neo4j did not answer within {self._deadline_s:g} s") from e
        return stored.result()

    async def remember_many(
        self, reqs: Sequence[RememberInput], *, interactive: bool = False
    ) -> list[RememberReceipt]:
        """Bulk remember, in one transaction (and one UNWIND) whatever the graphs. Idempotent: an item
        whose content (text, tags, entities, relations) is already in its graph is not stored again
        and its receipt names the existing memory. An item whose relation cannot be resolved is
        rejected alone. Receipts follow the order of `reqs`. An `interactive` batch of at most
        INTERACTIVE_BATCH items reads its texts as remember does; others leave them to the workers."""
        created_at = format_timestamp(self._clock())
        written_by = provenance.properties()
        now = interactive and len(reqs) <= INTERACTIVE_BATCH
        drafts = [
            Draft.of(
                req, created_at, extra=written_by, reading=self.at_write.reading(req.text) if now else BULK
            )
            for req in reqs
        ]
        outcomes = await self._write(drafts, since="")
        return [_receipt(index, outcome) for index, outcome in enumerate(outcomes)]

    async def _flush(self, drafts: list[Draft]) -> list[Stored | BaseException]:
        """One group commit: the drafts of concurrent remembers in one transaction, in arrival order.
        Should the transaction itself refuse the group (not an outage), each is tried alone, so that
        only the one at fault fails: a group holds the writers of every graph."""
        since = format_timestamp(self._clock() - timedelta(seconds=RETRY_WINDOW_S))
        try:
            return list(await self._write(drafts, since=since))
        except (InvalidInput, Conflict, Refused):
            if len(drafts) == 1:
                raise
        alone: list[Stored | BaseException] = []
        for draft in drafts:
            try:
                alone += await self._write([draft], since=since)
            except GraphsvcError as error:
                alone.append(error)
        return alone

    async def _write(self, drafts: list[Draft], *, since: str) -> list[Outcome]:
        """Write `drafts` in one transaction, an outcome each, by position: created; duplicate of a
        memory of its graph with the same content created at or after `since` (or of one of these very
        drafts, when the driver re-runs a transaction whose commit went unacknowledged); or the error
        that refused it alone (an unresolvable relation). Two statements whatever the graphs
        (memory/begin and memory/commit), one more per graph whose relations or supersedes must be
        looked up, and one each for the vectors and the links read at write."""
        graphs = sorted({d.graph for d in drafts})

        async def work(tx: Reader) -> list[Outcome]:
            rows = await tx.run(
                "memory/begin",
                graphs=graphs,
                keys=[d.key for d in drafts],
                since=since,
                ids=[d.id for d in drafts],
                span=SPAN,
            )
            begun = {b.graph: b for b in map(Begun.from_row, rows)}
            known = {k.key: k for b in begun.values() for k in b.known}
            states = {k.id: self._readiness(k) for k in known.values()}
            resolved: dict[int, list[Triple] | GraphsvcError] = {}
            for graph in graphs:
                resolved |= await _resolve(
                    tx, graph, {n: d for n, d in enumerate(drafts) if d.graph == graph}
                )
            outcomes = [_outcome(d, resolved[n], known) for n, d in enumerate(drafts)]
            written = [o.draft for o in outcomes if isinstance(o, Stored) and o.status == "created"]
            if written:
                states |= await self._create(tx, written, begun)
            return [_settled(o, states) for o in outcomes]

        outcomes = await self._store.write_transaction(work)
        created = [o for o in outcomes if isinstance(o, Stored) and o.status == "created"]
        self._folder.written(o.draft.graph for o in created)
        self.at_write.report((o.draft.reading, o.meaning or "off", o.links or "off") for o in created)
        return outcomes

    def _readiness(self, known: Known) -> tuple[Readiness, Readiness]:
        """A stored memory's vector and links, as a receipt says them."""
        meaning = ("ready" if known.embedded else "pending") if self.at_write.meaning else "off"
        links = ("ready" if known.extracted else "pending") if self.at_write.links else "off"
        return meaning, links

    async def _create(self, tx: Reader, written: list[Draft], begun: dict[str, Begun]) -> States:
        """The memories, each graph's in remember order after its last position (as memory/begin read
        it, under the graph's lock), and the windows they touch; then the vectors and links read at
        write (awaited here, each until its write's budget runs out), written by the workers' own
        statements on memories created claimed by this write. Each memory's vector and links."""
        commit = _Commit()
        for graph in sorted({d.graph for d in written}):
            mine = [d for d in written if d.graph == graph]
            base, recent = begun[graph].seq, begun[graph].recent
            sequence = [(n.id, n.text) for n in recent] + [(d.id, d.req.text) for d in mine]
            window = {
                w["id"]: w["window"]
                for w in windows(sequence, [i for i, _ in sequence[max(0, len(recent) - WINDOW) :]])
            }
            commit.states.append({"graph": graph, "seq": base + len(mine)})
            commit.memories += [d.row(base + 1 + n, window[d.id]) for n, d in enumerate(mine)]
            replaced = commit.rewindow(graph, {n.id: n.window for n in recent[-WINDOW:]}, window)
            commit.count(
                graph, [c for d in mine for c in fields_of(d.req.text, window[d.id], d.tags, 1)] + replaced
            )
        claim = _Claim(secrets.token_hex(8), self.at_write.meaning, self.at_write.links)
        claim.model = self._embeddings.model if self._embeddings else None
        claim.extractor = self._extraction.extractor if self._extraction else None
        rows = {item["memory"]["id"]: item for item in commit.memories}
        found = await _found(written)
        for d in written:
            claim.mark(rows[d.id], d.reading, found.get(d.id))
        embedded = await claim.written(tx, commit)
        return claim.states(embedded, [d.id for d in written])

    async def forget(self, req: IdInput) -> ForgetResult:
        """Delete a memory; its neighbours' windows close the gap.

        Raises:
            NotFound: no such memory in the graph.
        """
        now = format_timestamp(self._clock())

        async def work(tx: Reader) -> None:
            rows = await tx.run("memory/forget", graph=req.graph, id=req.id, now=now)
            if not rows:
                raise NotFound(f"no memory {req.id!r} in graph {req.graph!r}")
            gone = Gone.from_row(rows[0])
            commit = _Commit()
            replaced = await _close_gap(tx, req.graph, gone.seq, commit) if gone.seq is not None else []
            commit.count(req.graph, fields_of(gone.text, gone.window, gone.tags, -1) + replaced)
            await commit.run(tx)

        await self._store.write_transaction(work)
        self._folder.written([req.graph])
        return ForgetResult(id=req.id, deleted=True)


def _receipt(index: int, outcome: Outcome) -> RememberReceipt:
    if isinstance(outcome, Stored):
        return outcome.receipt(index)
    return RememberReceipt(index=index, status="rejected", error=str(outcome))


def _outcome(draft: Draft, resolved: list[Triple] | GraphsvcError, known: dict[str, Known]) -> Outcome:
    """Where `draft` lands: a duplicate of a known memory with its content key (a content key names
    its graph: no two graphs share one), refused, or created (and known from now on, so that a later
    draft of the same batch with the same content is its duplicate)."""
    final = draft.resolved(resolved if isinstance(resolved, list) else [])
    if draft.key in known:
        same = known[draft.key]
        return Stored(final, "duplicate", same.id, same.hash)
    if isinstance(resolved, GraphsvcError):
        return resolved
    known[draft.key] = Known(draft.key, draft.id, draft.digest)
    return Stored(final, "created", draft.id, draft.digest)


async def _found(drafts: list[Draft]) -> dict[str, Found | None]:
    """The mentions read at write of each draft that reads them, by its id (None: not by its budget)."""
    reading = [d for d in drafts if d.reading.found is not None]
    found = await asyncio.gather(*(d.reading.found_read() for d in reading))
    return {d.id: f for d, f in zip(reading, found, strict=True)}


def _settled(outcome: Outcome, states: States) -> Outcome:
    """The outcome with its memory's vector and links, as the transaction left them."""
    if not isinstance(outcome, Stored):
        return outcome
    meaning, links = states[outcome.id]
    return replace(outcome, meaning=meaning, links=links)


async def _resolve(
    tx: Reader, graph: str, drafts: dict[int, Draft]
) -> dict[int, list[Triple] | GraphsvcError]:
    """Resolve relation endpoints of one graph's drafts (by their position in the write): the item's
    own entities (by id, else name), then entities of the batch and of the graph; and check that the
    memories a draft supersedes are in the graph. Each draft's relation triples, or why it cannot be
    written."""
    introduced: dict[str, set[str]] = {}
    for d in drafts.values():
        for e in d.entities:
            introduced.setdefault(e.id, set()).add(e.id)
            introduced.setdefault(e.name, set()).add(e.id)
    local = {n: _local_refs(d.entities, d.refs) for n, d in drafts.items()}
    pending = sorted({ref for n, d in drafts.items() for ref in d.refs if ref not in local[n]})
    found: dict[str, list[str]] = {}
    if pending:
        rows = await tx.run("memory/resolve_entities", graph=graph, refs=pending)
        found = {row["ref"]: row["ids"] for row in rows}
    superseded = sorted({p for d in drafts.values() for p in d.req.supersedes})
    known: set[str] = set()
    if superseded:
        [row] = await tx.run("memory/known_ids", graph=graph, ids=superseded)
        known = set(row["ids"])
    outcomes: dict[int, list[Triple] | GraphsvcError] = {}
    for n, d in drafts.items():
        try:
            missing = sorted(set(d.req.supersedes) - known)
            if missing:
                raise NotFound(f"no memory {missing[0]!r} in graph {graph!r} to supersede")
            resolved = {
                ref: local[n].get(ref)
                or _one_entity(ref, sorted(set(found.get(ref, [])) | introduced.get(ref, set())))
                for ref in d.refs
            }
        except GraphsvcError as error:
            outcomes[n] = error
            continue
        outcomes[n] = [(resolved[r.from_], r.type, resolved[r.to]) for r in d.req.relations]
    return outcomes


async def _close_gap(tx: Reader, graph: str, seq: int, commit: _Commit) -> list[Change]:
    """A forgotten memory's text leaves the windows of its neighbours, which close the gap; returns
    what that changes in the graph's term statistics."""
    around = Around.from_row((await tx.run("memory/around", graph=graph, seq=seq, span=SPAN))[0])
    rows = around.before + around.after
    targets = [n.id for n in around.before[-WINDOW:] + around.after[:WINDOW]]
    new = {w["id"]: w["window"] for w in windows([(n.id, n.text) for n in rows], targets)}
    return commit.rewindow(graph, {n.id: n.window for n in rows if n.id in new}, new)


@dataclass
class _Commit:
    """The parameters of memory/commit: what a transaction writes, graph by graph."""

    states: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    memories: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    windows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    deltas: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def rewindow(self, graph: str, old: dict[str, str | None], new: dict[str, str]) -> list[Change]:
        """Replace the windows of the memories in `old` (id: window now) with theirs in `new`; returns
        what that changes in the term statistics."""
        self.windows += [{"graph": graph, "id": i, "window": new[i]} for i in old]
        return rewindowed({"old": window, "new": new[i]} for i, window in old.items())

    def count(self, graph: str, changes: Iterable[Change]) -> None:
        """Record what a write changed in the index, as the graph's term statistics' delta (term_fold.py)."""
        self.deltas.append(as_delta(graph, tally(changes)))

    async def run(self, tx: Reader) -> None:
        await tx.run("memory/commit", **vars(self))


@dataclass
class _Claim:
    """A write's own claim on the memories it creates, so that the workers' statements (extract/store,
    embed/store) write what it read, in its transaction, as the workers would: a memory whose mentions
    are read by the commit statement, or whose vector is being encoded, is created claimed by the write
    (`extractClaim`, `embedClaim`: its token). The vector is waited for after the commit statement
    (its encoding overlaps the write's statements); one still not read by its write's budget is left
    to the worker (memory/leftovers). What an interactive write leaves to the workers is marked to go
    first there (`extractFirst`, `embedFirst`)."""

    token: str
    meaning: bool  # the embeddings are on
    links: bool  # extraction is on
    model: str | None = None  # names the model on each vector (embed/store)
    extractor: str | None = None  # names the extractor on each edge (extract/store)
    found: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])  # extract/store's rows
    waiting: list[tuple[dict[str, str], Reading]] = field(
        default_factory=list[tuple[dict[str, str], Reading]]
    )

    def mark(self, item: dict[str, Any], reading: Reading, found: Found | None) -> None:
        """Mark memory/commit's row `item` (its memory's labels and properties)."""
        memory, at = item["memory"], {"graph": item["graph"], "id": item["memory"]["id"]}
        item["unembedded"], item["unextracted"] = self.meaning, self.links
        if self.meaning and reading.vector is not None:
            memory["embedClaim"] = self.token
            self.waiting.append((at, reading))
        elif self.meaning and reading.interactive:
            memory["embedFirst"] = True
        if self.links and found is not None:
            memory["extractClaim"] = self.token
            self.found.append(at | {"found": found})
        elif self.links and reading.interactive:
            memory["extractFirst"] = True

    async def written(self, tx: Reader, commit: _Commit) -> set[str]:
        """memory/commit, then the links and the vectors read at write; the ids whose vector is stored."""
        await commit.run(tx)
        if self.found:
            await tx.run("extract/store", token=self.token, rows=self.found, extractor=self.extractor)
        vectors = await asyncio.gather(*(reading.vector_read() for _, reading in self.waiting))
        read = [(at, v) for (at, _), v in zip(self.waiting, vectors, strict=True)]
        if stored := [{**at, "vector": v} for at, v in read if v]:
            await tx.run("embed/store", token=self.token, rows=stored, model=self.model)
        if late := [at for at, v in read if not v]:
            await tx.run("memory/leftovers", token=self.token, rows=late)
        return {at["id"] for at, v in read if v}

    def states(self, embedded: set[str], ids: list[str]) -> States:
        """Each memory's vector and links (`embedded`: the ids whose vector was stored)."""
        extracted = {row["id"] for row in self.found}
        return {i: (_state(self.meaning, i in embedded), _state(self.links, i in extracted)) for i in ids}


def _state(on: bool, ready: bool) -> Readiness:
    return ("ready" if ready else "pending") if on else "off"


def _local_refs(entities: Iterable[EntityIn], refs: list[str]) -> dict[str, str]:
    """Relation endpoints that this request's own entities answer (by id, else by name)."""
    entities = list(entities)
    by_id = {e.id: e.id for e in entities}
    resolved: dict[str, str] = {}
    for ref in refs:
        if ref in by_id:
            resolved[ref] = ref
            continue
        named = [e.id for e in entities if e.name == ref]
        if named:
            resolved[ref] = _one_entity(ref, named)
    return resolved


def _one_entity(ref: str, ids: list[str]) -> str:
    if not ids:
        raise NotFound(f"relation endpoint {ref!r} is neither in entities nor in the graph")
    if len(ids) > 1:  # well-formed, but the name is ambiguous among the entities it could mean
        raise Conflict(f"{ref!r} names {len(ids)} entities ({', '.join(sorted(ids))}); use Label:name")
    return ids[0]
