// The page's glue: window.graphsvcVerify (what the form calls, and what tests drive in bulk) and the form.
import {
  MAX_BUNDLE_BYTES,
  RPC_TIMEOUT_MS,
  checkAddress,
  content,
  decodeUtf8,
  loadBundle,
  makeRpc,
  validateBundle,
  verdict,
  verifyBundle,
} from "./verify.js";

/**
 * Verify a bundle (its JSON text, or the parsed object) against an RPC URL, pinning `contract` if given.
 * Resolves to {checks: [{key, ok, text}], verified, pinned, forgotten, unchecked, exitCode, verdict,
 * content}; ok is true, false, or null (not checked); exitCode as graphsvc verify-bundle's (0 verified,
 * 1 a check failed, 3 could not check); content the envelope's [field, JSON value] pairs, inert. Rejects with a BundleError, RpcError or InputError when the inputs cannot be used at all.
 * `timeoutMs` bounds each RPC call (default 10 s, as graphsvc verify-bundle).
 */
async function graphsvcVerify(bundle, rpcUrl, contract = null, { timeoutMs = RPC_TIMEOUT_MS } = {}) {
  const checked = typeof bundle === "string" ? loadBundle(bundle) : validateBundle(bundle);
  const pin = contract ? checkAddress(contract) : null;
  const report = await verifyBundle(checked, makeRpc(rpcUrl, timeoutMs), pin);
  return { ...report, verdict: verdict(checked, report), content: content(checked) };
}
window.graphsvcVerify = graphsvcVerify;

const $ = (id) => document.getElementById(id);
const MARKS = { true: "✓", false: "✗", null: "·" };

function show(element, text) {
  element.textContent = text;
  element.hidden = !text;
}

function render(report) {
  const result = $("result");
  result.className = report.verified ? "verified" : report.unchecked ? "unchecked" : "failed";
  show($("verdict"), `${report.verified ? "✓" : report.unchecked ? "?" : "✗"} ${report.verdict}`);
  show($("said"), report.verified ? "The memory (as verified):" : "The memory, as the bundle claims (not verified):");
  $("content").replaceChildren(
    ...report.content.flatMap(([label, value]) => {
      const term = document.createElement("dt");
      const data = document.createElement("dd");
      term.textContent = label;
      data.textContent = value;
      return [term, data];
    }),
  );
  const list = $("checks");
  list.replaceChildren(
    ...report.checks.map(({ key, ok, text }) => {
      const item = document.createElement("li");
      item.dataset.key = key;
      item.dataset.ok = String(ok);
      for (const [name, value] of [["mark", MARKS[ok]], ["key", key], ["text", text]]) {
        const part = document.createElement("span");
        part.className = name;
        part.textContent = value;
        item.append(part);
      }
      return item;
    }),
  );
  show(
    $("note"),
    report.pinned
      ? ""
      : "The contract address comes from the bundle only: anyone can write a bundle that names a contract " +
          "of their own. Pin the address the operator publishes to trust the result.",
  );
  result.hidden = false;
}

async function onVerify(event) {
  event.preventDefault();
  const button = $("verify");
  show($("error"), "");
  $("result").hidden = true;
  button.disabled = true;
  show($("status"), "Checking…");
  try {
    render(await graphsvcVerify($("bundle").value, $("rpc").value.trim(), $("contract").value.trim() || null));
  } catch (e) {
    show($("error"), e.message);
  } finally {
    button.disabled = false;
    show($("status"), "");
  }
}

async function loadFile(file) {
  show($("error"), "");
  if (file.size > MAX_BUNDLE_BYTES) {
    show($("error"), `${file.name}: ${file.size.toLocaleString("en")} bytes: a proof bundle is at most 1,000,000 bytes`);
    return;
  }
  try {
    $("bundle").value = decodeUtf8(new Uint8Array(await file.arrayBuffer()));
    show($("status"), `Read ${file.name}.`);
  } catch (e) {
    show($("error"), `${file.name}: ${e.message}`);
  }
}

function onPaste(event) {
  const text = event.clipboardData?.getData("text") ?? "";
  if (text.length > MAX_BUNDLE_BYTES) {
    event.preventDefault(); // a larger paste is not a bundle; keep the page responsive
    show($("error"), `${text.length.toLocaleString("en")} characters pasted: a proof bundle is at most 1,000,000 bytes`);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("form").addEventListener("submit", onVerify);
  $("bundle").addEventListener("paste", onPaste);
  $("file").addEventListener("change", (e) => e.target.files[0] && loadFile(e.target.files[0]));
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]);
  });
});
