"""A typed Python client for graphsvc's REST API, on httpx:

    from graphsvc.client import Client
    from graphsvc.domain.models import RememberInput

    with Client("http://127.0.0.1:8000", token="gsk_...") as memory:
        memory.remember(RememberInput(text="Alice prefers tea", tags=["prefs"]))
        for hit in memory.recall("what does Alice drink?").memories: ...

`AsyncClient` has the same methods as coroutines. Inputs and results are the contract's own models
(graphsvc.domain.models, graphsvc.domain.locus), the ones the server validates with; errors are the
server's error tree, one class per code (graphsvc.client.errors). Calls that may pass are sent again
(no connection, no answer in time, 503): remember too, since the server answers the same content
within 5 minutes with the memory it already stored.
"""

from graphsvc.client import errors
from graphsvc.client.aio import AsyncClient
from graphsvc.client.sync import Client

__all__ = ["AsyncClient", "Client", "errors"]
