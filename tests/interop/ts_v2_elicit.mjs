// Proposes through a real gitward binary over stdio with the official MCP TypeScript v2
// client (@modelcontextprotocol/client, pinned in package-lock.json) pinned to the
// 2026-07-28 era, where a server asks the client inside the call (`input_required`) and
// the client answers through the same elicitation handler, then calls again.
//
// Usage: node ts_v2_elicit.mjs PLAN_JSON
// PLAN_JSON: {bin, answer: "accept"|"decline"|null, call: {name, arguments}}; `answer` null
// connects without the elicitation capability. Prints one JSON line per event:
//   {"event":"elicit", params}   the handler was asked (and answers `answer`)
//   {"event":"result", ...}      the tool's answer
// and exits after the result.

import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const plan = JSON.parse(process.argv[2]);
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
setTimeout(() => {
  process.stderr.write("no end within 60 s\n");
  process.exit(1);
}, 60_000).unref();

const client = new Client(
  { name: "elicit-check-v2", version: "1.0.0" },
  {
    capabilities: plan.answer ? { elicitation: { url: {} } } : {},
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  },
);
if (plan.answer) {
  client.setRequestHandler("elicitation/create", async (request) => {
    say({ event: "elicit", params: request.params });
    return { action: plan.answer };
  });
}
const transport = new StdioClientTransport({
  command: plan.bin,
  args: [],
  env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)),
  stderr: "ignore",
});
await client.connect(transport);
const started = performance.now();
const result = await client.callTool(plan.call);
say({
  event: "result",
  ms: performance.now() - started,
  isError: result.isError ?? false,
  structured: result.structuredContent,
  protocolVersion: client.getNegotiatedProtocolVersion(),
});
await client.close();
process.exit(0);
