// Drives a real gitward binary with the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in package-lock.json).
//
// Usage: node ts_client.mjs PLAN_JSON
// PLAN_JSON: {bin, serverArgs, calls: [{name, arguments}], errors: [{name, arguments,
// expect}]}. Connects over stdio (the SDK's own transport and handshake), lists the tools,
// calls each of `calls` (the SDK validates every structured result against the tool's
// outputSchema and throws when it does not match), then each of `errors`, which must come
// back as isError results whose text carries `expect`. Schema warnings the SDK prints count
// as failures. Prints one JSON summary line on success; exits non-zero otherwise.

import { isDeepStrictEqual } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(process.argv[2]);
const warnings = [];
// The SDK's validator reports schema problems (an unknown `format`, …) on the console.
for (const level of ["warn", "error"]) {
  console[level] = (...args) => warnings.push(args.map(String).join(" "));
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

// The negotiated version is not exposed by the client; the transport is told it.
class Transport extends StdioClientTransport {
  setProtocolVersion(version) {
    this.negotiatedVersion = version;
  }
}
const transport = new Transport({
  command: plan.bin,
  args: plan.serverArgs,
  env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)),
  stderr: "ignore",
});
const client = new Client({ name: "gitward-interop-ts", version: "1.0.0" });
await client.connect(transport);
const summary = {
  protocolVersion: transport.negotiatedVersion ?? null,
  serverName: client.getServerVersion()?.name ?? null,
  instructions: client.getInstructions() ?? null,
  calls: {},
  errors: {},
};

const { tools } = await client.listTools();
summary.tools = tools.map((t) => t.name);
for (const tool of tools) {
  if (tool.inputSchema?.type !== "object") fail(`${tool.name}: inputSchema is not an object schema`);
  if (tool.outputSchema?.type !== "object") fail(`${tool.name}: outputSchema is not an object schema`);
}

for (const call of plan.calls) {
  let result;
  try {
    result = await client.callTool({ name: call.name, arguments: call.arguments });
  } catch (e) {
    fail(`${call.name}: the SDK refused the result: ${e.message}`);
  }
  const text = result.content?.[0]?.text;
  if (result.isError) fail(`${call.name} answered isError: ${text}`);
  if (result.structuredContent === undefined) fail(`${call.name}: no structuredContent`);
  if (text.startsWith("{") && !isDeepStrictEqual(JSON.parse(text), result.structuredContent)) {
    fail(`${call.name}: text and structuredContent differ`);
  }
  summary.calls[call.name] = "ok";
}

for (const call of plan.errors) {
  let result;
  try {
    result = await client.callTool({ name: call.name, arguments: call.arguments });
  } catch (e) {
    fail(`${call.name}: the SDK threw instead of returning the error result: ${e.message}`);
  }
  const text = result.content?.[0]?.text ?? "";
  if (result.isError !== true) fail(`${call.name}: expected isError, got ${JSON.stringify(result)}`);
  if (!text.includes(call.expect)) fail(`${call.name}: "${call.expect}" not in ${text}`);
  const payload = JSON.parse(text);
  summary.errors[call.name] = { code: payload.error.code, message: payload.error.message };
}

// An unknown tool is a JSON-RPC error, which the SDK throws.
try {
  await client.callTool({ name: "no.such.tool", arguments: {} });
  fail("an unknown tool was accepted");
} catch (e) {
  summary.unknownTool = e.code ?? String(e);
}

await client.close();
if (warnings.length > 0) fail(`the SDK warned:\n${warnings.slice(0, 5).join("\n")}\n(${warnings.length} in all)`);
process.stdout.write(`${JSON.stringify(summary)}\n`);
