"""graphsvc: a memory service for AI agents.

py_ecc (a dependency of web3's) raises the interpreter's recursion limit to 100,000 when it is
imported. The C JSON parser recurses once per nesting level under that limit, so a line or request
body of 100,000 `[` overflowed the C stack: a segmentation fault, not a RecursionError (one request
could end the server; one line of an export ended `graphsvc audit` with no verdict). It is imported
here, before anything else of graphsvc, and the limit put back: nothing graphsvc calls recurses deeper
than the default allows (py_ecc's deepest, a scalar multiplication, about 256 frames).
"""

import contextlib as _contextlib
import sys as _sys

_LIMIT = _sys.getrecursionlimit()
with _contextlib.suppress(ImportError):  # web3 without it: nothing raises the limit
    import py_ecc as _py_ecc  # noqa: F401  # pyright: ignore[reportUnusedImport]
_sys.setrecursionlimit(_LIMIT)
