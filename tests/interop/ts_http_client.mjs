// Drives `gitward serve --http` with the official MCP TypeScript SDK's Streamable HTTP
// client (@modelcontextprotocol/sdk, pinned in package-lock.json).
//
// Usage: node ts_http_client.mjs URL REPO_PATH
// Connects (initialize, a session), lists the tools, calls repo.status (a git tool) and
// explore (a spec tool, served because URL carries a workspace capability); the SDK
// validates each structured result against the tool's outputSchema. Ends the session with
// DELETE. Prints one JSON summary line on success; exits non-zero otherwise.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, repo] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "gitward-interop-ts-http", version: "1.0.0" });
await client.connect(transport);
const summary = { sessionId: transport.sessionId !== undefined, calls: {} };
const { tools } = await client.listTools();
summary.tools = tools.map((t) => t.name).sort();
for (const [name, args] of [["repo.status", { repoPath: repo }], ["explore", {}]]) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    process.stderr.write(`${name} answered isError: ${result.content?.[0]?.text}\n`);
    process.exit(1);
  }
  summary.calls[name] = Object.keys(result.structuredContent ?? {}).sort();
}
await transport.terminateSession();
await client.close();
process.stdout.write(`${JSON.stringify(summary)}\n`);
