"""The anchor contract on a real local chain, and the committed artifact against a fresh compile."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from eth_account import Account
from web3 import exceptions as w3err

from graphsvc.chain.anchor import AnchorContract
from graphsvc.devstack.chain import CONTRACTS, DEV_PRIVATE_KEY
from graphsvc.domain.merkle import MEMORY_LEAF_TYPES, MerkleTree, leaf_hash
from graphsvc.errors import Conflict
from graphsvc.services.anchoring.links import ZERO_ROOT, new_tag
from tests.conftest import ChainTarget

OTHER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"  # anvil account #1


@pytest.mark.processes
def test_committed_artifact_matches_a_fresh_compile() -> None:
    done = subprocess.run(["node", "compile.mjs", "--check"], cwd=CONTRACTS, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture
async def contract(chain_target: ChainTarget):
    # a fresh contract per test, so roots never collide between tests
    deployer = AnchorContract(chain_target.rpc_url, None, DEV_PRIVATE_KEY)
    address = await deployer.deploy()
    await deployer.close()
    chain = AnchorContract(chain_target.rpc_url, address, DEV_PRIVATE_KEY)
    yield chain
    await chain.close()


def _batch(count: int) -> tuple[MerkleTree, list[tuple[str, str, bytes]]]:
    members = [(f"mem_{i:05d}", "0x" + (i.to_bytes(4, "big") * 8).hex()) for i in range(count)]
    leaves = [leaf_hash(MEMORY_LEAF_TYPES, [m, bytes.fromhex(h[2:])]) for m, h in members]
    return MerkleTree.build(leaves), [(m, h, leaf) for (m, h), leaf in zip(members, leaves, strict=True)]


def _fresh(**link: str) -> dict[str, str]:
    """A link as sign_anchor takes it: the given one, else a new graph's first root."""
    return {"graph_tag": link.get("graph_tag") or new_tag(), "prev_root": link.get("prev_root", ZERO_ROOT)}


async def _anchor(chain: AnchorContract, root: str, count: int, seq: int = 1, **link: str) -> int:
    """Anchor `root` (by default as the first root of a new graph); returns the block that includes it."""
    signed = await chain.sign_anchor(root, seq, count, await chain.pending_nonce(), **_fresh(**link))
    await chain.broadcast(signed.raw)
    for _ in range(100):  # mined at once or with the next block (0.2 s)
        inclusion = await chain.inclusion(signed.tx_hash, root)
        if inclusion is not None:
            break
        await asyncio.sleep(0.05)
    assert inclusion is not None and inclusion.success and inclusion.logged_root
    return inclusion.block_number


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 1000])
async def test_contract_verifies_exactly_the_proofs_of_the_python_tree(
    contract: AnchorContract, count: int
) -> None:
    tree, members = _batch(count)
    root = "0x" + tree.root.hex()
    included = await _anchor(contract, root, count)
    sample = members if count <= 8 else members[:: count // 25]
    for memory_id, memory_hash, leaf in sample:
        proof = ["0x" + p.hex() for p in tree.proof(leaf)]
        fn = contract._contract.functions.verifyMemory(
            tree.root, memory_id, bytes.fromhex(memory_hash[2:]), [bytes.fromhex(p[2:]) for p in proof]
        )
        assert await fn.call(block_identifier=included - 1) is False  # not anchored yet at that block
        assert await fn.call(block_identifier="latest") is True
        tampered = "0x" + ("%064x" % (int(memory_hash, 16) ^ 1))
        bad = contract._contract.functions.verifyMemory(
            tree.root, memory_id, bytes.fromhex(tampered[2:]), [bytes.fromhex(p[2:]) for p in proof]
        )
        assert await bad.call(block_identifier="latest") is False


async def test_a_root_is_anchored_once_and_the_record_is_stored(contract: AnchorContract) -> None:
    tree, _ = _batch(3)
    root = "0x" + tree.root.hex()
    await _anchor(contract, root, 3, seq=7)
    record = await contract.anchor_of(root, "latest")
    assert record is not None and (record.leaf_count, record.batch_seq) == (3, 7)
    with pytest.raises(Conflict, match="AlreadyAnchored"):
        await contract.sign_anchor(root, 8, 3, await contract.pending_nonce(), **_fresh())


@pytest.mark.parametrize(
    ("root", "count", "error"), [("0x" + "00" * 32, 1, "ZeroRoot"), ("0x" + "11" * 32, 0, "EmptyBatch")]
)
async def test_zero_roots_and_empty_batches_are_refused(
    contract: AnchorContract, root: str, count: int, error: str
) -> None:
    with pytest.raises(Conflict, match=error):
        await contract.sign_anchor(root, 1, count, await contract.pending_nonce(), **_fresh())


async def test_only_allow_listed_callers_may_anchor(
    contract: AnchorContract, chain_target: ChainTarget
) -> None:
    stranger = AnchorContract(chain_target.rpc_url, contract.address, OTHER_KEY)
    try:
        with pytest.raises(Conflict, match="NotSubmitter"):
            await stranger.sign_anchor("0x" + "22" * 32, 1, 1, await stranger.pending_nonce(), **_fresh())
        allow = contract._contract.functions.setSubmitter(Account.from_key(OTHER_KEY).address, True)
        signed = await contract._sign(await allow.build_transaction({"from": contract.signer.address}))
        await contract.broadcast(signed.raw)
        # Mined at once, yet not always before the node answers: the stranger's call would race it.
        await contract.w3.eth.wait_for_transaction_receipt(signed.tx_hash, timeout=30)
        await _anchor(stranger, "0x" + "22" * 32, 1)
    finally:
        await stranger.close()


async def test_a_missing_contract_is_a_configuration_error(chain_target: ChainTarget) -> None:
    from graphsvc.errors import NotConfigured

    nowhere = AnchorContract(chain_target.rpc_url, "0x" + "12" * 20, DEV_PRIVATE_KEY)
    try:
        with pytest.raises(NotConfigured):
            await nowhere.check()
    finally:
        await nowhere.close()
    wrong_chain = AnchorContract(chain_target.rpc_url, chain_target.contract, DEV_PRIVATE_KEY, chain_id=10143)
    try:
        with pytest.raises(NotConfigured):
            await wrong_chain.check()
    finally:
        await wrong_chain.close()


async def test_a_graphs_roots_form_one_list_on_chain_that_only_grows(contract: AnchorContract) -> None:
    tag = new_tag()
    roots = ["0x" + bytes([i]).hex() * 32 for i in (0x31, 0x32, 0x33)]
    prev = ZERO_ROOT
    for seq, root in enumerate(roots, 1):
        await _anchor(contract, root, 2, seq, graph_tag=tag, prev_root=prev)
        prev = root
    assert await contract.last_root_of(tag, "latest") == roots[-1]
    walked, at = [], roots[-1]
    while at != ZERO_ROOT:
        link = await contract.link_of(at, "latest")
        assert link.graph_tag == tag and link.anchor.leaf_count == 2
        walked.append((link.position, at))
        at = link.prev_root
    assert walked == [(3, roots[2]), (2, roots[1]), (1, roots[0])]
    # a fork (a prevRoot that is not the last root) and a repeat of the first root are refused
    for stale in (roots[0], ZERO_ROOT):
        with pytest.raises(Conflict, match="StaleLink"):
            await contract.sign_anchor(
                "0x" + "44" * 32, 4, 1, await contract.pending_nonce(), graph_tag=tag, prev_root=stale
            )
    with pytest.raises(Conflict, match="ZeroTag"):
        await contract.sign_anchor(
            "0x" + "45" * 32, 4, 1, await contract.pending_nonce(), graph_tag=ZERO_ROOT, prev_root=ZERO_ROOT
        )
    unknown = await contract.link_of("0x" + "46" * 32, "latest")
    assert (unknown.position, unknown.prev_root, unknown.anchor.anchored_at) == (0, ZERO_ROOT, 0)


def test_web3_errors_module_is_what_the_adapter_expects() -> None:
    assert issubclass(w3err.ContractCustomError, w3err.Web3Exception)


async def test_an_unreachable_rpc_is_a_typed_error_after_bounded_retries(chain_target: ChainTarget) -> None:
    from graphsvc.errors import ChainUnavailable
    from tests.conftest import free_port

    gone = AnchorContract(f"http://127.0.0.1:{free_port()}", chain_target.contract, DEV_PRIVATE_KEY)
    try:
        with pytest.raises(ChainUnavailable):
            await gone.pending_nonce()
    finally:
        await gone.close()
