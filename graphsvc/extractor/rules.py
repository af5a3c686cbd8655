"""Extraction by rules alone (no model): capitalised spans are names, runs of content words are topics.

- A **name** is a run of capitalised or identifier-like words ("St. Anne", "MON/USDC-A", "iPhone",
  "Bank of America"). A capital that only starts a sentence (or follows a speaker's colon) says nothing:
  such a word counts when it is not a common word (COMMON), or when the text also writes it capitalised
  mid-sentence, or when a colon follows it (a speaker: "Caroline: I went").
- A **topic** is a run of up to three content words (not a stop word, a common verb or adverb), its
  last word being its head: "support group", "winter concert". Runs of two or more words first, then
  single words of four letters or more, each in the order of the text.

The kind of a name is not known to rules: they are all `Name`. Deterministic; about 10,000 short
texts a second on one core here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from graphsvc.domain.extraction import MAX_TOPICS, TOPIC, Mention, bounded, mention

VERSION = "rules/2"
_TOKEN = re.compile(r"[#/]?\w(?:[\w'\u2019./&+:#@\-]*\w)?|[.!?:;,()\"\u201c\u201d\n]")
_SENTENCE_END = frozenset('.!?:;\n"\u201c\u201d(')
_TITLES = frozenset(
    {"st", "mr", "mrs", "ms", "dr", "prof", "jr", "sr", "mt", "ave", "no", "vs"}
)  # "St." ends no sentence
_CONNECTORS = frozenset({"of", "de", "la", "le", "du", "del", "der", "van", "von", "da", "di", "&"})
_STOP_WORDS = """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each ever few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me might more most must my myself no nor not now of off on once only or other ought our ours
    ourselves out over own same shall she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what
    when where which while who whom whose why will with would you your yours yourself yourselves
    i'm i've i'll i'd it's that's there's don't didn't can't won't isn't wasn't we're we've you're
    they're let's yes yeah ok okay oh hey hi hello thanks thank please really
"""
_STOP = frozenset(_STOP_WORDS.split())
_TIME_WORDS = """
    monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
    january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec christmas easter
"""
_TIMES = frozenset(_TIME_WORDS.split()) - {"christmas", "easter"}  # times are read by domain/when.py
# An identifier: a path, a URL, a snake_case name, a ticket or host with digits and capitals or dashes.
_IDENTIFIER = re.compile(r"[/_#@]|://|(?=.*\d)(?=.*[A-Za-z])(?=.*[A-Z\-])")
# Words that a sentence often starts with, or that are verbs, adverbs or vague nouns: never a topic
# alone, and no name when only their first capital says so.
_COMMON_WORDS = """
    today yesterday tomorrow tonight morning evening night week weekend month year day days time
    last next new old good great nice lovely awesome amazing wonderful cool sure well also still even
    went go going gone goes got get gets getting made make makes making did done said says say
    saw see seen seeing took take takes taking came come comes coming felt feel feels feeling
    think thought know knew want wanted need needed love loved like liked tried try trying found
    find started start finished finish bought buy sold sell swap swapped check checked failed fail
    set sent send moved move joined join asked ask told tell gave give used use using met meet
    back again always never sometimes maybe probably actually totally definitely absolutely lot lots
    thing things stuff way something anything everything nothing someone everyone anyone people
    one two three four five six seven eight nine ten first second third many much more most
    so very just really quite pretty super big small little long short high low best better
    wow haha lol omg dear note update error warning todo done
"""
COMMON = _STOP | frozenset(_COMMON_WORDS.split())


@dataclass(frozen=True)
class _Token:
    text: str
    start: bool  # starts a sentence (or follows a colon)
    gap: bool  # punctuation separates it from the token before
    begin: int  # where it is in the text
    end: int


class RulesExtractor:
    name = VERSION
    cheap = True  # a write reads its own texts with it (services/extraction.py, at_write)

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [self.extract_one(text) for text in texts]

    def extract_one(self, text: str) -> list[Mention]:
        tokens = list(_tokens(text))
        capitalised_inside = {t.text for t in tokens if not t.start and _name_like(t.text)}
        names, used = _names(text, tokens, capitalised_inside)
        found = [m for n in names if (m := mention("Name", n))]
        found += _topics(tokens, used)
        return bounded(found)


def _tokens(text: str) -> Iterator[_Token]:
    start, gap, before = True, True, ""
    for found in _TOKEN.finditer(text):
        word = found.group()
        if word == "." and before.lower() in _TITLES:
            continue  # "St. Anne": the title's full stop ends no sentence
        before = word
        if len(word) == 1 and word in _SENTENCE_END | {",", ")"}:
            start = start or word in _SENTENCE_END
            gap = True
            continue
        yield _Token(word, start, gap, found.start(), found.end())
        start, gap = False, False


def _name_like(word: str) -> bool:
    lower = word.lower()
    if lower in {"i", "i'm", "i've", "i'll", "i'd"} or lower.rstrip("s") in _TIMES:
        return False
    first, rest = word[0], word[1:]
    return first.isupper() or any(c.isupper() for c in rest) or _IDENTIFIER.search(word) is not None


def _owner(word: str) -> bool:
    """A possessive ends a name: "NASA's Artemis II" is two."""
    return word.endswith(("'s", "\u2019s", "'", "\u2019"))


def _verb_like(word: str) -> bool:
    """A capitalised word that starts a sentence as a verb or adverb does ("Booked", "Thinking", "Honestly")."""
    lower = word.lower()
    return lower in COMMON or (len(lower) > 4 and lower.endswith(("ed", "ing", "ly")) and word[1:].islower())


def _names(text: str, tokens: list[_Token], inside: set[str]) -> tuple[list[str], set[int]]:
    """Capitalised spans, and the positions of the tokens they took."""
    spans: list[str] = []
    used: set[int] = set()
    i = 0
    while i < len(tokens):
        if not _name_like(tokens[i].text):
            i += 1
            continue
        j = i + 1
        while (
            j < len(tokens) and not tokens[j].gap and not tokens[j].start and not _owner(tokens[j - 1].text)
        ):
            if _name_like(tokens[j].text):
                j += 1
            elif (
                tokens[j].text.lower() in _CONNECTORS
                and j + 1 < len(tokens)
                and _name_like(tokens[j + 1].text)
                and not tokens[j + 1].gap
            ):
                j += 2
            else:
                break
        words = [t.text for t in tokens[i:j]]
        first = i
        if tokens[i].start and _verb_like(words[0]):
            words, first = words[1:], i + 1
        if words and (
            not tokens[first].start
            or len(words) > 1
            or _speaker(tokens, first)
            or _stands_out(words[0], inside)
        ):
            spans.append(text[tokens[first].begin : tokens[j - 1].end])
            used |= set(range(first, j))
        i = j
    return spans, used


def _speaker(tokens: list[_Token], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1].gap and tokens[i + 1].start and tokens[i].start


def _stands_out(word: str, inside: set[str]) -> bool:
    """A sentence's first word is a name when the text also capitalises it elsewhere, or it is not a
    common or verb-like word, or it looks like an identifier."""
    return word in inside or not _verb_like(word) or _IDENTIFIER.search(word) is not None


def _topics(tokens: list[_Token], used: set[int]) -> list[Mention]:
    runs: list[list[str]] = []
    run: list[str] = []
    for n, t in enumerate(tokens):
        word = t.text.lower()
        content = n not in used and word not in COMMON and _contentful(word)
        if run and (t.gap or not content):
            runs.append(run)
            run = []
        if content:
            run.append(word)
    if run:
        runs.append(run)
    phrases = [" ".join(r[-3:]) for r in runs if len(r) >= 2]
    phrases += [r[0] for r in runs if len(r) == 1 and len(r[0]) >= 4]
    found = [m for p in phrases if (m := mention(TOPIC, p))]
    return found[: MAX_TOPICS * 2]


def _contentful(word: str) -> bool:
    if not word.isalpha() or len(word) < 3:
        return False
    return not word.endswith(("ly", "ing", "ed")) or len(word) <= 4
