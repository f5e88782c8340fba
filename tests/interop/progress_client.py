"""Progress notifications to the official MCP Python SDK client, over stdio or Streamable HTTP.

Usage: progress_client.py TARGET MODE CALLS_JSON
TARGET is the gitward binary (stdio) or an http:// URL (Streamable HTTP). MODE is "auto"
(server/discover, the modern era), "legacy" (initialize) or "2026-07-28". CALLS_JSON is a
list of {name, arguments}.

Calls each tool with a progress callback (the SDK sends a progressToken and hands each
notifications/progress for it to the callback) and prints
{"protocolVersion": ..., "progress": {name: [[progress, total, message], ...]}}.
"""

import json
import os
import sys

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters


async def run(target: str, mode: str, calls: list) -> dict:
    if target.startswith("http://"):
        server = target
    else:
        server = StdioServerParameters(command=target, args=[], env=dict(os.environ))
    summary = {"progress": {}}
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        summary["protocolVersion"] = client.protocol_version
        for call in calls:
            seen = []

            async def on_progress(progress, total, message, seen=seen):
                seen.append([progress, total, message])

            result = await client.call_tool(
                call["name"], call["arguments"], progress_callback=on_progress
            )
            if result.is_error:
                raise SystemExit(f"{call['name']} answered isError: {result.content[0].text}")
            summary["progress"][call["name"]] = seen
    return summary


def main() -> None:
    target, mode, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps(anyio.run(run, target, mode, calls), sort_keys=True))


if __name__ == "__main__":
    main()
