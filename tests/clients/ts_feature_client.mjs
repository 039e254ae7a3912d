// Drive an MCP server's prompts, resource templates, completions and subscriptions through the
// official TypeScript SDK client over stdio.
//
// usage: node ts_feature_client.mjs '<JSON server command: [command, ...args]>' '<JSON steps>'
// steps: [[kind, params, expectedEvents], ...]; kinds: listPrompts, getPrompt, listResources,
// listResourceTemplates, readResource, complete, subscribe, unsubscribe, callTool (params as the
// MCP request's params). Every notifications/resources/updated is recorded as an event; after
// each step the client waits until it has seen expectedEvents events for that step (at most
// WAIT_LIMIT_MS, a guard that ends the session there). Prints one JSON object:
// {serverVersion, capabilities, instructions, steps: [{outcome: {ok} | {error}, events: [...]}]}.
// The server inherits this process's environment and stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Events } from "./ts_events.mjs";

const WAIT_LIMIT_MS = 10000; // a guard against a hang, never a schedule

const [command, ...args] = JSON.parse(process.argv[2]);
const steps = JSON.parse(process.argv[3]);

const events = new Events(WAIT_LIMIT_MS);

const client = new Client({ name: "shipcode-mcp-tests", version: "1.0.0" });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
  events.record({ method: notification.method, params: notification.params });
});

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
await client.connect(transport);

const out = {
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  instructions: client.getInstructions() ?? null,
  steps: [],
};
const calls = {
  listPrompts: () => client.listPrompts(),
  getPrompt: (params) => client.getPrompt(params),
  listResources: () => client.listResources(),
  listResourceTemplates: () => client.listResourceTemplates(),
  readResource: (params) => client.readResource(params),
  complete: (params) => client.complete(params),
  subscribe: (params) => client.subscribeResource(params),
  unsubscribe: (params) => client.unsubscribeResource(params),
  callTool: (params) => client.callTool(params),
};
for (const [kind, params, expectedEvents] of steps) {
  let outcome;
  try {
    outcome = { ok: await calls[kind](params ?? undefined) };
  } catch (error) {
    outcome = { error: { code: error.code ?? null, message: String(error.message) } };
  }
  const arrived = await events.waitFor(expectedEvents);
  out.steps.push({ outcome, events: events.take() });
  if (!arrived) break; // this step's comparison fails and shows what did arrive
}
await client.close();
process.stdout.write(JSON.stringify(out));
