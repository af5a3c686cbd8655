// The TypeScript SDK's stdio client on `graphsvc mcp`, driven by the test suite over this process's
// own stdin and stdout, one JSON object a line:
//   argv: the command to start and its arguments (its environment is this process's)
//   out:  {"tools": [...]} once connected (the tools as listed)
//   in:   {"tool": name, "args": {...}}   out: {"isError", "structuredContent", "text"}
// It exits when its stdin closes, closing the client (which closes graphsvc's stdin).
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "graphsvc-ts-test", version: "1.0.0" });
await client.connect(transport);
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
say({ tools: (await client.listTools()).tools });

for await (const line of createInterface({ input: process.stdin })) {
  const { tool, args: toolArgs } = JSON.parse(line);
  const result = await client.callTool({ name: tool, arguments: toolArgs });
  say({
    isError: Boolean(result.isError),
    structuredContent: result.structuredContent ?? null,
    text: result.content?.[0]?.text ?? "",
  });
}
await client.close();
