"""langchain-mcp-adapters' MultiServerMCPClient on graphsvc, driven by the test suite over this
process's stdin and stdout, one JSON object a line (as ts_stdio.mjs is). It runs in its own venv
(tests/clients/.venv-langchain): the adapters need the MCP SDK 1.x, graphsvc the 2.x.

    argv[1]: the adapter's connection, as its own config ({"transport": "streamable_http", "url",
             "headers"} or {"transport": "stdio", "command", "args", "env"})
    out:     {"tools": [names]} once connected
    in:      {"tool": name, "args": {...}}   out: {"isError", "structuredContent", "text"}

The tools are the adapter's LangChain tools, called as a model's tool call would be (a ToolCall, so
the answer is a ToolMessage with the structured content as its artifact), in one session.
"""

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools


def say(value: object) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


async def main() -> None:
    client = MultiServerMCPClient({"graphsvc": json.loads(sys.argv[1])})
    async with client.session("graphsvc") as session:
        tools = {tool.name: tool for tool in await load_mcp_tools(session)}
        say({"tools": list(tools)})
        for n, line in enumerate(sys.stdin):
            call = json.loads(line)
            message = await tools[call["tool"]].ainvoke(
                {"name": call["tool"], "args": call["args"], "id": f"call-{n}", "type": "tool_call"}
            )
            blocks = message.content if isinstance(message.content, list) else [message.content]
            text = "".join(b if isinstance(b, str) else b.get("text", "") for b in blocks)
            artifact = message.artifact or {}
            say(
                {
                    "isError": message.status == "error",
                    "structuredContent": artifact.get("structured_content"),
                    "text": text,
                }
            )


asyncio.run(main())
