// Compiles GraphsvcAnchor.sol offline with solc-js and writes GraphsvcAnchor.json (ABI + bytecode).
// `node contracts/compile.mjs --check` recompiles and fails if the committed artifact differs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const here = path.dirname(fileURLToPath(import.meta.url));
const NAME = "GraphsvcAnchor";
const EVM_VERSION = "cancun";
const input = {
  language: "Solidity",
  sources: { [`${NAME}.sol`]: { content: fs.readFileSync(path.join(here, `${NAME}.sol`), "utf8") } },
  settings: {
    evmVersion: EVM_VERSION,
    optimizer: { enabled: true, runs: 200 },
    metadata: { bytecodeHash: "none" },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const contract = output.contracts[`${NAME}.sol`][NAME];
const artifact = {
  contractName: NAME,
  compiler: `solc-js ${solc.version()}`,
  evmVersion: EVM_VERSION,
  optimizer: input.settings.optimizer,
  abi: contract.abi,
  bytecode: "0x" + contract.evm.bytecode.object,
  deployedBytecode: "0x" + contract.evm.deployedBytecode.object,
};
const text = JSON.stringify(artifact, null, 2) + "\n";
const target = path.join(here, `${NAME}.json`);
if (process.argv.includes("--check")) {
  const committed = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "";
  if (committed !== text) {
    console.error(`${NAME}.json differs from a fresh compile of ${NAME}.sol: run node contracts/compile.mjs`);
    process.exit(1);
  }
  console.log(`${NAME}.json matches a fresh compile (${artifact.compiler}, evm ${EVM_VERSION})`);
} else {
  fs.writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
