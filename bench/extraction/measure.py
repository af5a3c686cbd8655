"""Extraction candidates side by side on the labelled set (bench/extraction/labelled.jsonl).

    .venv/bin/python bench/extraction/measure.py [--rounds 5]

(spaCy candidates need `pip install -e '.[spacy]'`.) For each candidate, on the same texts in one run:
- entities: precision, recall and F1 of the names found against the gold names, a name matching when
  their normalised forms are equal (domain/extraction.py: normalise; case, possessives, plurals and
  spacing do not count); `typed` is the share of matched names whose label is the gold one (rules give
  no kind: `Name`);
- key phrases: precision and recall of the topics found against the gold phrases, a topic matching a gold
  phrase with the same head (last word) when one's words hold the other's ("support group" and "LGBTQ
  support group"); `exact` counts equal normalised forms only;
- speed on this machine's cores: p50 of one text alone, and texts a second over the whole set read
  `--rounds` times in one thread (the worker's: one thread at the lowest priority).
Per kind of text (chat turns, diary lines, agent notes, the hard ones) with `--by-kind`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphsvc.domain.extraction import TOPIC, Mention, bounded, normalise
from graphsvc.extractor.rules import RulesExtractor

LABELLED = Path(__file__).with_name("labelled.jsonl")
Extract = Callable[[Sequence[str]], list[list[Mention]]]


@dataclass(frozen=True)
class Item:
    text: str
    kind: str
    entities: dict[str, str]  # norm: label
    phrases: list[str]  # norms


def load() -> list[Item]:
    items = []
    for line in LABELLED.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        entities = {normalise(e["name"]): e["label"] for e in row["entities"]}
        items.append(Item(row["text"], row["kind"], entities, [normalise(p) for p in row["phrases"]]))
    return items


def phrase_match(found: str, gold: str) -> bool:
    if found == gold:
        return True
    a, b = found.split(), gold.split()
    return a[-1] == b[-1] and (set(a) <= set(b) or set(b) <= set(a))


@dataclass
class Score:
    ent_found: int = 0
    ent_right: int = 0
    ent_gold: int = 0
    ent_recalled: int = 0
    typed: int = 0
    ph_found: int = 0
    ph_right: int = 0
    ph_exact: int = 0
    ph_gold: int = 0
    ph_recalled: int = 0

    def add(self, item: Item, found: list[Mention]) -> None:
        names = {m.norm: m.label for m in found if m.label != TOPIC}
        topics = [m.norm for m in found if m.label == TOPIC]
        self.ent_found += len(names)
        self.ent_gold += len(item.entities)
        right = [n for n in names if n in item.entities]
        self.ent_right += len(right)
        self.ent_recalled += len(right)
        self.typed += sum(names[n] == item.entities[n] for n in right)
        self.ph_found += len(topics)
        self.ph_gold += len(item.phrases)
        self.ph_right += sum(any(phrase_match(t, g) for g in item.phrases) for t in topics)
        self.ph_exact += sum(t in item.phrases for t in topics)
        self.ph_recalled += sum(any(phrase_match(t, g) for t in topics) for g in item.phrases)

    def row(self) -> dict[str, float]:
        p = self.ent_right / self.ent_found if self.ent_found else 0.0
        r = self.ent_recalled / self.ent_gold if self.ent_gold else 0.0
        return {
            "ent_P": p,
            "ent_R": r,
            "ent_F1": 2 * p * r / (p + r) if p + r else 0.0,
            "typed": self.typed / self.ent_right if self.ent_right else 0.0,
            "phr_P": self.ph_right / self.ph_found if self.ph_found else 0.0,
            "phr_P_exact": self.ph_exact / self.ph_found if self.ph_found else 0.0,
            "phr_R": self.ph_recalled / self.ph_gold if self.ph_gold else 0.0,
        }


def candidates() -> dict[str, Extract]:
    rules = RulesExtractor()
    found: dict[str, Extract] = {rules.name: rules.extract}
    try:
        from graphsvc.extractor.spacy_ner import SpacyExtractor
    except ImportError:
        print("spaCy candidates left out: pip install -e '.[spacy]'", file=sys.stderr)
        return found
    tags = SpacyExtractor.load()
    found["spacy-sm: NER + tag phrases"] = tags.extract
    found["spacy-sm: NER + noun chunks (parser)"] = _with_chunks()
    found["spacy-sm + rules names"] = _combined(tags.extract, rules)
    return found


def _with_chunks() -> Extract:
    import spacy

    from graphsvc.extractor.spacy_ner import LABELS, model_folder

    nlp = spacy.load(model_folder(), exclude=["lemmatizer"])

    def one(text: str) -> list[Mention]:
        doc = nlp(text)
        found = [Mention(LABELS[e.label_], e.text, normalise(e.text)) for e in doc.ents if e.label_ in LABELS]
        skip = {"PRON", "DET"}
        for chunk in doc.noun_chunks:
            words = [t.text for t in chunk if t.pos_ not in skip and not t.ent_type_]
            if words:
                found.append(Mention(TOPIC, " ".join(words), normalise(" ".join(words))))
        return bounded(m for m in found if m.norm)

    return lambda texts: [one(t) for t in texts]


def _combined(spacy_extract: Extract, rules: RulesExtractor) -> Extract:
    """spaCy's names and phrases, and the names rules see that spaCy did not (as `Name`)."""

    def run(texts: Sequence[str]) -> list[list[Mention]]:
        out = []
        for text, found in zip(texts, spacy_extract(texts), strict=True):
            extra = [m for m in rules.extract_one(text) if m.label != TOPIC]
            out.append(bounded([*found, *extra]))
        return out

    return run


def measure(name: str, extract: Extract, items: list[Item], rounds: int, by_kind: bool) -> None:
    texts = [i.text for i in items]
    found = extract(texts)
    scores = {"all": Score()}
    for item, f in zip(items, found, strict=True):
        scores["all"].add(item, f)
        scores.setdefault(item.kind, Score()).add(item, f)
    singles = []
    for text in texts:
        started = time.perf_counter()
        extract([text])
        singles.append(time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(rounds):
        extract(texts)
    rate = rounds * len(texts) / (time.perf_counter() - started)
    for kind, score in scores.items():
        if kind != "all" and not by_kind:
            continue
        r = score.row()
        print(
            f"| {name} | {kind} | {r['ent_P']:.2f} | {r['ent_R']:.2f} | {r['ent_F1']:.2f} | {r['typed']:.2f} "
            f"| {r['phr_P']:.2f} ({r['phr_P_exact']:.2f}) | {r['phr_R']:.2f} "
            f"| {statistics.median(singles) * 1000:.2f} | {rate:,.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--by-kind", action="store_true")
    args = parser.parse_args()
    items = load()
    print(
        f"{len(items)} texts, {sum(len(i.entities) for i in items)} gold names, "
        f"{sum(len(i.phrases) for i in items)} gold phrases"
    )
    print(
        "| candidate | texts | names P | names R | names F1 | typed | phrases P (exact) | phrases R | p50 ms | texts/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, extract in candidates().items():
        measure(name, extract, items, args.rounds, args.by_kind)


if __name__ == "__main__":
    main()
