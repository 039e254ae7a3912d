// The TypeScript SDK client over Streamable HTTP, for the bridge's tests.
//
// usage: node bridge_client.mjs URL
// Connects with the sampling, elicitation and roots capabilities, calls the tool `round_trip`
// with a progress token, and prints one JSON list of everything it saw, in order:
// ["notification", method, params], ["progress", params], ["request", method, id, params]
// (each answered with a fixed result), then ["result", the tool's result].
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const seen = [];
const client = new Client(
  { name: "bridge-test", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {}, roots: {} } },
);
const answers = [
  [CreateMessageRequestSchema, { role: "assistant", content: { type: "text", text: "Hello" }, model: "m", stopReason: "endTurn" }],
  [ElicitRequestSchema, { action: "accept", content: { name: "Ada" } }],
  [ListRootsRequestSchema, { roots: [{ uri: "file:///work", name: "work" }] }],
];
for (const [schema, result] of answers) {
  client.setRequestHandler(schema, async (request, extra) => {
    seen.push(["request", request.method, extra.requestId, request.params]);
    return result;
  });
}
for (const schema of [LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema]) {
  client.setNotificationHandler(schema, async (notification) => {
    seen.push(["notification", notification.method, notification.params]);
  });
}
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const result = await client.callTool({ name: "round_trip", arguments: {} }, undefined, {
  onprogress: (progress) => seen.push(["progress", progress]),
});
seen.push(["result", result]);
await client.close();
process.stdout.write(JSON.stringify(seen));
