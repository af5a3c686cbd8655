"""Recall's pipeline: RecallService (service.py) gathers the candidates and walks from them
(services/graph_walk.py); ranking.py holds the terms of the score and fusion.py how they weigh;
timing.py reads the times a memory is stored with and the window a query names; query.py makes the
Lucene query and bm25.py rescores its hits on each graph's own statistics; bridges.py is the second
pass. What the write side stores for recall is below it, in services/index/. Only the service that
serves recall (services/memory.py) imports this package."""
