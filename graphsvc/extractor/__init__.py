"""Extractors: named entities and key phrases read from a memory's text, without an LLM.

`rules.RulesExtractor` needs nothing but Python. Each extractor has a `name` (`<name>/<version>`,
stored on every edge it makes and on each memory it read as `extractedWith`: a new version extracts
every memory again) and `extract(texts)`, one list of mentions per text, already `bounded`
(graphsvc/domain/extraction.py). services/extraction.py runs them in the background worker.
"""
