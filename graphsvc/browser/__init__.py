"""Neo4j Browser, explained: graphsvc serves a graph style and an operator's guide, and names the
two Neo4j settings that make Browser load both on connect.

Browser 5.24 runs `browser.post_connect_cmd` (commands split on `;`, each run as `:<command>`) once
connected, and fetches a remote style (`:style <url>`) or guide (`:play <url>`) only from a host in
`browser.remote_content_hostname_whitelist` (matched by hostname, without the port). It fetches them
from the page, cross-origin, so graphsvc answers them with CORS headers; the guide's request carries
`cache-control` and `pragma` headers and so is preflighted.

The routes live in a mounted sub-application: they are not part of the REST API or its OpenAPI.
"""

from __future__ import annotations

from importlib.resources import files
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

PREFIX = "/browser"
GUIDE = "guide.html"
STYLE = "style.grass"
# Neo4j's own default allow-list, which the setting replaces rather than extends.
DEFAULT_ALLOWED = ("guides.neo4j.com", "localhost")


def neo4j_settings(base_url: str) -> dict[str, str]:
    """The neo4j.conf settings that open Browser with graphsvc's style and guide, for graphsvc
    reachable from the operator's web browser at `base_url` (e.g. `http://127.0.0.1:8080`)."""
    host = urlsplit(base_url).hostname or "localhost"
    allowed = dict.fromkeys((*DEFAULT_ALLOWED, host))
    return {
        "browser.post_connect_cmd": f"style {base_url}{PREFIX}/{STYLE}; play {base_url}{PREFIX}/{GUIDE}",
        "browser.remote_content_hostname_whitelist": ",".join(allowed),
    }


def _asset(name: str, media_type: str) -> Route:
    body = (files(__name__) / name).read_text(encoding="utf-8")

    async def serve(_: Request) -> Response:
        return Response(body, media_type=media_type)

    return Route(f"/{name}", serve, methods=["GET"])


def browser_app() -> ASGIApp:
    """The style and the guide, to mount at PREFIX; any page may fetch them (they hold no data)."""
    app = Starlette(routes=[_asset(GUIDE, "text/html"), _asset(STYLE, "text/plain")])
    return CORSMiddleware(
        app, allow_origins=["*"], allow_methods=["GET"], allow_headers=["cache-control", "pragma"]
    )
