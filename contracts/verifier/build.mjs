// Builds the verify page: page.js (+ verify.js and its npm libraries) bundled by esbuild and inlined with
// page.html's style into one file, graphsvc/web/verify.html, that needs nothing else (it works from disk).
// A Content-Security-Policy of hashes lets the page run its own script and style only and talk to RPCs.
// `node contracts/verifier/build.mjs --check` rebuilds and fails if the committed page differs.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const contracts = path.dirname(here);
const target = path.join(contracts, "..", "graphsvc", "web", "verify.html");

const built = await esbuild.build({
  entryPoints: [path.join(here, "page.js")],
  absWorkingDir: contracts,
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome111", "firefox119", "safari16.4"],
  legalComments: "none",
  metafile: true,
  write: false,
  logLevel: "error",
});
const script = built.outputFiles[0].text.trim();
if (/<\/script|<!--/i.test(script)) throw new Error("the bundle holds text that would end its <script> element");

// Every npm package with code in the bundle, with its version and licence, named in the page's header.
const packages = new Map();
const licences = new Map();
const [output] = Object.values(built.metafile.outputs);
for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
  if (!bytesInOutput) continue;
  const match = input.match(/^(.*node_modules\/(@[^/]+\/[^/]+|[^/]+))\//);
  if (match && !packages.has(match[2])) {
    const meta = JSON.parse(fs.readFileSync(path.join(contracts, match[1], "package.json"), "utf8"));
    packages.set(match[2], `${meta.name} ${meta.version} (${meta.license})`);
    const file = fs.readdirSync(path.join(contracts, match[1])).find((f) => /^licen[cs]e/i.test(f));
    licences.set(match[2], fs.readFileSync(path.join(contracts, match[1], file), "utf8").trim());
  }
}
const credits = [...packages.values()].sort().join(", ");
const notices = [...licences].sort().map(([name, text]) => `${name}:\n\n${text.replaceAll("--", "- -")}`).join("\n\n");

const template = fs.readFileSync(path.join(here, "page.html"), "utf8");
const style = template.match(/<style>([\s\S]*?)<\/style>/)[1];
const sha256 = (text) => `'sha256-${crypto.createHash("sha256").update(text).digest("base64")}'`;
const policy = [
  "default-src 'none'",
  `script-src ${sha256(script)}`,
  `style-src ${sha256(style)}`,
  "connect-src http: https:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");
const header =
  `<!-- graphsvc proof-bundle verifier. Built by \`node contracts/verifier/build.mjs\` from contracts/verifier/: do not edit.\n` +
  `     Bundles ${credits}. -->`;
const page = template
  .replace("<!doctype html>", () => `<!doctype html>\n${header}`)
  .replace("<!-- CSP -->", `<meta http-equiv="Content-Security-Policy" content="${policy}">`)
  .replace("<!-- SCRIPT -->", () => `<script>${script}</script>`)
  .replace("</html>", () => `</html>\n<!-- The licences of the bundled packages:\n\n${notices}\n-->\n`);
const size = `${Buffer.byteLength(page).toLocaleString("en")} bytes`;

const relative = path.relative(process.cwd(), target);
if (process.argv.includes("--check")) {
  const committed = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "";
  if (committed !== page) {
    console.error(`${relative} differs from a fresh build of contracts/verifier/: run node contracts/verifier/build.mjs`);
    process.exit(1);
  }
  console.log(`${relative} matches a fresh build (${size}; ${credits})`);
} else {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, page);
  console.log(`wrote ${relative} (${size}; ${credits})`);
}
