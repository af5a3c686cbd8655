"""The standalone verifier: checks a proof bundle with nothing but the bundle and an RPC URL.

No Neo4j, no graphsvc settings, no server: it recomputes the hash from the envelope, folds the Merkle
proof, and asks the chain itself (plain JSON-RPC) whether the root is anchored at the `finalized`
block and whether the anchoring transaction emitted the event. `graphsvc verify-bundle` prints its
checklist; the page at /verify (graphsvc/web/verify.html) runs the same checks in a browser.

The checks, in order, are graphsvc.domain.checklist's, which verify_memory runs too: this module reads
the chain over JSON-RPC and words each finding as a line of the checklist. The contract is the one the
caller pins, else the bundle's. The first check that fails stops the run: every later one is not
checked (`·`). A forgotten memory's hash cannot be checked (its envelope is gone): that check shows `·`
and the others run. An RPC that cannot answer stops the run too, and the verdict is "could not check",
never "changed". Every string that came from the bundle or the RPC is shown inert (see `inert`).

Exit codes of `graphsvc verify-bundle` (EXIT_*): 0 verified, 1 a check failed (the bundle or its anchor
lies), 2 the bundle or the arguments cannot be read, 3 could not check (the RPC did not answer).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, cast

from eth_abi.abi import decode, encode
from eth_utils.crypto import keccak
from pydantic import ValidationError

from graphsvc.domain.anchor import Inclusion, OnChainAnchor
from graphsvc.domain.checklist import (
    Key,
    check_chain,
    check_contract,
    check_event,
    check_hash,
    check_proof,
    check_root,
    in_order,
)
from graphsvc.domain.proof import ProofBundle
from graphsvc.domain.render import plural
from graphsvc.errors import public_url

MAX_BUNDLE_BYTES = 1_000_000
EXIT_VERIFIED, EXIT_FAILED, EXIT_UNREADABLE, EXIT_UNCHECKED = 0, 1, 2, 3
RPC_TIMEOUT_S = 10.0
ANCHOR_OF = keccak(text="anchorOf(bytes32)")[:4]
ROOT_ANCHORED = "0x" + keccak(text="RootAnchored(bytes32,uint64,address,uint32,uint64)").hex()


class BundleError(ValueError):
    """The bundle cannot be read: too large, not JSON, or not a graphsvc.proof/v2 bundle."""


class RpcError(RuntimeError):
    """The RPC could not answer (unreachable, timed out, or an error reply): the check could not be made."""


class NotAnAnchor(RpcError):
    """The contract answered anchorOf, but not as an anchor contract does: a failed check, not an outage."""


class Reverted(NotAnAnchor):
    """The contract reverted the call."""


def inert(text: str) -> str:
    """`text` safe to show on a terminal or a page: every character that is not printable (control
    characters and ANSI escapes, newlines, bidi overrides and other format characters, separators
    other than the space, unassigned code points) as a `\\x..`, `\\u....` or `\\U........` escape."""
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


@dataclass(frozen=True)
class Check:
    key: str
    ok: bool | None  # None: not checked (an earlier check failed, the RPC did not answer, or forgotten)
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", inert(self.text))


@dataclass(frozen=True)
class Report:
    bundle: ProofBundle
    checks: list[Check]
    pinned: bool

    unchecked: str = ""  # why the run stopped before a verdict (the RPC did not answer), inert

    @property
    def verified(self) -> bool:
        """Every check passed (a forgotten memory's hash, which cannot be checked, excepted)."""
        return not self.unchecked and all(c.ok or (c.key == "hash" and self.forgotten) for c in self.checks)

    @property
    def forgotten(self) -> bool:
        return self.bundle.envelope is None

    @property
    def exit_code(self) -> int:
        if self.verified:
            return EXIT_VERIFIED
        return EXIT_UNCHECKED if self.unchecked else EXIT_FAILED


def read_bundle(source: BinaryIO) -> ProofBundle:
    """Read at most MAX_BUNDLE_BYTES + 1 bytes of `source` and load them; a larger file is refused with
    its real size, a larger pipe as "over" the limit (its size is not known).

    Raises:
        BundleError: as load_bundle.
        OSError: `source` cannot be read.
    """
    data = source.read(MAX_BUNDLE_BYTES + 1)
    if len(data) > MAX_BUNDLE_BYTES and not source.seekable():
        raise BundleError(too_large(None))
    return load_bundle(data, os.fstat(source.fileno()).st_size if source.seekable() else None)


def too_large(size: int | None) -> str:
    """The refusal of a bundle over MAX_BUNDLE_BYTES: its real `size`, or "over" when it is unknown."""
    said = f"{size:,} bytes" if size is not None else f"over {MAX_BUNDLE_BYTES:,} bytes"
    return f"{said}: a proof bundle is at most {MAX_BUNDLE_BYTES:,} bytes"


def load_bundle(data: bytes, size: int | None = None) -> ProofBundle:
    """Parse and validate a bundle; `size` is its full size where `data` is only its start (a bounded
    read of a file; `read_bundle` passes it).

    Raises:
        BundleError: with one line saying what is wrong.
    """
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(too_large(max(size or 0, len(data))))
    try:
        parsed = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise BundleError("not UTF-8 text") from e
    except json.JSONDecodeError as e:
        raise BundleError(f"not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from e
    except RecursionError as e:
        raise BundleError("not a proof bundle (nested too deeply)") from e
    if not isinstance(parsed, dict):
        raise BundleError("not a proof bundle (expected a JSON object)")
    schema = cast(dict[str, object], parsed).get("schema")
    if schema != "graphsvc.proof/v2":
        named = (
            f"schema is {inert(repr(schema))}"
            if isinstance(schema, str) and len(schema) <= 64
            else "no schema"
        )
        raise BundleError(f"{named}; this verifier reads 'graphsvc.proof/v2' bundles")
    try:
        return ProofBundle.model_validate(parsed)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "bundle"
        raise BundleError(inert(f"{where}: {first['msg']}")) from e


class Rpc:
    """JSON-RPC over HTTP with the standard library."""

    def __init__(self, url: str, timeout: float = RPC_TIMEOUT_S):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RpcError(f"the RPC URL must be http(s)://host[:port][/path], not {url!r}")
        self.url, self.timeout = url, timeout
        self.shown = public_url(url)

    def __call__(self, method: str, *params: object) -> object:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
        request = urllib.request.Request(self.url, body, {"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read(MAX_BUNDLE_BYTES))
        except urllib.error.HTTPError as e:
            raise RpcError(f"the RPC at {self.shown} answered HTTP {e.code}") from e
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise RpcError(f"cannot reach the RPC at {self.shown}: {reason}") from e
        except ValueError as e:
            raise RpcError(f"the RPC at {self.shown} did not answer JSON-RPC") from e
        answer = _object(reply, f"the RPC at {self.shown} did not answer JSON-RPC")
        if "error" in answer or "result" not in answer:
            error = answer.get("error")
            error = cast(dict[str, object], error) if isinstance(error, dict) else {}
            message = str(error.get("message") or "no result")[:200]
            if method == "eth_call" and (error.get("code") == 3 or "revert" in message.lower()):
                raise Reverted(f"reverted anchorOf(root) ({message})")
            raise RpcError(f"the RPC at {self.shown} refused {method}: {message}")
        return answer["result"]


RpcCall = Callable[..., object]


def _object(value: object, problem: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise RpcError(problem)
    return cast(dict[str, object], value)


def _quantity(value: object, what: str) -> int:
    """A JSON-RPC quantity (0x-hex), or RpcError: a broken or hostile RPC is a failed check."""
    if isinstance(value, str) and value.startswith("0x"):
        try:
            return int(value, 16)
        except ValueError:
            pass
    raise RpcError(f"the RPC answered {what} that is not a quantity")


def _text(value: object) -> str:
    return value.lower() if isinstance(value, str) else ""


def verify_bundle(bundle: ProofBundle, rpc: RpcCall, contract: str | None = None) -> Report:
    """Run the checks in the checklist's order up to the first that fails (a forgotten memory's hash,
    not checkable, does not stop it); `contract` pins the address the caller trusts (else the bundle's
    is used). An RPC that cannot answer stops the run, unchecked."""
    on_chain = _OnChain(bundle, rpc, (contract or bundle.anchor.contract).lower(), contract is not None)
    steps: dict[Key, Callable[[], Check]] = {
        "hash": lambda: _hash_check(bundle),
        "proof": lambda: _proof_check(bundle),
        "chain": on_chain.chain,
        "contract": on_chain.contract,
        "root": on_chain.root,
        "event": on_chain.event,
    }
    checks: list[Check] = []
    unchecked = ""
    for key, step in in_order(steps):
        if unchecked or any(check.ok is False for check in checks):
            checks.append(Check(key, None, "not checked"))
            continue
        try:
            checks.append(step())
        except RpcError as e:  # the check that was asking could not be made; the rest are not run
            checks.append(Check(key, None, f"could not check: {e}"))
            unchecked = inert(str(e))
    return Report(bundle, checks, pinned=contract is not None, unchecked=unchecked)


def _hash_check(bundle: ProofBundle) -> Check:
    forgotten = bundle.forgotten.forgottenAt if bundle.forgotten else None
    found = check_hash(bundle.id, bundle.hash, bundle.envelope, forgotten)
    texts = {
        "ok": f"hash recomputed from the envelope (RFC 8785, keccak256): {bundle.hash}",
        "forgotten": f"not checkable: the memory was forgotten at {found.detail}: its content is gone, "
        "so its hash cannot be recomputed (its id, hash and proof remain)",
        "other_memory": f"the envelope is of memory {found.detail!r}, not {bundle.id!r}",
        "not_canonical": str(found.detail),
        "changed": f"the envelope hashes to {found.detail}, not {bundle.hash}: it was changed",
    }
    return Check("hash", None if found.why == "forgotten" else found.ok, texts[found.why])


def _proof_check(bundle: ProofBundle) -> Check:
    found = check_proof(bundle.id, bundle.hash, bundle.proof, bundle.root)
    leaf = cast(bytes, found.detail).hex()
    steps = plural(len(bundle.proof), "step", "steps")
    if found.ok:
        return Check("proof", True, f"Merkle proof folds leaf 0x{leaf} to the root ({steps})")
    return Check("proof", False, f"the Merkle proof ({steps}) does not fold leaf 0x{leaf} to the root")


@dataclass
class _OnChain:
    """The on-chain checks of one bundle, over one RPC, on the contract at `address` (`pinned`: the
    caller's, else the bundle's); each runs only once the checks before it passed."""

    bundle: ProofBundle
    rpc: RpcCall
    address: str
    pinned: bool
    served: int = 0  # the chain id the RPC serves, read by the chain check

    def chain(self) -> Check:
        anchor = self.bundle.anchor
        self.served = _quantity(self.rpc("eth_chainId"), "a chain id")
        if not check_chain(self.served, anchor).ok:
            message = f"the RPC serves chain {self.served}; the bundle was anchored on chain {anchor.chainId}"
            return Check("chain", False, message)
        return Check("chain", True, f"the RPC serves chain {self.served}, as the bundle says")

    def contract(self) -> Check:
        anchor, address, pinned = self.bundle.anchor, self.address, self.pinned
        if not check_contract(address, anchor, pinned=pinned, has_code=True).ok:
            return Check(
                "contract", False, f"the bundle names contract {anchor.contract}; you pinned {address}"
            )
        has_code = self.rpc("eth_getCode", address, "latest") not in ("0x", "0x0", None)
        if not check_contract(address, anchor, pinned=pinned, has_code=has_code).ok:
            return Check("contract", False, f"no contract code at {address} on chain {self.served}")
        source = "pinned by you" if pinned else "taken from the bundle"
        return Check("contract", True, f"contract {address} has code ({source})")

    def root(self) -> Check:
        return _root_check(self.bundle, self.rpc, self.address)

    def event(self) -> Check:
        return _event_check(self.bundle, self.rpc, self.address)


def _anchor_of(rpc: RpcCall, address: str, root: str, block: str) -> OnChainAnchor | None:
    data = "0x" + (ANCHOR_OF + encode(["bytes32"], [bytes.fromhex(root[2:])])).hex()
    result = rpc("eth_call", {"to": address, "data": data}, block)
    try:
        anchored_at, block_number, leaves, seq = decode(
            ["uint64", "uint64", "uint32", "uint64"], bytes.fromhex(str(result)[2:])
        )
    except Exception as e:  # eth_abi raises several types for short or malformed data
        raise NotAnAnchor(f"answered anchorOf(root) at the {block} block with no anchor") from e
    if int(anchored_at) == 0:
        return None
    return OnChainAnchor(int(anchored_at), int(block_number), int(leaves), int(seq))


def _root_check(bundle: ProofBundle, rpc: RpcCall, address: str) -> Check:
    anchor = bundle.anchor
    try:
        final = _anchor_of(rpc, address, bundle.root, "finalized")
        later = final is None and _anchor_of(rpc, address, bundle.root, "latest") is not None
    except NotAnAnchor as e:  # it reverted, or answered no data (no code there at that block)
        return Check("root", False, f"the contract at {address} {e}: not an anchor contract")
    found = check_root(final, anchor, anchored_later=later)
    if found.found is None:
        why = "anchored but not final yet: try again in a few seconds" if later else "not anchored"
        return Check("root", False, f"the root is {why} in contract {address} at the finalized block")
    seq, leaves, block = found.found.batch_seq, found.found.leaf_count, found.found.block_number
    if not found.ok:
        chain_says = f"batch {seq} of {_leaves(leaves)} in block {block}"
        bundle_says = f"batch {anchor.batchSeq} of {_leaves(anchor.leafCount)} in block {anchor.blockNumber}"
        return Check("root", False, f"on chain the root is {chain_says}; the bundle says {bundle_says}")
    return Check(
        "root", True, f"root anchored at the finalized block: batch {seq}, {_leaves(leaves)}, block {block}"
    )


def _leaves(n: int) -> str:
    """As the verify page's leafCount words it."""
    return plural(n, "leaf", "leaves")


def _event_check(bundle: ProofBundle, rpc: RpcCall, address: str) -> Check:
    tx = bundle.anchor.txHash
    found = check_event(inclusion(rpc, tx, address, bundle.root, bundle.anchor.blockNumber), bundle.anchor)
    texts = {
        "ok": f"transaction {tx} emitted RootAnchored for this root",
        "no_receipt": f"transaction {tx} is not on this chain",
        "failed_or_moved": f"transaction {tx} failed or is not in block {bundle.anchor.blockNumber}",
        "no_event": f"transaction {tx} emitted no RootAnchored for this root from {address}",
    }
    return Check("event", found.ok, texts[found.why])


def inclusion(rpc: RpcCall, tx: str, address: str, root: str, block_number: int) -> Inclusion | None:
    """The receipt of `tx` as the chain port reads it (None: not on this chain); its logs are read only
    for a transaction that succeeded in `block_number` (a hostile RPC's malformed logs do not matter
    otherwise): does it hold RootAnchored(`root`) from `address`?"""
    answer = rpc("eth_getTransactionReceipt", tx)
    if not answer:
        return None
    receipt = _object(answer, "the RPC answered a receipt that is not an object")
    success = _quantity(receipt.get("status"), "a status") == 1
    # a failed transaction fails the check whatever its block: its block is not read
    block = _quantity(receipt.get("blockNumber"), "a block number") if success else -1
    logged = success and block == block_number and _logged(receipt, address, root)
    return Inclusion(block, success, logged)


def _logged(receipt: dict[str, object], address: str, root: str) -> bool:
    logs = receipt.get("logs")
    for log in cast(list[object], logs) if isinstance(logs, list) else []:
        entry = _object(log, "the RPC answered a log that is not an object")
        topics = entry.get("topics")
        said = [_text(t) for t in cast(list[object], topics)] if isinstance(topics, list) else []
        if _text(entry.get("address")) == address and said[:2] == [ROOT_ANCHORED, root]:
            return True
    return False


def verdict(report: Report) -> str:
    """The first line: verified (or forgotten and its anchor verified), not verified, or could not check."""
    bundle, anchor = report.bundle, report.bundle.anchor
    memory, where = inert(bundle.id), f"(chain {anchor.chainId}, block {anchor.blockNumber})"
    if report.verified and report.forgotten:
        return f"✓ Verified: memory {memory} was anchored {where}, then forgotten: its content is gone."
    if report.verified:
        return f"✓ Verified: memory {memory} is unchanged since it was anchored {where}."
    if report.unchecked:
        return f"? Could not check: {report.unchecked}."
    return f"✗ Not verified: {next(c for c in report.checks if c.ok is False).text}."


def content(bundle: ProofBundle) -> list[tuple[str, str]]:
    """What the bundle says the memory is, as (label, value) lines: the envelope's fields (each value
    as JSON, inert), or the date it was forgotten. Verified only when the verdict says so."""
    if bundle.envelope is None:
        forgotten = bundle.forgotten.forgottenAt if bundle.forgotten else ""
        return [
            ("id", inert(json.dumps(bundle.id, ensure_ascii=False))),
            ("forgotten", inert(json.dumps(forgotten, ensure_ascii=False))),
        ]
    return [(key, inert(json.dumps(value, ensure_ascii=False))) for key, value in bundle.envelope.items()]


def render(report: Report) -> str:
    """The verdict, what the memory says, then the checklist: ✓ / ✗ / · (not checked)."""
    anchor = report.bundle.anchor
    said = (
        "the memory (as verified)" if report.verified else "the memory, as the bundle claims (not verified)"
    )
    lines = [verdict(report), f"  {said}:"]
    lines += [f"    {label:<10} {value}" for label, value in content(report.bundle)]
    marks = {True: "✓", False: "✗", None: "·"}
    lines += [f"  {marks[c.ok]} {c.key:<8} {c.text}" for c in report.checks]
    if not report.pinned:
        lines.append("  note: the contract address comes from the bundle only (--contract pins it)")
    if anchor.explorerUrl:
        lines.append(f"  tx: {inert(anchor.explorerUrl)}")
    return "\n".join(lines)
