"""Pure data and pure functions: the contract every interface shares. stdlib + pydantic only."""
