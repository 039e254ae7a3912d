// Drive an MCP server whose tools talk back (sampling, elicitation, roots, logging, progress)
// through the official TypeScript SDK client over stdio.
//
// usage: node ts_context_client.mjs '<JSON server command: [command, ...args]>' '<JSON plan>'
// plan: {callbacks: bool, answers: {method: [{result} | {error: {code, message}}, ...]},
//        steps: [[kind, params, expectedEvents], ...]}
// kinds: listTools, callTool, callToolWithProgress, setLevel (params: the level), ping.
// With callbacks, the client declares sampling, elicitation and roots, and answers the
// server's requests of each method with the next scripted answer. It records those requests,
// every log message and every progress notification (with its token) as events; after each
// step it waits until it has seen expectedEvents events for that step (at most WAIT_LIMIT_MS,
// a guard that ends the session there). Prints one JSON object:
// {serverVersion, capabilities, instructions, steps: [{outcome: {ok} | {error}, events: [...]}]}.
// The server inherits this process's environment and stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Events } from "./ts_events.mjs";

const WAIT_LIMIT_MS = 10000; // a guard against a hang, never a schedule

const [command, ...args] = JSON.parse(process.argv[2]);
const plan = JSON.parse(process.argv[3]);

const events = new Events(WAIT_LIMIT_MS);

const capabilities = plan.callbacks ? { sampling: {}, elicitation: {}, roots: { listChanged: true } } : {};
const client = new Client({ name: "shipcode-mcp-tests", version: "1.0.0" }, { capabilities });

function answer(method) {
  return async (request, extra) => {
    events.record({ request: method, id: extra.requestId, params: request.params ?? null });
    const next = plan.answers[method].shift();
    if (next.error) {
      // A plain Error with a code: the SDK sends its code and message as they are.
      throw Object.assign(new Error(next.error.message), { code: next.error.code });
    }
    return next.result;
  };
}
if (plan.callbacks) {
  client.setRequestHandler(CreateMessageRequestSchema, answer("sampling/createMessage"));
  client.setRequestHandler(ElicitRequestSchema, answer("elicitation/create"));
  client.setRequestHandler(ListRootsRequestSchema, answer("roots/list"));
}
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  events.record({ log: notification.params });
});
// The SDK's own progress handler drops a progress notification that arrives in the same read
// as the request's answer (it runs one microtask later, after the answer retired the token:
// typescript-sdk issue 2580), and a server writes both together when the work is quick. So
// the progress notifications are recorded here, whole, in the order they arrive; callTool's
// onprogress option still makes the SDK send the progress token.
client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
  events.record({ progress: notification.params });
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
  listTools: (params) => client.listTools(params),
  callTool: (params) => client.callTool(params),
  callToolWithProgress: (params) =>
    client.callTool(params, CallToolResultSchema, { onprogress: () => {} }),
  setLevel: (level) => client.setLoggingLevel(level),
  ping: () => client.ping(),
};
for (const [kind, params, expectedEvents] of plan.steps) {
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
