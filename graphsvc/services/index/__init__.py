"""What the write side stores for recall, below both: each graph's term statistics and their folds
(term_stats.py, term_fold.py), a graph's key and a query's terms (keywords.py)."""
