// Drive an MCP server through the official TypeScript SDK client over stdio.
//
// usage: node ts_client.mjs '<JSON server command: [command, ...args]>' '<JSON steps: [[kind, params], ...]>'
// kinds: listTools, callTool, listResources, readResource, ping. Prints one JSON object:
// {serverVersion, capabilities, instructions, steps: [{ok: result} | {error: {code, message}}]}.
// The server inherits this process's environment and stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.argv[2]);
const steps = JSON.parse(process.argv[3]);

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "shipcode-mcp-tests", version: "1.0.0" });
await client.connect(transport);

const out = {
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  instructions: client.getInstructions() ?? null,
  steps: [],
};
const calls = {
  listTools: (params) => client.listTools(params),
  callTool: (params) => client.callTool(params),
  listResources: (params) => client.listResources(params),
  readResource: (params) => client.readResource(params),
  ping: () => client.ping(),
};
for (const [kind, params] of steps) {
  try {
    out.steps.push({ ok: await calls[kind](params ?? undefined) });
  } catch (error) {
    out.steps.push({ error: { code: error.code ?? null, message: String(error.message) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
