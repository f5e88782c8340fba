// Progress notifications to the official MCP TypeScript SDK client (@modelcontextprotocol/sdk,
// pinned in package-lock.json), over stdio or Streamable HTTP.
//
// Usage: node ts_progress.mjs PLAN_JSON
// PLAN_JSON: {transport: "stdio"|"http", bin, serverArgs, url, calls: [{name, arguments}]}.
// Calls each of `calls` twice: with an `onprogress` handler (the SDK sends a progressToken
// and routes each notification to the handler), then without one (no token). The SDK
// reports a notification it cannot route, such as one for an unknown token or one that
// arrives after its request was answered, through `onerror`; every such report is kept.
// Prints {progress: {name: [{progress, total, message}]}, errors: [...]} on success.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const transport =
  plan.transport === "http"
    ? new StreamableHTTPClientTransport(new URL(plan.url))
    : new StdioClientTransport({
        command: plan.bin,
        args: plan.serverArgs,
        env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)),
        stderr: "ignore",
      });
const client = new Client({ name: "gitward-progress-ts", version: "1.0.0" });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
await client.connect(transport);
await client.listTools();

const summary = { progress: {}, errors };
for (const call of plan.calls) {
  const seen = [];
  const result = await client.callTool({ name: call.name, arguments: call.arguments }, undefined, {
    onprogress: (p) => seen.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null }),
  });
  if (result.isError) {
    process.stderr.write(`${call.name} answered isError: ${result.content?.[0]?.text}\n`);
    process.exit(1);
  }
  summary.progress[call.name] = seen;
  const plain = await client.callTool({ name: call.name, arguments: call.arguments });
  if (plain.isError) {
    process.stderr.write(`${call.name} without a token answered isError\n`);
    process.exit(1);
  }
}
// A notification straggling after its answer would reach `onerror` while we still listen.
await client.ping();
if (plan.transport === "http") await transport.terminateSession();
await client.close();
process.stdout.write(`${JSON.stringify(summary)}\n`);
