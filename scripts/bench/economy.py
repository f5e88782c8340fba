#!/usr/bin/env python3
"""Context economy figures: what gitward's answers cost a model, in bytes and tokens.

  economy.py tools BIN                 tools/list per protocol era (workspace set, so the
                                       spec tools are listed too), whole and by part
  economy.py brief BIN REPO            repo.brief against the raw commands it replaces
  economy.py status BIN REPO           repo.status payload (default arguments)

Tokens are estimated as bytes / 4 of the compact JSON, the estimate repo.brief's own
budget uses; a tool list's bytes are those of the whole `tools/list` response line.
"""

import json
import subprocess
import sys
import tempfile

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"


def compact(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def ask(binary, messages, *args):
    text = "".join(json.dumps(m) + "\n" for m in messages)
    out = subprocess.run(
        [binary, "serve", *args], input=text, capture_output=True, text=True, check=True
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def tools_list(binary, version, root):
    if version == MODERN:
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        msgs = [{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}]
    else:
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": version, "capabilities": {},
                        "clientInfo": {"name": "economy", "version": "1"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        ]
    # An allowed root without a workspace descriptor is the spec tools' workspace.
    reply = [m for m in ask(binary, msgs, "--allowed-root", root) if m.get("id") == 2][0]
    return reply


PARTS = ("description", "inputSchema", "outputSchema", "title", "annotations")


def tools(binary):
    with tempfile.TemporaryDirectory() as root:
        for version in LEGACY + [MODERN]:
            reply = tools_list(binary, version, root)
            listed = reply["result"]["tools"]
            total = compact(reply)
            short = [
                compact({k: t[k] for k in ("name", "title", "description", "inputSchema") if k in t})
                for t in listed
            ]
            parts = ", ".join(
                f"{p} {sum(compact(t[p]) for t in listed if p in t) / 1000:.1f}"
                for p in PARTS
                if any(p in t for t in listed)
            )
            print(
                f"tools/list {version}: {len(listed)} tools, {total / 1000:.1f} KB "
                f"(~{total // 4} tokens; KB by part: {parts}); "
                f"name+title+description+inputSchema ~{sum(short) / len(short) / 4:.0f} tokens per tool"
            )


def call(binary, name, args):
    out = subprocess.run(
        [binary, "call", name, json.dumps(args)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


RAW = [
    ["status"],
    ["log", "-10"],
    ["stash", "list"],
    ["branch", "-vv"],
    ["remote", "-v"],
    ["submodule", "status"],
]


def brief(binary, repo):
    payload = compact(call(binary, "repo.brief", {"repoPath": repo}))
    raw = 0
    for argv in RAW:
        raw += len(subprocess.run(["git", "-C", repo, *argv], capture_output=True, check=True).stdout)
    print(
        f"repo.brief: {payload} bytes (~{payload // 4} tokens) vs {raw} bytes from "
        f"{len(RAW)} raw git commands: {payload / raw:.2f}x"
    )


def status(binary, repo):
    result = call(binary, "repo.status", {"repoPath": repo})
    payload = compact(result)
    data = result["data"]
    print(
        f"repo.status: {payload / 1024:.1f} KiB (~{payload // 4} tokens) for "
        f"{data['changedFiles']} changed paths, {len(data['entries'])} listed"
        f"{' (truncated)' if data['entriesTruncated'] else ''}"
    )


if __name__ == "__main__":
    what, binary, *rest = sys.argv[1:]
    {"tools": tools, "brief": brief, "status": status}[what](binary, *rest)
