"""Recall's pipeline: RecallService (service.py) gathers the candidates and walks from them;
ranking.py holds the terms of the score and fusion.py how they weigh; timing.py reads the times a
memory is stored with and the window a query names; graph_walk.py is the walk; keywords.py,
term_stats.py and term_fold.py score keywords on each graph's own statistics."""
