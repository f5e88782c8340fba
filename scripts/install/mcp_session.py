#!/usr/bin/env python3
"""Drives one MCP session over stdio through an installed gitward and checks it.

Usage: mcp_session.py [--specs=works|setup-hint] -- COMMAND [ARG...]

COMMAND is started the way an MCP host starts a server (no arguments of ours, the
environment a user sets), in a fresh git repository made here with real git. The
session: `initialize`, `notifications/initialized`, `tools/list` (the host-safe
names), `tools/call repo_brief` on that repository; with --specs, a workspace
descriptor is set and `create-proposal` is called, which runs the OpenSpec CLI:
`works` wants the change created, `setup-hint` wants the error that names
`gitward setup openspec`. Exits non-zero with the reason on any mismatch.
Only the standard library is used, so it runs with any Python 3.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading

TIMEOUT = 120


def fail(message):
    print(f"mcp_session: {message}", file=sys.stderr)
    sys.exit(1)


def git(repo, *args):
    subprocess.run(
        ["git", "-C", repo, "-c", "user.name=Install", "-c", "user.email=install@example.com",
         *args],
        check=True, capture_output=True)


class Session:
    def __init__(self, command, env):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env)
        self.stderr = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.next_id = 0

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        timer = threading.Timer(TIMEOUT, self.proc.kill)
        timer.start()
        try:
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    fail(f"the server closed stdout during {method}; stderr:\n"
                         + "".join(self.stderr))
                reply = json.loads(line)
                if reply.get("id") == self.next_id:
                    break
        finally:
            timer.cancel()
        if "error" in reply:
            fail(f"{method} failed: {reply['error']}")
        return reply["result"]

    def close(self):
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("the server did not exit when its stdin closed")
        if code != 0:
            fail(f"the server exited with {code}; stderr:\n" + "".join(self.stderr))


def main(argv):
    specs = None
    if "--" not in argv:
        fail(__doc__)
    split = argv.index("--")
    for option in argv[:split]:
        if option.startswith("--specs="):
            specs = option.split("=", 1)[1]
        else:
            fail(f"unknown option {option}")
    command = argv[split + 1:]
    with tempfile.TemporaryDirectory(prefix="gitward-install-") as root:
        root = os.path.realpath(root)
        repo = os.path.join(root, "repo")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("# installed\n")
        git(repo, "add", "README.md")
        git(repo, "commit", "-q", "-m", "init")
        env = dict(os.environ)
        env["FLUXGIT_MCP_ALLOWED_ROOTS"] = root
        env["FLUXGIT_RUN_DIR"] = os.path.join(root, "run")
        if specs:
            data = os.path.join(root, "data")
            os.makedirs(data)
            env["FYLLO_WORKSPACE_JSON"] = json.dumps({
                "version": 2, "workspaceId": "ws-install", "workspaceKind": "folder",
                "primaryFolderId": "f", "workspaceDataDir": data, "sessionId": "s-1",
                "folders": [{"folderId": "f", "folderName": "repo", "folderPath": repo}]})
        session = Session(command, env)
        init = session.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "install-check", "version": "1"}})
        if init.get("serverInfo", {}).get("name") != "gitward":
            fail(f"initialize answered {init}")
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names = {tool["name"] for tool in session.request("tools/list", {})["tools"]}
        if "repo_brief" not in names:
            fail(f"tools/list lacks repo_brief: {sorted(names)}")
        brief = session.request("tools/call", {
            "name": "repo_brief", "arguments": {"repoPath": repo}})
        if brief.get("isError"):
            fail(f"repo_brief failed: {brief}")
        text = json.dumps(brief.get("structuredContent", brief))
        if '"main"' not in text:
            fail(f"repo_brief does not name the branch main: {text[:2000]}")
        if specs:
            check_specs(session, specs, names, repo)
        session.close()
        print(f"mcp_session: ok ({len(names)} tools; {' '.join(command)})")


def check_specs(session, want, names, repo):
    if "create-proposal" not in names:
        fail(f"the spec tools are not listed: {sorted(names)}")
    result = session.request("tools/call", {
        "name": "create-proposal",
        "arguments": {"changeName": "add-install", "worktreeMode": "main"}})
    state = result.get("structuredContent") or {}
    errors = state.get("errors") or []
    if want == "works":
        if result.get("isError") or errors or state.get("status") == "failed":
            fail(f"create-proposal failed: {json.dumps(result)[:3000]}")
        if not os.path.isdir(os.path.join(repo, "openspec/changes/add-install")):
            fail("create-proposal made no change directory")
    elif want == "setup-hint":
        codes = [e.get("code") for e in errors]
        messages = " ".join(e.get("message", "") for e in errors)
        if "OPENSPEC_NOT_FOUND" not in codes or "gitward setup openspec" not in messages:
            fail(f"create-proposal did not say how to get OpenSpec: {json.dumps(result)[:3000]}")
    else:
        fail(f"unknown --specs={want}")


if __name__ == "__main__":
    main(sys.argv[1:])
