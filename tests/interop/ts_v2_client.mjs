// Drives gitward with the official TypeScript v2 client (@modelcontextprotocol/client,
// pinned in package-lock.json), over stdio or Streamable HTTP, in either era.
//
// Usage: node ts_v2_client.mjs (stdio BIN REPO | http URL REPO) (legacy | modern)
// Connects (legacy: initialize; modern: server/discover pinned to 2026-07-28), lists the
// tools, calls repo_status and repo.status (the listed name and the seed's) letting the
// client validate each structured result against the tool's outputSchema, and calls
// commit.details on a missing commit, which must come back as an isError result. Prints
// one JSON summary line on success; exits non-zero otherwise.

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [kind, target, repo, era] = process.argv.slice(2);
const transport =
  kind === "stdio"
    ? new StdioClientTransport({ command: target, args: ["--allowed-root", repo], stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: "gitward-interop-ts-v2", version: "1.0.0" },
  { versionNegotiation: { mode: era === "modern" ? { pin: "2026-07-28" } : "legacy" } },
);
await client.connect(transport);
const summary = { protocolVersion: client.getNegotiatedProtocolVersion(), calls: {} };
const { tools } = await client.listTools();
summary.tools = tools.map((t) => t.name);
for (const name of ["repo_status", "repo.status"]) {
  const result = await client.callTool({ name, arguments: { repoPath: repo } });
  if (result.isError) throw new Error(`${name} answered isError: ${result.content?.[0]?.text}`);
  summary.calls[name] = result.structuredContent.data.branch;
}
const failed = await client.callTool({
  name: "commit_details",
  arguments: { repoPath: repo, commit: "no-such-branch" },
});
summary.error = failed.isError ? failed.content?.[0]?.text : null;
await client.close();
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exit(0);
