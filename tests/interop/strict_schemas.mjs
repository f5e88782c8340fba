// Compiles every tool's inputSchema and outputSchema with Ajv in strict mode (JSON Schema
// draft 2020-12). Reads a tools/list result ({tools:[...]}) on stdin; prints one line per
// compiled schema and exits non-zero on the first schema Ajv refuses.
//
// `allowUnionTypes` admits `"type": ["string", "null"]`, standard JSON Schema that strict
// mode otherwise flags as a style choice; every other strict check stays on.
import Ajv2020 from "ajv/dist/2020.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { tools } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
if (!Array.isArray(tools) || tools.length === 0) {
  console.error("no tools to check");
  process.exit(2);
}
const warnings = [];
const logger = { log() {}, warn: (...a) => warnings.push(a.join(" ")), error: (...a) => warnings.push(a.join(" ")) };
let compiled = 0;
for (const tool of tools) {
  for (const key of ["inputSchema", "outputSchema"]) {
    const schema = tool[key];
    if (schema === undefined) continue;
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, logger });
    try {
      ajv.compile(schema);
    } catch (e) {
      console.error(`${tool.name} ${key}: ${e.message}`);
      process.exit(1);
    }
    if (warnings.length > 0) {
      console.error(`${tool.name} ${key}: ${warnings.join("; ")}`);
      process.exit(1);
    }
    console.log(`${tool.name} ${key}`);
    compiled += 1;
  }
}
