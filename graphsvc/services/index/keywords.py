"""A query's keywords and the terms the index holds for them; a graph's key in the index. Recall's
Lucene query is built from these keywords (services/recall/query.py), so it can never be Lucene syntax.

Only word characters survive, lower-cased (so AND/OR/NOT are plain words) and de-duplicated. Words
that only shape a question (what, did, her, about...) are dropped because they match almost every
memory; words about time (when, before, after, during...) are kept because memories answer them. A
query made of nothing else keeps its words, so "who was it?" still searches.
"""

from __future__ import annotations

import hashlib
import re

from graphsvc.services.index.term_stats import analyze

MAX_QUERY_TERMS = 64
_TERM = re.compile(r"\w+", re.UNICODE)

_QUESTION_WORDS = """
    a about above again against all also am an and any are as at be because been being below
    between both but by can could did do does doing down each ever few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just
    me might more most must my myself no nor not of off on only or other ought our ours
    ourselves out over own same shall she should so some such than that the their theirs them
    themselves there these they this those through to too under up very was we were what where
    which who whom whose why will with would you your yours yourself yourselves
"""
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())


def words(text: str) -> list[str]:
    """Lower-cased words of `text`, in order, without repeats."""
    return list(dict.fromkeys(t.lower() for t in _TERM.findall(text)))


def keywords(text: str) -> list[str]:
    terms = words(text)
    kept = [t for t in terms if t not in QUESTION_WORDS]
    return (kept or terms)[:MAX_QUERY_TERMS]


def query_terms(text: str) -> list[str]:
    """The terms the index holds for a query's keywords (term_stats.analyze): none for a query of stop
    words only, which neither leg of recall can search."""
    return [term for word in keywords(text) for term in analyze(word)]


def graph_key(graph: str) -> str:
    """One token that no analyzer splits and no other graph shares: a memory's `graphKey`, the
    exact tenant filter inside Lucene (the graph name itself would be split at - and .)."""
    return "g" + hashlib.sha256(graph.encode()).hexdigest()[:32]
