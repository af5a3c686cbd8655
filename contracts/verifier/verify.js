// The browser twin of graphsvc/verifier.py: the same six checks, with the same keys, order, texts and
// pass / fail / not-checked semantics, from the bundle and an RPC URL alone. Keep the two in step:
// tests/anchoring/test_verify_page.py runs both on a corpus of real bundles and compares every check.
import canonicalize from "canonicalize";
import { decodeAbiParameters, encodeAbiParameters, keccak256, stringToBytes } from "viem";

export const MAX_BUNDLE_BYTES = 1_000_000;
export const EXIT = { verified: 0, failed: 1, unreadable: 2, unchecked: 3 }; // as graphsvc verify-bundle
export const RPC_TIMEOUT_MS = 10_000;
export const CHECKS = ["hash", "proof", "chain", "contract", "root", "event"];
const ANCHOR_OF = keccak256(stringToBytes("anchorOf(bytes32)")).slice(0, 10);
const ROOT_ANCHORED = keccak256(stringToBytes("RootAnchored(bytes32,uint64,address,uint32,uint64)"));
const ANCHOR_FIELDS = [
  { type: "uint64" }, // anchoredAt (seconds)
  { type: "uint64" }, // blockNumber
  { type: "uint32" }, // leafCount
  { type: "uint64" }, // batchSeq
];

/** The bundle cannot be read; `field` names the part that is wrong, as graphsvc's verifier does. */
export class BundleError extends Error {
  constructor(message, field = null) {
    super(field ? `${field}: ${message}` : message);
    this.name = "BundleError";
    this.field = field;
  }
}

/** The RPC could not answer (unreachable, timed out, or an error reply): the check could not be made. */
export class RpcError extends Error {
  name = "RpcError";
}

/** The contract answered anchorOf, but not as an anchor contract does: a failed check, not an outage. */
export class NotAnAnchor extends RpcError {
  name = "NotAnAnchor";
}

// Not printable, as Python's str.isprintable() says: control and format characters (ANSI escapes,
// newlines, bidi overrides), surrogates, private use, unassigned, separators other than the space.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/** `text` safe to show: every character that is not printable as a \x.., \u.... or \U........ escape. */
export function inert(text) {
  return String(text).replace(UNPRINTABLE, (c) => {
    const n = c.codePointAt(0);
    const hex = n.toString(16);
    return n < 0x100 ? `\\x${hex.padStart(2, "0")}` : n < 0x10000 ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
  });
}

// ---- reading and validating a bundle (graphsvc/domain/proof.py, contracts/proof-bundle.schema.json)

/** Parse bundle text: at most MAX_BUNDLE_BYTES of UTF-8, one JSON object, then `validateBundle`. */
export function loadBundle(text) {
  const size = new TextEncoder().encode(text).length;
  if (size > MAX_BUNDLE_BYTES) {
    throw new BundleError(`${size.toLocaleString("en")} bytes: a proof bundle is at most 1,000,000 bytes`);
  }
  let parsed;
  try {
    parsed = JSON.parse(text, exactIntegers);
  } catch (e) {
    if (e instanceof RangeError) throw new BundleError("not a proof bundle (nested too deeply)");
    throw new BundleError(`not JSON (${e.message})`);
  }
  return validateBundle(parsed);
}

/** Decode a dropped file's bytes as Python does: strict UTF-8, a byte-order mark kept (and refused). */
export function decodeUtf8(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new BundleError("not UTF-8 text");
  }
}

// JSON integers beyond 2^53 become BigInt, exact as in Python (JSON.parse source text access).
function exactIntegers(_key, value, context) {
  const source = context?.source;
  if (typeof value === "number" && !Number.isSafeInteger(value) && /^-?\d+$/.test(source ?? "")) {
    return BigInt(source);
  }
  return value;
}

const HEX32 = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const U64 = 2n ** 64n - 1n;
const U32 = 2n ** 32n - 1n;

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const join = (field, key) => (field ? `${field}.${key}` : key);

// Field validators: (value, field) => the value to keep, or a BundleError naming the field.
const string =
  ({ min = 0, max = Infinity, pattern = null } = {}) =>
  (value, field) => {
    if (typeof value !== "string") throw new BundleError("Input should be a valid string", field);
    if (!value.isWellFormed()) {
      throw new BundleError("Input should be a valid string, unable to parse raw data as a unicode string", field);
    }
    const length = [...value].length; // code points, as Python counts
    if (length < min) throw new BundleError(`String should have at least ${min} character${min === 1 ? "" : "s"}`, field);
    if (length > max) throw new BundleError(`String should have at most ${max} characters`, field);
    if (pattern && !pattern.test(value)) throw new BundleError(`String should match pattern '${pattern.source}'`, field);
    return value;
  };

// A JSON integer: a safe one as a number, a larger one as the BigInt `exactIntegers` made of its digits
// (a larger number is a float literal like 1e20, which Python refuses too, or was read inexactly).
const integer = (min, max) => (value, field) => {
  const exact = typeof value === "bigint" || Number.isSafeInteger(value);
  if (!exact) throw new BundleError("Input should be a valid integer", field);
  const big = BigInt(value);
  if (big < min) throw new BundleError(`Input should be greater than or equal to ${min}`, field);
  if (big > max) throw new BundleError(`Input should be less than or equal to ${max}`, field);
  return big;
};

const constant = (expected) => (value, field) => {
  const same = Array.isArray(expected)
    ? Array.isArray(value) && value.length === expected.length && value.every((v, i) => v === expected[i])
    : value === expected;
  if (!same) throw new BundleError(`Input should be ${JSON.stringify(expected)}`, field);
  return value;
};

const nullable = (validate) => (value, field) => (value === null ? null : validate(value, field));

const list = (validate, max = Infinity) => (value, field) => {
  if (!Array.isArray(value)) throw new BundleError("Input should be a valid list", field);
  if (value.length > max) throw new BundleError(`List should have at most ${max} items, not ${value.length}`, field);
  return value.map((item, i) => validate(item, join(field, i)));
};

const dictionary = (value, field) => {
  if (!isObject(value)) throw new BundleError("Input should be a valid dictionary", field);
  return value;
};

// An object with these fields only, checked in order as pydantic reports them: [key, validate, default].
// A field without a default (`undefined`) is required.
const model = (spec) => (value, field) => {
  if (!isObject(value)) throw new BundleError("Input should be an object", field);
  const out = {};
  for (const [key, validate, fallback] of spec) {
    if (Object.hasOwn(value, key)) out[key] = validate(value[key], join(field, key));
    else if (fallback === undefined) throw new BundleError("Field required", join(field, key));
    else out[key] = fallback;
  }
  const extra = Object.keys(value).find((k) => !spec.some(([key]) => key === k));
  if (extra !== undefined) throw new BundleError("Extra inputs are not permitted", join(field, extra));
  return out;
};

const HEX = string({ pattern: HEX32 });
const COUNT = integer(0n, U64);
const recipe = (pairs) => model(Object.entries(pairs).map(([key, value]) => [key, constant(value), value]));
const BUNDLE = model([
  ["schema", constant("graphsvc.proof/v2")],
  ["id", string({ min: 1, max: 300 })],
  ["hash", HEX],
  ["envelope", nullable(dictionary)],
  ["forgotten", nullable(model([["forgottenAt", string({ max: 64 })]])), null],
  ["hashRecipe", recipe({ name: "graphsvc.memory-hash/v1", canonicalization: "RFC 8785", textNormalization: "NFC", digest: "keccak256" }), null],
  ["leaf", recipe({ tree: "openzeppelin-standard-v1", encoding: ["string", "bytes32"], values: ["id", "hash"] }), null],
  ["proof", list(HEX, 64)],
  ["root", HEX],
  [
    "anchor",
    model([
      ["chainId", COUNT],
      ["contract", string({ pattern: ADDRESS })],
      ["txHash", HEX],
      ["blockNumber", COUNT],
      ["batchSeq", COUNT],
      ["leafCount", integer(1n, U32)],
      ["anchoredAt", COUNT],
      ["explorerUrl", nullable(string({ max: 512 })), null],
    ]),
  ],
  ["abi", list(dictionary), null],
]);

/** Check a parsed bundle field by field as graphsvc/domain/proof.py does (integers become BigInt).
 * Returns the checked bundle; throws BundleError naming the first field that is wrong. */
export function validateBundle(parsed) {
  if (!isObject(parsed)) throw new BundleError("not a proof bundle (expected a JSON object)");
  const { schema } = parsed;
  if (schema !== "graphsvc.proof/v2") {
    const named = typeof schema === "string" && [...schema].length <= 64 ? `schema is '${inert(schema)}'` : "no schema";
    throw new BundleError(`${named}; this verifier reads 'graphsvc.proof/v2' bundles`);
  }
  const bundle = BUNDLE(parsed, "");
  if ((bundle.envelope === null) === (bundle.forgotten === null)) {
    throw new BundleError("Value error, a bundle has an envelope, or is marked forgotten without one", "bundle");
  }
  return bundle;
}

export class InputError extends Error {
  name = "InputError";
}

/** The contract address the user pins: 0x and 40 hex digits, as `--contract` takes it. */
export function checkAddress(text) {
  if (!ADDRESS.test(text)) throw new InputError("the contract to pin is 0x and 40 hex digits");
  return text;
}

// ---- JSON-RPC over fetch, every call bounded in time and size

/** A JSON-RPC caller for `url`: each call times out after RPC_TIMEOUT_MS. */
export function makeRpc(url, timeoutMs = RPC_TIMEOUT_MS) {
  let parts = null;
  try {
    parts = new URL(url);
  } catch {}
  if (!parts || !["http:", "https:"].includes(parts.protocol) || !parts.hostname) {
    throw new RpcError(`the RPC URL must be http(s)://host[:port][/path], not '${url}'`);
  }
  if (parts.username || parts.password) throw new RpcError("the RPC URL must not hold a user or password");
  const shown = `${parts.protocol}//${parts.host}`; // never a path's API key
  return async (method, ...params) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
      let response;
      try {
        const headers = { "content-type": "application/json" };
        response = await fetch(url, { method: "POST", headers, body, signal: controller.signal, credentials: "omit" });
      } catch {
        if (controller.signal.aborted) throw new RpcError(`the RPC at ${shown} did not answer within ${timeoutMs / 1000} s`);
        throw new RpcError(`cannot reach the RPC at ${shown} (is it up, and does it allow requests from this page (CORS)?)`);
      }
      if (!response.ok) throw new RpcError(`the RPC at ${shown} answered HTTP ${response.status}`);
      let reply;
      try {
        reply = JSON.parse(await readAtMost(response, MAX_BUNDLE_BYTES));
      } catch {
        if (controller.signal.aborted) throw new RpcError(`the RPC at ${shown} did not answer within ${timeoutMs / 1000} s`);
        throw new RpcError(`the RPC at ${shown} did not answer JSON-RPC`);
      }
      if (!isObject(reply) || "error" in reply || !("result" in reply)) {
        const error = isObject(reply?.error) ? reply.error : {};
        const message = String(error.message || "no result").slice(0, 200);
        if (method === "eth_call" && (error.code === 3 || /revert/i.test(message))) {
          throw new NotAnAnchor(`reverted anchorOf(root) (${message})`);
        }
        throw new RpcError(`the RPC at ${shown} refused ${method}: ${message}`);
      }
      return reply.result;
    } finally {
      clearTimeout(timer);
    }
  };
}

async function readAtMost(response, limit) {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error("too large");
    }
    chunks.push(value);
  }
  return decodeUtf8(new Uint8Array(await new Blob(chunks).arrayBuffer()));
}

// ---- the checks (graphsvc/verifier.py, in the same order)

const check = (key, ok, text) => ({ key, ok, text: inert(text) });

/** Run the checks in order up to the first that fails; `contract` pins the address the caller trusts
 * (else the bundle's is used). An RPC that cannot answer stops the run, unchecked (its reason). */
export async function verifyBundle(bundle, rpc, contract = null) {
  const checks = [hashCheck(bundle)];
  let unchecked = "";
  if (checks.at(-1).ok !== false) checks.push(proofCheck(bundle));
  if (checks.at(-1).ok) {
    const address = (contract ?? bundle.anchor.contract).toLowerCase();
    try {
      await chainChecks(bundle, rpc, address, contract !== null, checks);
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      checks.push(check(CHECKS[checks.length], null, `could not check: ${e.message}`)); // the rest are not run
      unchecked = inert(e.message);
    }
  }
  for (const key of CHECKS.slice(checks.length)) checks.push(check(key, null, "not checked"));
  const forgotten = bundle.envelope === null;
  const verified = !unchecked && checks.every((c) => c.ok === true || (c.key === "hash" && forgotten));
  const exitCode = verified ? EXIT.verified : unchecked ? EXIT.unchecked : EXIT.failed;
  return { checks, verified, pinned: contract !== null, forgotten, unchecked, exitCode };
}

function hashCheck(bundle) {
  const { envelope, id } = bundle;
  if (envelope === null) {
    const text = `not checkable: the memory was forgotten at ${bundle.forgotten.forgottenAt}: its content is gone, so its hash cannot be recomputed (its id, hash and proof remain)`;
    return check("hash", null, text);
  }
  const named = Object.hasOwn(envelope, "id") ? envelope.id : null;
  if (named !== id) {
    return check("hash", false, `the envelope is of memory ${JSON.stringify(named)}, not ${JSON.stringify(id)}`);
  }
  let recomputed;
  try {
    recomputed = keccak256(stringToBytes(canonicalize(envelope)));
  } catch (e) {
    return check("hash", false, `the envelope cannot be canonicalised: ${e.message}`);
  }
  if (recomputed !== bundle.hash) {
    return check("hash", false, `the envelope hashes to ${recomputed}, not ${bundle.hash}: it was changed`);
  }
  return check("hash", true, `hash recomputed from the envelope (RFC 8785, keccak256): ${bundle.hash}`);
}

/** keccak256(keccak256(abi.encode(string id, bytes32 hash))): OpenZeppelin StandardMerkleTree's leaf. */
export function memoryLeaf(id, hash) {
  return keccak256(keccak256(encodeAbiParameters([{ type: "string" }, { type: "bytes32" }], [id, hash])));
}

function proofCheck(bundle) {
  const leaf = memoryLeaf(bundle.id, bundle.hash);
  const n = bundle.proof.length;
  const steps = `${n} step${n === 1 ? "" : "s"}`;
  // lowercase hex of equal length compares as the bytes do
  const folded = bundle.proof.reduce((node, p) => {
    const [low, high] = node < p ? [node, p] : [p, node];
    return keccak256(`${low}${high.slice(2)}`);
  }, leaf);
  if (folded === bundle.root) return check("proof", true, `Merkle proof folds leaf ${leaf} to the root (${steps})`);
  return check("proof", false, `the Merkle proof (${steps}) does not fold leaf ${leaf} to the root`);
}

function quantity(value, what) {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]+$/.test(value)) {
    throw new RpcError(`the RPC answered ${what} with ${JSON.stringify(value)?.slice(0, 80)}, not a number`);
  }
  return BigInt(value);
}

async function chainChecks(bundle, rpc, address, pinned, checks) {
  const { anchor } = bundle;
  const served = quantity(await rpc("eth_chainId"), "eth_chainId");
  if (served !== anchor.chainId) {
    checks.push(check("chain", false, `the RPC serves chain ${served}; the bundle was anchored on chain ${anchor.chainId}`));
    return;
  }
  checks.push(check("chain", true, `the RPC serves chain ${served}, as the bundle says`));
  if (pinned && address !== anchor.contract.toLowerCase()) {
    checks.push(check("contract", false, `the bundle names contract ${anchor.contract}; you pinned ${address}`));
    return;
  }
  const code = await rpc("eth_getCode", address, "latest");
  if (code === "0x" || code === "0x0" || code === null) {
    checks.push(check("contract", false, `no contract code at ${address} on chain ${served}`));
    return;
  }
  const source = pinned ? "pinned by you" : "taken from the bundle";
  checks.push(check("contract", true, `contract ${address} has code (${source})`));
  checks.push(await rootCheck(bundle, rpc, address));
  if (checks.at(-1).ok) checks.push(await eventCheck(bundle, rpc, address));
}

async function anchorOf(rpc, address, root, block) {
  const data = ANCHOR_OF + encodeAbiParameters([{ type: "bytes32" }], [root]).slice(2);
  const result = await rpc("eth_call", { to: address, data }, block);
  try {
    return decodeAbiParameters(ANCHOR_FIELDS, result).map(BigInt);
  } catch {
    throw new NotAnAnchor(`answered anchorOf(root) at the ${block} block with no anchor`);
  }
}

const leafCount = (n) => `${n} ${Number(n) === 1 ? "leaf" : "leaves"}`;

async function rootCheck(bundle, rpc, address) {
  try {
    return await rootFound(bundle, rpc, address);
  } catch (e) {
    if (!(e instanceof NotAnAnchor)) throw e; // it reverted, or answered no data (no code there at that block)
    return check("root", false, `the contract at ${address} ${e.message}: not an anchor contract`);
  }
}

async function rootFound(bundle, rpc, address) {
  const { anchor } = bundle;
  const [anchoredAt, block, leaves, seq] = await anchorOf(rpc, address, bundle.root, "finalized");
  if (anchoredAt === 0n) {
    const [latest] = await anchorOf(rpc, address, bundle.root, "latest");
    const why = latest ? "anchored but not final yet: try again in a few seconds" : "not anchored";
    return check("root", false, `the root is ${why} in contract ${address} at the finalized block`);
  }
  const same =
    block === anchor.blockNumber &&
    leaves === anchor.leafCount &&
    seq === anchor.batchSeq &&
    anchoredAt * 1000n === anchor.anchoredAt;
  if (!same) {
    const text = `on chain the root is batch ${seq} of ${leafCount(leaves)} in block ${block}; the bundle says batch ${anchor.batchSeq} of ${leafCount(anchor.leafCount)} in block ${anchor.blockNumber}`;
    return check("root", false, text);
  }
  return check("root", true, `root anchored at the finalized block: batch ${seq}, ${leafCount(leaves)}, block ${block}`);
}

async function eventCheck(bundle, rpc, address) {
  const tx = bundle.anchor.txHash;
  const receipt = await rpc("eth_getTransactionReceipt", tx);
  if (!isObject(receipt)) return check("event", false, `transaction ${tx} is not on this chain`);
  const status = quantity(receipt.status ?? "0x0", "the receipt's status");
  if (status !== 1n || quantity(receipt.blockNumber, "the receipt's block") !== bundle.anchor.blockNumber) {
    return check("event", false, `transaction ${tx} failed or is not in block ${bundle.anchor.blockNumber}`);
  }
  for (const log of Array.isArray(receipt.logs) ? receipt.logs : []) {
    const topics = (Array.isArray(log?.topics) ? log.topics : []).map((t) => String(t).toLowerCase());
    const from = typeof log?.address === "string" ? log.address.toLowerCase() : "";
    if (from === address && topics[0] === ROOT_ANCHORED && topics[1] === bundle.root) {
      return check("event", true, `transaction ${tx} emitted RootAnchored for this root`);
    }
  }
  return check("event", false, `transaction ${tx} emitted no RootAnchored for this root from ${address}`);
}

/** The verdict line, as `graphsvc verify-bundle` prints it first (without its mark). */
export function verdict(bundle, report) {
  const { chainId, blockNumber } = bundle.anchor;
  const memory = inert(bundle.id);
  const where = `(chain ${chainId}, block ${blockNumber})`;
  if (report.verified && report.forgotten) {
    return `Verified: memory ${memory} was anchored ${where}, then forgotten: its content is gone.`;
  }
  if (report.verified) return `Verified: memory ${memory} is unchanged since it was anchored ${where}.`;
  if (report.unchecked) return `Could not check: ${report.unchecked}.`;
  return `Not verified: ${report.checks.find((c) => c.ok === false).text}.`;
}

// JSON text of a value as Python's json.dumps(value, ensure_ascii=False) writes it (", " and ": ").
function pyJson(value) {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${pyJson(k)}: ${pyJson(v)}`).join(", ")}}`;
  if (typeof value === "bigint") return value.toString();
  return JSON.stringify(value);
}

/** What the bundle says the memory is, as [label, value] pairs: the envelope's fields (each value as
 * JSON, inert), or the date it was forgotten. Verified only when the verdict says so. */
export function content(bundle) {
  if (bundle.envelope === null) {
    return [["id", inert(pyJson(bundle.id))], ["forgotten", inert(pyJson(bundle.forgotten.forgottenAt))]];
  }
  return Object.entries(bundle.envelope).map(([key, value]) => [key, inert(pyJson(value))]);
}
