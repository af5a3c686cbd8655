"""graphsvc inside agent frameworks, on graphsvc.client (each module needs its framework's extra)."""
