"""What extraction reads from a memory's text, and the bounds it keeps (pure: no model, no I/O).

An extractor (graphsvc/extractor/) finds *mentions*: named entities (people, places, organisations,
products, events, works, groups; `Name` when a rule sees a name but not its kind) and key phrases
(`Topic`: the noun phrases that carry what the text is about). Each is stored as an ordinary entity
node `Label:name`, joined to its memory by an extracted MENTIONS edge (services/extraction.py).

`norm` is how names meet: an extracted name whose norm equals an entity's of the same graph (one an
agent gave, or one extracted from another memory) is that entity. It folds case and compatibility
forms, possessives, a leading article or possessive pronoun, the last word's plural, punctuation
around words and runs of whitespace: "St. Anne's", "st anne" and "ST. ANNE" meet; "the support groups"
and "support group" meet.

`bounded` is the last word on what reaches the graph, whatever the extractor: labels from LABELS
only, names of at most MAX_NAME characters and MAX_WORDS words, no name without a letter or digit, one
mention per norm (the first: named entities before key phrases), at most MAX_NAMED named entities and
MAX_TOPICS key phrases per memory (MAX_MENTIONS in all). A text of 4,000 characters of capitalised
junk therefore adds at most 16 edges, each to a short name of the memory's own graph.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

NAMED_LABELS = ("Person", "Place", "Organization", "Product", "Event", "Work", "Group", "Name")
TOPIC = "Topic"
LABELS = frozenset((*NAMED_LABELS, TOPIC))
MAX_NAMED = 10  # named entities per memory
MAX_TOPICS = 6  # key phrases per memory
MAX_MENTIONS = MAX_NAMED + MAX_TOPICS
MAX_NAME = 64  # characters of an extracted name: a longer span is not a name (dropped, never cut)
MAX_WORDS = 6
_LEADING_WORDS = "the a an my our your his her their its this that these those some"
_LEADING = frozenset(_LEADING_WORDS.split())  # words that do not change what a phrase names
_INVARIANT_WORDS = "news series species physics mathematics lens always perhaps sometimes whereas"
_INVARIANT = frozenset(_INVARIANT_WORDS.split())  # end in s, are no plural
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s?(?=\s|$)")
_EDGE_PUNCTUATION = "\"'\u2018\u2019\u201c\u201d()[]{}<>,;:!?.*_~`|"
_CODE_LIKE = re.compile(r"[\d/\-_.@#+&]")  # a word with these is an identifier: never singularised
_HAS_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Mention:
    label: str  # one of LABELS
    name: str  # as the text writes it (possessive and surrounding punctuation dropped)
    norm: str  # normalise(name): how it meets other names

    @property
    def id(self) -> str:
        return f"{self.label}:{self.name}"

    @property
    def named(self) -> bool:
        return self.label != TOPIC


def mention(label: str, name: str) -> Mention | None:
    """A mention of `name` as `label`, its name cleaned; None when nothing of it is left."""
    cleaned = clean_name(name)
    norm = normalise(cleaned)
    return Mention(label, cleaned, norm) if cleaned and norm else None


def clean_name(name: str) -> str:
    """`name` as stored: NFC, whitespace runs as one space, outer punctuation and a possessive dropped."""
    text = " ".join(unicodedata.normalize("NFC", name).split())
    text = _POSSESSIVE.sub("", text).strip(_EDGE_PUNCTUATION + " ")
    return text


def normalise(name: str) -> str:
    """The form in which names meet (module docstring); "" when no word is left."""
    words = [
        _POSSESSIVE.sub("", w).strip(_EDGE_PUNCTUATION)
        for w in unicodedata.normalize("NFKC", name).casefold().split()
    ]
    words = [w for w in words if _HAS_WORD.search(w)]
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    if words:
        words[-1] = singular(words[-1])
    return " ".join(words)


def singular(word: str) -> str:
    """An English plural's singular by its ending (lower-case `word`); identifiers stay as they are."""
    if len(word) <= 3 or word in _INVARIANT or _CODE_LIKE.search(word) or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


def bounded(found: Iterable[Mention]) -> list[Mention]:
    """What may reach the graph of what an extractor found, in its order (module docstring)."""
    kept: dict[str, Mention] = {}
    named = topics = 0
    for m in sorted(found, key=lambda m: not m.named):  # stable: each kind keeps its order
        if m.label not in LABELS or not m.norm or m.norm in kept or not _fits(m.name):
            continue
        if m.named and named < MAX_NAMED:
            named += 1
        elif not m.named and topics < MAX_TOPICS:
            topics += 1
        else:
            continue
        kept[m.norm] = m
    return list(kept.values())


def _fits(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME and len(name.split()) <= MAX_WORDS and _HAS_WORD.search(name) is not None
