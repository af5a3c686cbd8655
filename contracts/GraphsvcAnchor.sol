// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title GraphsvcAnchor: a registry of Merkle roots of graphsvc memory batches.
/// @notice Roots are stored (not only logged) so anyone can check a memory with one eth_call to
///         verifyMemory, however old the anchor. Leaves are OpenZeppelin standard-v1:
///         keccak256(bytes.concat(keccak256(abi.encode(string id, bytes32 hash)))).
contract GraphsvcAnchor {
    struct Anchor {
        uint64 anchoredAt; // block timestamp, seconds
        uint64 blockNumber;
        uint32 leafCount;
        uint64 batchSeq;
    }

    address public immutable owner;
    mapping(address => bool) public isSubmitter;
    mapping(bytes32 => Anchor) private _anchors;

    event RootAnchored(
        bytes32 indexed root, uint64 indexed batchSeq, address indexed submitter, uint32 leafCount, uint64 anchoredAt
    );
    event SubmitterSet(address indexed submitter, bool allowed);

    error NotOwner(address caller);
    error NotSubmitter(address caller);
    error ZeroRoot();
    error EmptyBatch();
    error AlreadyAnchored(bytes32 root);

    constructor() {
        owner = msg.sender;
        isSubmitter[msg.sender] = true;
        emit SubmitterSet(msg.sender, true);
    }

    function setSubmitter(address submitter, bool allowed) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        isSubmitter[submitter] = allowed;
        emit SubmitterSet(submitter, allowed);
    }

    function anchor(bytes32 root, uint64 batchSeq, uint32 leafCount) external {
        if (!isSubmitter[msg.sender]) revert NotSubmitter(msg.sender);
        if (root == bytes32(0)) revert ZeroRoot();
        if (leafCount == 0) revert EmptyBatch();
        if (_anchors[root].anchoredAt != 0) revert AlreadyAnchored(root);
        _anchors[root] = Anchor(uint64(block.timestamp), uint64(block.number), leafCount, batchSeq);
        emit RootAnchored(root, batchSeq, msg.sender, leafCount, uint64(block.timestamp));
    }

    function anchorOf(bytes32 root) external view returns (Anchor memory) {
        return _anchors[root];
    }

    function isAnchored(bytes32 root) public view returns (bool) {
        return _anchors[root].anchoredAt != 0;
    }

    /// @return true when `root` is anchored and `proof` folds the leaf of (id, hash) to it.
    function verifyMemory(bytes32 root, string calldata id, bytes32 hash, bytes32[] calldata proof)
        external
        view
        returns (bool)
    {
        if (!isAnchored(root)) return false;
        bytes32 node = keccak256(bytes.concat(keccak256(abi.encode(id, hash))));
        for (uint256 i = 0; i < proof.length; i++) {
            bytes32 sibling = proof[i];
            node = node < sibling
                ? keccak256(abi.encodePacked(node, sibling))
                : keccak256(abi.encodePacked(sibling, node));
        }
        return node == root;
    }
}
