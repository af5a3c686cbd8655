"""The anchor contract on an EVM chain (Monad, or anvil locally): the only module that imports web3.

Every RPC call is retried (tenacity, exponential backoff with jitter) on transient failures only:
connection errors, timeouts, 429 and 5xx, for at most the deadline. Reverts, bad keys and wrong
chains are never retried. web3's own provider retry is off so the two do not stack. Every other
failure leaves this module as a GraphsvcError whose message shows the RPC as `public_url` only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Awaitable, Callable
from importlib.resources import files
from typing import Any, TypeVar, cast

import aiohttp
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from eth_utils.crypto import keccak
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_random_exponential,
)
from web3 import AsyncHTTPProvider, AsyncWeb3
from web3 import exceptions as w3err
from web3.logs import DISCARD
from web3.types import TxParams

from graphsvc.domain.anchor import ChainLink, Inclusion, OnChainAnchor, SignedAnchor
from graphsvc.errors import ChainUnavailable, Conflict, NotConfigured, public_url

T = TypeVar("T")
# web3's DEBUG and INFO lines print the whole RPC URL, where providers put API keys: never emit them.
logging.getLogger("web3").setLevel(logging.WARNING)
ARTIFACT = files("graphsvc.contracts") / "GraphsvcAnchor.json"  # package data: contracts/
GAS_MARGIN = 1.10  # Monad charges the gas limit, not gas used
RPC_ATTEMPTS = 4
TIMEOUT_S = 10
# Errors the methods below handle themselves (a revert, no code yet, a transaction not yet known).
HANDLED = (w3err.ContractLogicError, w3err.BadFunctionCallOutput, w3err.TransactionNotFound)


def load_artifact() -> dict[str, Any]:
    return json.loads(ARTIFACT.read_text(encoding="utf-8"))


def _transient(error: BaseException) -> bool:
    if isinstance(error, aiohttp.ClientResponseError):
        return error.status == 429 or error.status >= 500
    if isinstance(error, (aiohttp.ClientConnectionError, asyncio.TimeoutError, ConnectionError)):
        return True
    return isinstance(error, (w3err.TooManyRequests, w3err.RequestTimedOut, w3err.ProviderConnectionError))


def _rpc_reason(error: Exception) -> str:
    """What the node said (its JSON-RPC error message), or the error's type: never a URL."""
    response: object = getattr(error, "rpc_response", None)
    detail = cast(dict[str, object], response).get("error") if isinstance(response, dict) else None
    if isinstance(detail, dict):
        return str(cast(dict[str, object], detail).get("message", ""))[:200] or type(error).__name__
    return type(error).__name__


class AnchorContract:
    """Signs, sends and reads anchor transactions for one contract and one signer."""

    def __init__(
        self,
        rpc_url: str,
        address: str | None,
        private_key: str | None,
        chain_id: int | None = None,
        *,
        deadline_s: float = 10,
    ):
        provider = AsyncHTTPProvider(
            rpc_url,
            exception_retry_configuration=None,
            request_kwargs={"timeout": aiohttp.ClientTimeout(min(TIMEOUT_S, deadline_s))},
        )
        self.w3 = AsyncWeb3(provider)
        self.shown = public_url(rpc_url)
        self._deadline_s = deadline_s
        self.expected_chain_id = chain_id
        self._abi = load_artifact()["abi"]
        self._errors = {
            "0x" + keccak(text=f"{e['name']}({','.join(i['type'] for i in e['inputs'])})")[:4].hex(): e[
                "name"
            ]
            for e in self._abi
            if e["type"] == "error"
        }
        self.address = AsyncWeb3.to_checksum_address(address) if address else None
        self.account: LocalAccount | None = Account.from_key(private_key) if private_key else None

    @property
    def _contract(self) -> Any:
        if self.address is None:
            raise NotConfigured("no anchor contract address is configured (ANCHOR_CONTRACT)")
        return self.w3.eth.contract(address=self.address, abi=self._abi)

    @property
    def signer(self) -> LocalAccount:
        if self.account is None:
            raise NotConfigured("no signer key is configured (GRAPHSVC_CHAIN_PRIVATE_KEY)")
        return self.account

    async def _rpc(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call`, retried on transient failures within the deadline.

        Raises:
            ChainUnavailable: unreachable, or the RPC answered an error.
            NotConfigured: the signer cannot pay for gas.
        """
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_transient),
                stop=stop_after_attempt(RPC_ATTEMPTS) | stop_after_delay(self._deadline_s),
                wait=wait_random_exponential(multiplier=0.2, max=3),
                reraise=True,
            ):
                with attempt:
                    return await call()
        except HANDLED:
            raise
        except Exception as e:
            if _transient(e):
                raise ChainUnavailable(f"the chain RPC at {self.shown} cannot be reached") from e
            reason = _rpc_reason(e)
            if "insufficient funds" in reason.lower():
                raise NotConfigured(f"the signer cannot pay for gas on {self.shown}: fund its account") from e
            raise ChainUnavailable(f"the chain RPC at {self.shown} answered an error: {reason}") from e
        raise AssertionError("unreachable")

    async def chain_id(self) -> int:
        return await self._rpc(lambda: self.w3.eth.chain_id)

    async def check(self) -> int:
        """The chain id matches (if one is expected) and the contract has code; returns the chain id.

        Raises:
            NotConfigured: wrong chain, or no contract code at the address (e.g. after a testnet reset).
            ChainUnavailable: the RPC cannot be reached.
        """
        chain_id = await self.chain_id()
        if self.expected_chain_id is not None and chain_id != self.expected_chain_id:
            raise NotConfigured(
                f"the RPC serves chain {chain_id}, but chain {self.expected_chain_id} is configured: set "
                "GRAPHSVC_CHAIN_NETWORK to the RPC's network (monad-testnet 10143, monad-mainnet 143, local 31337)"
            )
        code = await self._rpc(lambda: self.w3.eth.get_code(self._contract.address))
        if not code:
            raise NotConfigured(f"no contract code at {self.address} on chain {chain_id}")
        return chain_id

    async def deploy(self) -> str:
        """Deploy the anchor contract from the committed artifact; returns its address."""
        artifact = load_artifact()
        factory = self.w3.eth.contract(abi=artifact["abi"], bytecode=artifact["bytecode"])
        signed = await self._sign(
            await factory.constructor().build_transaction({"from": self.signer.address})
        )
        await self.broadcast(signed.raw)
        receipt = await self._rpc(
            lambda: self.w3.eth.wait_for_transaction_receipt(HexStr(signed.tx_hash), timeout=60)
        )
        return str(receipt["contractAddress"])

    async def _sign(self, tx: dict[str, Any], nonce: int | None = None) -> SignedAnchor:
        account = self.signer
        if nonce is None:
            nonce = await self.pending_nonce()
        fee_keys = ("gas", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas")
        tx = {k: v for k, v in tx.items() if k not in fee_keys}
        estimate = await self._rpc(
            lambda: self.w3.eth.estimate_gas(cast(TxParams, {**tx, "from": account.address}))
        )
        priority = await self._rpc(lambda: self.w3.eth.max_priority_fee)
        block = await self._rpc(lambda: self.w3.eth.get_block("latest"))
        base_fee = int(block.get("baseFeePerGas") or 0)
        tx = {
            **tx,
            "from": account.address,
            "type": 2,
            "chainId": await self.chain_id(),
            "nonce": nonce,
            "gas": math.ceil(estimate * GAS_MARGIN),
            "maxPriorityFeePerGas": priority,
            "maxFeePerGas": 2 * base_fee + priority,
        }
        signed = account.sign_transaction(tx)
        return SignedAnchor(nonce, "0x" + signed.raw_transaction.hex(), "0x" + signed.hash.hex())

    async def pending_nonce(self) -> int:
        return await self._rpc(lambda: self.w3.eth.get_transaction_count(self.signer.address, "pending"))

    async def mined_nonce(self) -> int:
        return await self._rpc(lambda: self.w3.eth.get_transaction_count(self.signer.address, "latest"))

    async def sign_anchor(
        self, root: str, batch_seq: int, leaf_count: int, nonce: int, *, graph_tag: str, prev_root: str
    ) -> SignedAnchor:
        """Sign (not send) anchor(root, batchSeq, leafCount, graphTag, prevRoot).

        Raises:
            Conflict: the contract refuses the call (root already anchored, not allow-listed, a
                prevRoot that is not the tag's last root, ...).
        """
        call = self._contract.functions.anchor(
            bytes.fromhex(root[2:]),
            batch_seq,
            leaf_count,
            bytes.fromhex(graph_tag[2:]),
            bytes.fromhex(prev_root[2:]),
        )
        try:
            tx = await call.build_transaction({"from": self.signer.address, "nonce": nonce, "gas": 1})
            return await self._sign(tx, nonce)
        except (w3err.ContractLogicError, w3err.ContractCustomError) as e:
            data = str(e.data or "")
            reason = self._errors.get(data[:10], data[:10] or str(e))
            raise Conflict(f"the anchor contract refuses this batch: {reason}") from e

    async def broadcast(self, raw: str) -> None:
        """Send a signed transaction; sending one the node already has is harmless."""

        async def send() -> None:
            try:
                await self.w3.eth.send_raw_transaction(HexStr(raw))
            except w3err.Web3RPCError as e:
                message = f"{_rpc_reason(e)} {e}".lower()
                if not any(s in message for s in ("already known", "nonce too low", "already imported")):
                    raise

        await self._rpc(send)

    async def inclusion(self, tx_hash: str, root: str) -> Inclusion | None:
        try:
            receipt = await self._rpc(lambda: self.w3.eth.get_transaction_receipt(tx_hash))  # type: ignore[arg-type]
        except w3err.TransactionNotFound:
            return None
        events = self._contract.events.RootAnchored().process_receipt(receipt, errors=DISCARD)
        logged = any("0x" + e["args"]["root"].hex() == root for e in events)
        return Inclusion(int(receipt["blockNumber"]), receipt["status"] == 1, logged)

    async def anchor_of(self, root: str, block: str | int = "finalized") -> OnChainAnchor | None:
        fn = self._contract.functions.anchorOf(bytes.fromhex(root[2:]))
        try:
            record = await self._rpc(lambda: fn.call(block_identifier=block))
        except w3err.BadFunctionCallOutput:  # no contract code yet at that block
            return None
        anchored_at, block_number, leaf_count, batch_seq = record
        if anchored_at == 0:
            return None
        return OnChainAnchor(anchored_at, block_number, leaf_count, batch_seq)

    async def link_of(self, root: str, block: str | int = "finalized") -> ChainLink:
        """The root's graph tag, previous root, position and anchor record (zeros: not anchored)."""
        fn = self._contract.functions.linkOf(bytes.fromhex(root[2:]))
        tag, prev, position, record = await self._rpc(lambda: fn.call(block_identifier=block))
        return ChainLink("0x" + tag.hex(), "0x" + prev.hex(), position, OnChainAnchor(*record))

    async def last_root_of(self, graph_tag: str, block: str | int = "finalized") -> str:
        fn = self._contract.functions.lastRootOf(bytes.fromhex(graph_tag[2:]))
        return "0x" + (await self._rpc(lambda: fn.call(block_identifier=block))).hex()

    def _verify_call(self, root: str, memory_id: str, memory_hash: str, proof: list[str]) -> Any:
        return self._contract.functions.verifyMemory(
            bytes.fromhex(root[2:]),
            memory_id,
            bytes.fromhex(memory_hash[2:]),
            [bytes.fromhex(p[2:]) for p in proof],
        )

    async def verify_memory(self, root: str, memory_id: str, memory_hash: str, proof: list[str]) -> bool:
        fn = self._verify_call(root, memory_id, memory_hash, proof)
        try:
            return bool(await self._rpc(lambda: fn.call(block_identifier="finalized")))
        except w3err.BadFunctionCallOutput:
            return False

    async def close(self) -> None:
        await self.w3.provider.disconnect()
