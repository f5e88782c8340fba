"""Drives a real gitward binary with the official MCP Python SDK client.

Usage: sdk_client.py GITWARD_BIN REPO_PATH MODE
MODE is "auto" (server/discover, the SDK default) or "legacy" (initialize).

Connects over stdio, lists the tools, calls every listed tool with valid arguments for
REPO_PATH, and lets the SDK validate each result against its own protocol types and the
tool's outputSchema. Prints one JSON summary line on success; exits non-zero otherwise.
"""

import json
import os
import sys

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

# Valid arguments for each tool gitward may serve, keyed by name. A listed tool missing
# from here fails the run: every served tool must be exercised.
def arguments(tool: str, repo: str) -> dict:
    plain = {"repoPath": repo}
    table = {
        "repo.brief": plain,
        "repo.scope": {"repoPath": repo, "path": "src"},
        "repo.status": plain,
        "repo.refs": plain,
        "repo.branchStack": plain,
        "repo.history": {"repoPath": repo, "limit": 5},
        "repo.reflog": plain,
        "repo.conflictPreflight": {"repoPath": repo, "sourceRef": "feature", "targetRef": "main"},
        "conflict.read": plain,
        "commit.details": {"repoPath": repo, "commit": "HEAD"},
        "worktree.changes": plain,
        "worktree.list": plain,
        "submodule.status": plain,
        "diff.text": {"repoPath": repo},
        "diff.semantic": {"repoPath": repo},
        "diff.semanticFallbacks": {"repoPath": repo},
        "fleet.radar": plain,
        "fleet.digest": plain,
        "agents.presence": plain,
    }
    return table[tool]


async def run(binary: str, repo: str, mode: str) -> dict:
    params = StdioServerParameters(command=binary, args=[], env=dict(os.environ))
    summary = {"mode": mode, "calls": {}}
    async with Client(params, mode=mode, raise_exceptions=True) as client:
        summary["protocolVersion"] = client.protocol_version
        info = client.server_info
        summary["serverName"] = info.name if info is not None else None
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        summary["tools"] = names
        for tool in listed.tools:
            assert tool.input_schema.get("type") == "object", tool.name
        for name in names:
            result = await client.call_tool(name, arguments(name, repo))
            if result.is_error:
                raise SystemExit(f"{name} answered isError: {result.content}")
            text = result.content[0].text
            structured = result.structured_content
            if structured is not None:
                assert json.loads(text) == structured, f"{name}: text and structuredContent differ"
            summary["calls"][name] = "ok"
        # An unknown tool is a protocol error the SDK surfaces as an exception.
        try:
            await client.call_tool("no.such.tool", {})
        except Exception as e:  # noqa: BLE001 - the SDK's error type is what we check
            summary["unknownTool"] = getattr(getattr(e, "error", None), "code", str(e))
        else:
            raise SystemExit("an unknown tool was accepted")
    return summary


def main() -> None:
    binary, repo, mode = sys.argv[1:4]
    summary = anyio.run(run, binary, repo, mode)
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
