"""Pure data and pure functions: the contract every interface shares. The standard library, pydantic,
and the codecs a memory's hash and a batch's proof are defined by (rfc8785 for canonical JSON,
eth_utils and eth_abi for keccak and ABI encoding): no I/O, no driver (tests/house/test_layers.py)."""
