// Proposes through a real gitward binary with the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in package-lock.json) and its elicitation handler.
//
// Usage: node ts_elicit.mjs PLAN_JSON
// PLAN_JSON: {bin, serverArgs, http?, answer: "accept"|"decline"|null, call: {name, arguments}}.
// `answer` null connects without the elicitation capability. With `http` (a URL) the SDK's
// Streamable HTTP transport is used instead of stdio. Prints one JSON line per event:
//   {"event":"result", ...}       the tool's answer and how long it took
//   {"event":"elicit", params}    the server asked (the handler answers `answer`)
//   {"event":"complete", params}  notifications/elicitation/complete arrived
// Without the capability, it waits for a line on stdin (the test has decided the proposal),
// then one more second, and prints {"event":"quiet", requests, notifications}: everything
// the server sent besides answers. Exits after "complete" or "quiet".

import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const fail = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};
setTimeout(() => fail("no end within 90 s"), 90_000).unref();

const capabilities = plan.answer ? { elicitation: { url: {} } } : {};
const client = new Client({ name: "elicit-check", version: "1.0.0" }, { capabilities });
const requests = [];
const notifications = [];
client.fallbackRequestHandler = async (request) => {
  requests.push(request);
  throw new Error(`unexpected request ${request.method}`);
};
client.fallbackNotificationHandler = async (notification) => {
  notifications.push(notification);
};
let completed;
const complete = new Promise((resolve) => (completed = resolve));
if (plan.answer) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    say({ event: "elicit", params: request.params });
    return { action: plan.answer };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed(notification.params);
  });
}

const transport = plan.http
  ? new StreamableHTTPClientTransport(new URL(plan.http))
  : new StdioClientTransport({
      command: plan.bin,
      args: plan.serverArgs,
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
});
if (plan.answer) {
  say({ event: "complete", params: await complete });
} else {
  const lines = createInterface({ input: process.stdin });
  await new Promise((resolve) => lines.once("line", resolve));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  say({ event: "quiet", requests, notifications });
}
await client.close();
process.exit(0);
