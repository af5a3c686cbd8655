"""A local EVM chain (anvil, from the npm package in contracts/) for development and tests.

`--slots-in-an-epoch 1` makes the `finalized` block lag the head by two blocks, like Monad.

    python -m graphsvc.devstack.chain start|stop [--home DIR] [--port N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from graphsvc.devstack.process import port_free, spawn, terminate

# The package graphsvc.contracts on disk: contracts/ in a checkout (where scripts/bootstrap installs
# the toolchain); in an installed wheel, npm installs it next to the package's package.json.
CONTRACTS = Path(str(files("graphsvc.contracts")))
ANVIL = CONTRACTS / "node_modules" / ".bin" / "anvil"
READY_TIMEOUT_S = 30.0
# anvil's well-known development account #0 (public; never holds real funds)
DEV_PRIVATE_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
DEV_CHAIN_ID = 31337


class ChainError(RuntimeError):
    """The local chain could not be started."""


@dataclass(frozen=True)
class LocalChain:
    rpc_url: str
    pid: int


def _rpc(url: str, method: str, params: list[object] | None = None) -> object:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}).encode()
    request = urllib.request.Request(url, body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=2) as response:
        return json.load(response)["result"]


def install() -> Path:
    """npm install in contracts/ (anvil and solc), once; the anvil binary (not its node launcher)."""
    if not ANVIL.exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=CONTRACTS, check=True)
    binaries = sorted((CONTRACTS / "node_modules" / "@foundry-rs").glob("anvil-*/bin/anvil"))
    return binaries[0] if binaries else ANVIL


def start(
    home: Path, *, port: int = 8545, block_time: float | None = None, mixed_mining: bool = True
) -> LocalChain:
    """Start anvil on 127.0.0.1:`port` (state kept in `home`) and wait until it answers. Without
    `block_time` each transaction is mined at once and no other block comes; with it a block comes
    every `block_time` seconds, and with `mixed_mining` each transaction is also mined at once.

    Raises:
        ChainError: it exited or did not answer within READY_TIMEOUT_S.
    """
    home.mkdir(parents=True, exist_ok=True)
    if not port_free(port):
        raise ChainError(f"port {port} is in use: stop what listens there or pick another port")
    url = f"http://127.0.0.1:{port}"
    command = [
        str(install()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--slots-in-an-epoch",
        "1",
        "--chain-id",
        str(DEV_CHAIN_ID),
        "--state",
        str(home / "state.json"),
        "--silent",
    ]
    if block_time:
        command += ["--block-time", str(block_time), *(["--mixed-mining"] if mixed_mining else [])]
    process = spawn(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    (home / "anvil.pid").write_text(str(process.pid))
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ChainError(f"anvil exited with {process.returncode}")
        try:
            _rpc(url, "eth_chainId")
            return LocalChain(url, process.pid)
        except OSError:
            time.sleep(0.1)
    stop(home)
    raise ChainError(f"anvil did not answer within {READY_TIMEOUT_S:.0f}s")


def stop(home: Path) -> bool:
    pid_file = home / "anvil.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text())
    pid_file.unlink()
    return terminate(pid, 10)  # anvil writes --state on SIGTERM


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphsvc.devstack.chain")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--home", type=Path, default=Path("var/chain"))
    parser.add_argument("--port", type=int, default=8545)
    args = parser.parse_args(argv)
    if args.action == "start":
        print(start(args.home, port=args.port).rpc_url)
    else:
        print("stopped" if stop(args.home) else "not running")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
