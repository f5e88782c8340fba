// A session across a restart of `gitward serve --http`, with the official MCP TypeScript
// v2 client (@modelcontextprotocol/client, pinned in package-lock.json) in legacy mode
// (initialize, Mcp-Session-Id).
//
// Usage: node ts_v2_http_restart.mjs URL REPO_PATH
// Connects and calls repo_status, prints "ready", then waits for a line on stdin:
// meanwhile the server is restarted on the same address. Then it calls again in the same
// session, which the client throws on if the session is gone (404). Prints one JSON
// summary line on success; exits non-zero otherwise.

import { createInterface } from "node:readline";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, repo] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client(
  { name: "gitward-restart-ts-v2", version: "1.0.0" },
  { versionNegotiation: { mode: "legacy" } },
);
await client.connect(transport);
const before = transport.sessionId;
const call = async () => {
  const result = await client.callTool({ name: "repo_status", arguments: { repoPath: repo } });
  if (result.isError) throw new Error(`repo_status answered isError: ${result.content?.[0]?.text}`);
  return result.structuredContent.repoPath;
};
await call();
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
const repoPath = await call();
const { tools } = await client.listTools();
process.stdout.write(
  `${JSON.stringify({
    sameSession: before !== undefined && transport.sessionId === before,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    repoPath,
    tools: tools.length,
  })}\n`,
);
await client.close();
process.exit(0);
