"""Every Cypher statement of graphsvc, one per file (installed as the package graphsvc.cypher)."""
