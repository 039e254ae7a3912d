// Drive an MCP server through the official TypeScript client 2.4 (@modelcontextprotocol/client) over stdio.
//
// usage: node ts_era_client.mjs '<JSON server command: [command, ...args]>' '<JSON mode>' '<JSON steps>'
// mode: the client's versionNegotiation mode ("legacy", "auto" or {"pin": "2026-07-28"}); steps:
// [[kind, params], ...], kinds listTools, callTool, readResource, getPrompt (params as the MCP
// request's). The client declares elicitation and sampling: it answers an elicitation with
// {"name": "Ada"} when the message asks for a name, else {"color": "teal"}, and a sampling
// request with the text "Paris". Prints one JSON object: {protocolVersion, serverInfo,
// steps: [{outcome: {ok} | {error: {code, message}}, asked: [[method, params], ...]}]}, where
// asked lists the requests the client answered during the step. The server inherits this
// process's environment and stderr.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [command, ...args] = JSON.parse(process.argv[2]);
const mode = JSON.parse(process.argv[3]);
const steps = JSON.parse(process.argv[4]);

let asked = [];
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

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
await client.connect(transport);

const out = {
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  serverInfo: client.getServerVersion() ?? null,
  steps: [],
};
const calls = {
  listTools: () => client.listTools(),
  callTool: (params) => client.callTool(params),
  readResource: (params) => client.readResource(params),
  getPrompt: (params) => client.getPrompt(params),
};
for (const [kind, params] of steps) {
  let outcome;
  try {
    outcome = { ok: await calls[kind](params) };
  } catch (error) {
    outcome = { error: { code: error.code ?? null, message: String(error.message) } };
  }
  out.steps.push({ outcome, asked });
  asked = [];
}
await client.close();
process.stdout.write(JSON.stringify(out));
