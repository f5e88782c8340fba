#!/usr/bin/env python3
"""Context economy figures: what gitward's answers cost a model, in bytes and tokens.

  economy.py tools BIN                 tools/list per protocol era
  economy.py brief BIN REPO            repo.brief against the raw commands it replaces
  economy.py status BIN REPO           repo.status payload (default arguments)

Tokens are estimated as bytes / 4, the estimate repo.brief's own budget uses.
"""

import json
import subprocess
import sys

LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"


def compact(value):
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def ask(binary, messages):
    text = "".join(json.dumps(m) + "\n" for m in messages)
    out = subprocess.run(
        [binary, "serve"], input=text, capture_output=True, text=True, check=True
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def tools_list(binary, version):
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
    reply = [m for m in ask(binary, msgs) if m.get("id") == 2][0]
    return reply["result"]["tools"]


def tools(binary):
    for version in LEGACY + [MODERN]:
        listed = tools_list(binary, version)
        total = compact(listed)
        short = [
            compact({k: t[k] for k in ("name", "title", "description", "inputSchema") if k in t})
            for t in listed
        ]
        out = sum(compact(t.get("outputSchema", {})) for t in listed if "outputSchema" in t)
        print(
            f"tools/list {version}: {len(listed)} tools, {total / 1000:.1f} KB "
            f"(~{total // 4} tokens; output schemas {out / 1000:.1f} KB); "
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
