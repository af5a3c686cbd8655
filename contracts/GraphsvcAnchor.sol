// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title GraphsvcAnchor: a registry of Merkle roots of graphsvc memory batches.
/// @notice Roots are stored (not only logged) so anyone can check a memory with one eth_call to
///         verifyMemory, however old the anchor. Leaves are OpenZeppelin standard-v1:
///         keccak256(bytes.concat(keccak256(abi.encode(string id, bytes32 hash)))).
///         Chained roots: each root names its graph's tag (32 random bytes; never the graph's name)
///         and the root anchored before it for that tag, which must be the tag's last root. So the
///         chain itself lists every batch of a graph, in order, append-only: walk from
///         lastRootOf(tag) back through linkOf(root).prevRoot to zero.
contract GraphsvcAnchor {
    struct Anchor {
        uint64 anchoredAt; // block timestamp, seconds
        uint64 blockNumber;
        uint32 leafCount;
        uint64 batchSeq;
    }

    /// @notice Where a root sits in its graph's list, with its anchor record: one eth_call per batch.
    struct Link {
        bytes32 graphTag;
        bytes32 prevRoot; // zero for the graph's first root
        uint64 position; // 1 for the first root of the tag
        Anchor anchor;
    }

    address public immutable owner;
    mapping(address => bool) public isSubmitter;
    mapping(bytes32 => Anchor) private _anchors;
    mapping(bytes32 => bytes32) private _tagOf; // root => graph tag
    mapping(bytes32 => bytes32) private _prevOf; // root => the tag's root before it
    mapping(bytes32 => uint64) private _positionOf; // root => its position in the tag's list
    mapping(bytes32 => bytes32) public lastRootOf; // graph tag => its newest root
    mapping(bytes32 => uint64) public rootCountOf; // graph tag => roots anchored for it

    event RootAnchored(
        bytes32 indexed root, uint64 indexed batchSeq, address indexed submitter, uint32 leafCount, uint64 anchoredAt
    );
    /// @notice Emitted with RootAnchored (whose signature is unchanged, so older verifiers still match it).
    event RootLinked(bytes32 indexed graphTag, bytes32 indexed root, bytes32 prevRoot, uint64 position);
    event SubmitterSet(address indexed submitter, bool allowed);

    error NotOwner(address caller);
    error NotSubmitter(address caller);
    error ZeroRoot();
    error EmptyBatch();
    error AlreadyAnchored(bytes32 root);
    error ZeroTag();
    error StaleLink(bytes32 graphTag, bytes32 lastRoot);

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

    /// @param prevRoot must be lastRootOf(graphTag) (zero for the graph's first root): the list of a
    ///        graph's roots on chain is linear and only grows.
    function anchor(bytes32 root, uint64 batchSeq, uint32 leafCount, bytes32 graphTag, bytes32 prevRoot)
        external
    {
        if (!isSubmitter[msg.sender]) revert NotSubmitter(msg.sender);
        if (root == bytes32(0)) revert ZeroRoot();
        if (leafCount == 0) revert EmptyBatch();
        if (graphTag == bytes32(0)) revert ZeroTag();
        if (_anchors[root].anchoredAt != 0) revert AlreadyAnchored(root);
        if (prevRoot != lastRootOf[graphTag]) revert StaleLink(graphTag, lastRootOf[graphTag]);
        uint64 position = rootCountOf[graphTag] + 1;
        _anchors[root] = Anchor(uint64(block.timestamp), uint64(block.number), leafCount, batchSeq);
        _tagOf[root] = graphTag;
        _prevOf[root] = prevRoot;
        _positionOf[root] = position;
        lastRootOf[graphTag] = root;
        rootCountOf[graphTag] = position;
        emit RootAnchored(root, batchSeq, msg.sender, leafCount, uint64(block.timestamp));
        emit RootLinked(graphTag, root, prevRoot, position);
    }

    function anchorOf(bytes32 root) external view returns (Anchor memory) {
        return _anchors[root];
    }

    /// @notice The root's place in its graph's list and its anchor record (all zero when not anchored).
    function linkOf(bytes32 root) external view returns (Link memory) {
        return Link(_tagOf[root], _prevOf[root], _positionOf[root], _anchors[root]);
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
