// Drive an MCP server through the official TypeScript client 2.4 (@modelcontextprotocol/client) over stdio,
// or over Streamable HTTP when the first argument is the endpoint's URL.
//
// usage: node ts_era_client.mjs '<JSON server command: [command, ...args]> | <http://...>' '<JSON mode>' '<JSON steps>'
// mode: the client's versionNegotiation mode ("legacy", "auto" or {"pin": "2026-07-28"}); steps:
// [[kind, params, expectedNotifications], ...], kinds listTools, callTool, readResource, getPrompt
// (params as the MCP request's). The client declares elicitation and sampling: it answers an
// elicitation with {"name": "Ada"} when the message asks for a name, else {"color": "teal"}, and
// a sampling request with the text "Paris". It asks for log messages from info up, and for
// progress of each tool call. After each step it waits until it has got expectedNotifications
// notifications for that step (at most WAIT_LIMIT_MS, a guard that ends the session there).
// Prints one JSON object: {protocolVersion, serverInfo, steps: [{outcome: {ok} | {error: {code,
// message}}, asked: [[method, params], ...], notified: [[method, params], ...]}]}: the requests
// the client answered and the notifications it got during the step. The server inherits this
// process's environment and stderr.
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Events } from "../clients/ts_events.mjs";

const server = process.argv[2];
const mode = JSON.parse(process.argv[3]);
const steps = JSON.parse(process.argv[4]);
const WAIT_LIMIT_MS = 10000; // a guard against a hang, never a schedule

let asked = [];
const notified = new Events(WAIT_LIMIT_MS);
const notify = (method, params) => notified.record([method, params]);

const client = new Client(
  { name: "shipcode-mcp-tests", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode } },
);
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push([request.method, request.params]);
  const wantsName = request.params.message.includes("name");
  return { action: "accept", content: wantsName ? { name: "Ada" } : { color: "teal" } };
});
client.setRequestHandler("sampling/createMessage", async (request) => {
  asked.push([request.method, request.params]);
  return { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };
});

client.setNotificationHandler("notifications/message", (notification) => notify(notification.method, notification.params));
// Progress is recorded as it arrives: the client's own per-call onprogress may run after the call's
// answer has removed it, and so miss a progress notification that came just before the answer.
client.setNotificationHandler("notifications/progress", ({ method, params }) =>
  notify(method, { progress: params.progress, total: params.total }),
);

const transport = server.startsWith("http")
  ? new StreamableHTTPClientTransport(new URL(server))
  : (([command, ...args]) => new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" }))(
      JSON.parse(server),
    );
await client.connect(transport);
// Log messages from info up: in 2026-07-28 each request asks in its _meta, before it by logging/setLevel.
const modern = client.getNegotiatedProtocolVersion() === "2026-07-28";
if (!modern) await client.setLoggingLevel("info");
const logLevel = modern ? { _meta: { [LOG_LEVEL_META_KEY]: "info" } } : {};

const out = {
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  serverInfo: client.getServerVersion() ?? null,
  steps: [],
};
const calls = {
  listTools: () => client.listTools(),
  callTool: (params) =>
    client.callTool({ ...params, ...logLevel }, { onprogress: () => {} }), // onprogress: the call asks for progress
  readResource: (params) => client.readResource(params),
  getPrompt: (params) => client.getPrompt(params),
};
for (const [kind, params, expectedNotifications] of steps) {
  let outcome;
  try {
    outcome = { ok: await calls[kind](params) };
  } catch (error) {
    outcome = { error: { code: error.code ?? null, message: String(error.message) } };
  }
  const arrived = await notified.waitFor(expectedNotifications);
  out.steps.push({ outcome, asked, notified: notified.take() });
  asked = [];
  if (!arrived) break; // this step's comparison fails and shows what did arrive
}
await client.close();
process.stdout.write(JSON.stringify(out));
