"""Drives `gitward serve --http` with the official MCP Python SDK's Streamable HTTP client.

Usage: http_client.py URL REPO_PATH MODE
MODE is "auto" (server/discover, the SDK default) or "legacy" (initialize, a session).

Lists the tools, calls repo.status (a git tool) and explore (a spec tool, served because
URL carries a workspace capability), letting the SDK validate each result against its
protocol types and the tool's outputSchema. Prints one JSON summary line on success.
"""

import json
import sys

import anyio
from mcp.client import Client


async def run(url: str, repo: str, mode: str) -> dict:
    summary = {"mode": mode, "calls": {}}
    async with Client(url, mode=mode, raise_exceptions=True) as client:
        summary["protocolVersion"] = client.protocol_version
        listed = await client.list_tools()
        summary["tools"] = sorted(tool.name for tool in listed.tools)
        for name, args in [("repo.status", {"repoPath": repo}), ("explore", {})]:
            result = await client.call_tool(name, args)
            if result.is_error:
                raise SystemExit(f"{name} answered isError: {result.content[0].text}")
            summary["calls"][name] = sorted(result.structured_content or {})
    return summary


def main() -> None:
    url, repo, mode = sys.argv[1:4]
    print(json.dumps(anyio.run(run, url, repo, mode), sort_keys=True))


if __name__ == "__main__":
    main()
