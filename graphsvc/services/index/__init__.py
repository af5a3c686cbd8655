"""What the write side stores for recall, below both: a memory's window (windows.py) and stored times
(times.py), each graph's term statistics and their folds (term_stats.py, term_fold.py), a graph's key
and a query's terms (keywords.py), the cosines read back from the embeddings (cosines.py)."""
