"""A session across a restart of `gitward serve --http`, with the official MCP Python
SDK's Streamable HTTP client in legacy mode (initialize, a session).

Usage: http_restart.py URL REPO_PATH
Calls repo_status, prints "ready", waits for a line on stdin (the server is restarted on
the same address meanwhile), then calls again in the same session. Prints one JSON summary
line on success.
"""

import json
import sys

import anyio
from mcp.client import Client


async def run(url: str, repo: str) -> dict:
    async with Client(url, mode="legacy", raise_exceptions=True) as client:
        first = await client.call_tool("repo_status", {"repoPath": repo})
        if first.is_error:
            raise SystemExit(f"repo_status answered isError: {first.content[0].text}")
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        again = await client.call_tool("repo.status", {"repoPath": repo})
        if again.is_error:
            raise SystemExit(f"repo.status answered isError: {again.content[0].text}")
        listed = await client.list_tools()
        return {
            "protocolVersion": client.protocol_version,
            "repoPath": (again.structured_content or {}).get("repoPath"),
            "tools": len(listed.tools),
        }


def main() -> None:
    url, repo = sys.argv[1:3]
    print(json.dumps(anyio.run(run, url, repo), sort_keys=True))


if __name__ == "__main__":
    main()
