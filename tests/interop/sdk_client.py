"""Drives a real gitward binary with the official MCP Python SDK client.

Usage: sdk_client.py GITWARD_BIN REPO_PATH MODE
MODE is "auto" (server/discover, the SDK default), "legacy" (initialize) or a modern
protocol version the SDK adopts without probing ("2026-07-28").

Connects over stdio, lists the tools, calls every listed tool with valid arguments for
REPO_PATH, and lets the SDK validate each result against its own protocol types and the
tool's outputSchema, then checks that bad input comes back as an isError result whose text
carries the message. Prints one JSON summary line on success; exits non-zero otherwise.
"""

import json
import os
import sys

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

# Values for required arguments, by property name. A served tool with a required
# property missing here fails the run: every served tool must be exercised.
VALUES = {
    "repoPath": None,  # the fixture repository, filled in below
    "commit": "HEAD",
    "rev": "HEAD",
    "base": "main~1",
    "head": "main",
    "from": "main~1",
    "to": "main",
    "sourceRef": "feature",
    "targetRef": "main",
    "source": "feature",
    "target": "main",
    "ref": "main",
    "refName": "HEAD",
    "branch": "feature",
    "path": "a.txt",
    "paths": ["a.txt"],
    "steps": [{"operationType": "reset", "targetRef": "HEAD", "mode": "soft"}],
    "reason": "interoperability check",
    "previewId": "1f3c5b9a-0c1d-4e2f-8a9b-0123456789ab",
    "message": "interoperability check",
    "changeName": "interop-check",
    "name": "interop-check",
    "since": "2020-01-01T00:00:00Z",
    "goal": "Check that every tool answers the official client.",
    "slug": "interop-check",
    "eventId": "reflog:HEAD@{0}",
    "restorePointId": "rp_interop",
    "targets": None,  # the fixture repository's branches, filled in below
    "ontoRef": "main",
    "action": "return",
    "relativePath": "libs/lib",
    "patchContent": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n",
}


def arguments(tool, repo: str) -> dict:
    schema = tool.input_schema
    args = {}
    for prop in schema.get("required", []):
        if prop not in VALUES:
            raise SystemExit(f"{tool.name}: no test value for required argument {prop!r}")
        if prop == "repoPath":
            args[prop] = repo
        elif prop == "targets":
            args[prop] = [{"repoPath": repo, "branches": ["feature"]}]
        else:
            args[prop] = VALUES[prop]
    if "repoPath" in schema.get("properties", {}):
        args["repoPath"] = repo
    return args


async def run(binary: str, repo: str, mode: str) -> dict:
    params = StdioServerParameters(command=binary, args=[], env=dict(os.environ))
    summary = {"mode": mode, "calls": {}}
    async with Client(params, mode=mode, raise_exceptions=True) as client:
        summary["protocolVersion"] = client.protocol_version
        info = client.server_info
        summary["serverName"] = info.name if info is not None else None
        if mode != "legacy":
            discovered = client.session.discover_result
            summary["supportedVersions"] = discovered.supported_versions if discovered else None
        listed = await client.list_tools()
        names = [tool.name for tool in listed.tools]
        summary["tools"] = names
        if mode == "auto":
            # The SDK parsed the caching hints of the modern list result.
            assert listed.ttl_ms == 300000 and listed.cache_scope == "public", listed
        for tool in listed.tools:
            assert tool.input_schema.get("type") == "object", tool.name
        for tool in listed.tools:
            # The SDK checks the result against the protocol types and, where a
            # structured result comes back, against the tool's outputSchema.
            result = await client.call_tool(tool.name, arguments(tool, repo))
            text = result.content[0].text
            structured = result.structured_content
            if structured is not None:
                assert json.loads(text) == structured, f"{tool.name}: text and structuredContent differ"
            read_only = tool.annotations is None or tool.annotations.read_only_hint
            if result.is_error and read_only:
                raise SystemExit(f"{tool.name} answered isError: {text}")
            # A proposal tool may end in a gateway error here (no gateway runs); that
            # error must still be a well-formed tool result.
            summary["calls"][tool.name] = "error" if result.is_error else "ok"
        # Bad input is a tool result the SDK hands back with our message in its text.
        failed = await client.call_tool("repo.status", {"repoPath": "relative"})
        assert failed.is_error, failed
        assert failed.structured_content is None, failed
        payload = json.loads(failed.content[0].text)
        assert "must be an absolute path" in payload["error"]["message"], payload
        summary["badInput"] = payload["error"]["code"]
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
