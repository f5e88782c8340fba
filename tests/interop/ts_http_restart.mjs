// A session across a restart of `gitward serve --http`, with the official MCP TypeScript
// SDK's Streamable HTTP client (@modelcontextprotocol/sdk, pinned in package-lock.json).
//
// Usage: node ts_http_restart.mjs URL REPO_PATH
// Connects (initialize, a session) and calls repo_status, prints "ready", then waits for
// a line on stdin: meanwhile the server is restarted on the same address. Then it calls
// again in the same session, which the SDK throws on if the session is gone (404). Prints
// one JSON summary line on success; exits non-zero otherwise.

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, repo] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "gitward-restart-ts", version: "1.0.0" });
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
  `${JSON.stringify({ sameSession: transport.sessionId === before, repoPath, tools: tools.length })}\n`,
);
await client.close();
process.exit(0);
