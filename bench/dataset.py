"""Deterministic synthetic "agent memories" for benchmarks (10k / 100k / 1M). Stdlib only.

    from dataset import memories, memory, queries
    for m in memories(100_000):   # {"text": str, "entities": [{"label", "name"}], "tags": [str]}
        ...
    qs = queries(200, 100_000)    # 200 query strings, every one with hits among the first 100k

Model (all fixed by the seed, built once per seed and cached):
- vocabulary: 30,000 distinct pronounceable pseudo-words made of syllables, lower-case ASCII
  letters only, 4-10 letters. Word frequency is Zipf-Mandelbrot, p(rank r) ~ 1/(r + 2.7), the fit
  usually quoted for English: the top word is ~3% of all tokens, half of all tokens come from the
  ~300 most frequent words, and ~2/3 of the vocabulary occurs fewer than 1 in 100k tokens. Draws
  use a 2**22-slot lookup table (quantisation < 10% of the rarest word's probability).
- a memory's text: 12-30 words (uniform) drawn from that distribution, joined by spaces.
- 1-3 distinct entities per memory, each `Person` or `Topic` (even odds). Persons come from a pool
  of 2,000 names (35% are two words, "Kalomi Tresu"), Topics from a pool of 5,000 one-word names;
  both Zipf (s = 1) over their pool, so the top persons/topics are hubs: the top Person is ~12% of
  Person mentions. Names are capitalised pseudo-words, unique across both pools and disjoint from
  the vocabulary (so a name in a query only matches entities).
- 0-2 distinct tags from a pool of 50 lower-case pseudo-words (Zipf, s = 1).
- memory i is generated from its own RNG, random.Random(seed * 1_000_003 + i), so it is the same
  whatever n: memories(10_000) is a prefix of memories(100_000), and memory(i) gives it directly.

Speed (measured on the 2-core bench machine, CPython 3.11.7, with the cores shared with a busy
Neo4j): building the tables ~0.6 s once per seed; memories(1_000_000) 26 s (26 us a memory, about a
quarter of it the per-index reseed), memories(100_000) 2.6 s. `python bench/dataset.py N` re-measures.
A query at N = 100k matches ~24k memories on average when its words are OR-ed (p50 ~20k).
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Iterator
from typing import Any

VOCAB_SIZE = 30_000
PERSON_POOL = 2_000
TOPIC_POOL = 5_000
TAG_POOL = 50
ZIPF_OFFSET = 2.7  # Mandelbrot's q for the vocabulary
TEXT_WORDS = (12, 30)
ENTITIES = (1, 3)
TAGS = (0, 2)
QUERY_WORDS = (3, 6)
QUERY_ENTITY_ODDS = 0.25

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "dr",
    "gr",
    "kr",
    "pl",
    "pr",
    "st",
    "tr",
    "ch",
    "sh",
    "th",
    "",
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ou", "io")
_CODAS = ("", "", "", "", "n", "r", "s", "l", "m", "k", "t", "nd", "st")


def _pseudo_words(rng: random.Random, count: int, taken: set[str], lo: int = 4, hi: int = 10) -> list[str]:
    """`count` new distinct syllable words of lo..hi letters, none in `taken` (which is updated)."""
    out: list[str] = []
    while len(out) < count:
        word = "".join(
            rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.randint(2, 4))
        )
        if lo <= len(word) <= hi and word not in taken:
            taken.add(word)
            out.append(word)
    return out


def _sampler(pool: list[str], bits: int, offset: float = 0.0, s: float = 1.0) -> list[str]:
    """A 2**bits table in which pool[r-1] fills a share ~ 1/(r + offset)**s of the slots, so that
    table[rng.getrandbits(bits)] is one Zipf draw (quantised to 2**-bits; every entry gets >= 1 slot)."""
    cw = list(itertools.accumulate(1.0 / (r + offset) ** s for r in range(1, len(pool) + 1)))
    size, table, prev = 1 << bits, [], 0
    for i, (word, c) in enumerate(zip(pool, cw, strict=True)):
        edge = max(prev + 1, min(round(c / cw[-1] * size), size - (len(pool) - 1 - i)))
        table.extend([word] * (edge - prev))
        prev = edge
    return table


class _Tables:
    def __init__(self, seed: int) -> None:
        rng = random.Random(seed * 7919 + 1)
        taken: set[str] = set()
        self.vocab = _pseudo_words(rng, VOCAB_SIZE, taken)
        self.vocab_draw = _sampler(self.vocab, 22, ZIPF_OFFSET)  # rarest word: ~14 of 4M slots
        self.tags = _pseudo_words(rng, TAG_POOL, taken)
        self.tags_draw = _sampler(self.tags, 16)
        # Entity names: capitalised, unique across both pools (the peer MERGEs entities by name).
        names: set[str] = set()
        persons: list[str] = []
        while len(persons) < PERSON_POOL:
            parts = _pseudo_words(rng, 2 if rng.random() < 0.35 else 1, taken)
            name = " ".join(p.capitalize() for p in parts)
            if name not in names:
                names.add(name)
                persons.append(name)
        self.persons = persons
        self.persons_draw = _sampler(persons, 20)
        self.topics = [w.capitalize() for w in _pseudo_words(rng, TOPIC_POOL, taken)]
        self.topics_draw = _sampler(self.topics, 20)


@functools.lru_cache(maxsize=4)
def _tables(seed: int) -> _Tables:
    return _Tables(seed)


def _make(rng: random.Random, t: _Tables) -> dict[str, Any]:
    rand, bits = rng.random, rng.getrandbits
    vocab = t.vocab_draw
    words = [
        vocab[bits(22)] for _ in range(TEXT_WORDS[0] + int(rand() * (TEXT_WORDS[1] - TEXT_WORDS[0] + 1)))
    ]
    want = ENTITIES[0] + int(rand() * (ENTITIES[1] - ENTITIES[0] + 1))
    entities: list[dict[str, str]] = []
    seen: set[str] = set()
    for _ in range(want * 4):  # bounded retries on a repeated name
        if rand() < 0.5:
            label, name = "Person", t.persons_draw[bits(20)]
        else:
            label, name = "Topic", t.topics_draw[bits(20)]
        if name not in seen:
            seen.add(name)
            entities.append({"label": label, "name": name})
            if len(entities) == want:
                break
    tags: list[str] = []
    for _ in range(int(rand() * (TAGS[1] - TAGS[0] + 1)) + TAGS[0]):
        tag = t.tags_draw[bits(16)]
        if tag not in tags:
            tags.append(tag)
    return {"text": " ".join(words), "entities": entities, "tags": tags}


def memory(i: int, seed: int = 7) -> dict[str, Any]:
    """Memory number i (0-based) of the stream `memories(..., seed)`."""
    return _make(random.Random(seed * 1_000_003 + i), _tables(seed))


def memories(n: int, seed: int = 7, start: int = 0) -> Iterator[dict[str, Any]]:
    """Memories start .. n-1 (memory i identical whatever n; see the module doc)."""
    t = _tables(seed)
    rng = random.Random()
    base = seed * 1_000_003
    for i in range(start, n):
        rng.seed(base + i)
        yield _make(rng, t)


def queries(k: int, n: int, seed: int = 11, memory_seed: int = 7) -> list[str]:
    """k query strings; query j takes 3-6 distinct words of a random memory among the first n (so it
    has hits), and 1 time in 4 also one entity name of that memory. Query j is the same whatever k."""
    out: list[str] = []
    for j in range(k):
        rng = random.Random(seed * 1_000_003 + j)
        m = memory(rng.randrange(n), memory_seed)
        distinct = list(dict.fromkeys(m["text"].split()))
        words = rng.sample(distinct, min(len(distinct), rng.randint(*QUERY_WORDS)))
        if rng.random() < QUERY_ENTITY_ODDS:
            words.append(rng.choice(m["entities"])["name"])
        out.append(" ".join(words))
    return out


if __name__ == "__main__":  # python bench/dataset.py [N]: timing and a few statistics
    import sys
    import time
    from collections import Counter

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t0 = time.perf_counter()
    _tables(7)
    t1 = time.perf_counter()
    words = ents = 0
    persons: Counter[str] = Counter()
    for m in memories(n):
        words += m["text"].count(" ") + 1
        ents += len(m["entities"])
        persons.update(e["name"] for e in m["entities"] if e["label"] == "Person")
    t2 = time.perf_counter()
    print(f"tables {t1 - t0:.2f}s, {n} memories {t2 - t1:.2f}s ({(t2 - t1) / n * 1e6:.1f} us each)")
    print(f"mean words {words / n:.1f}, mean entities {ents / n:.2f}, top persons {persons.most_common(3)}")
    print(queries(5, n))
