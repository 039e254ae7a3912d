// Peer: the official MCP TypeScript SDK 2 (@modelcontextprotocol/server with @modelcontextprotocol/node),
// serving the benchmark catalogue's tools echo and add over Streamable HTTP on node:http.
//
// usage: node ts_sdk_http.mjs PORT   (run.py http copies it into benchmarks/.node/, beside the locked packages)
// Its stateless JSON configuration: createMcpHandler with a fresh low-level Server per request (the SDK's
// stateless idiom), responseMode "json", 2025-era requests served by its stateless legacy fallback.
import http from "node:http";
import { Server, createMcpHandler } from "@modelcontextprotocol/server";
import { toNodeHandler } from "@modelcontextprotocol/node";

const port = Number(process.argv[2]);
const TOOLS = [
  {
    name: "echo",
    description: "Echo back the given text",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
  },
  {
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
  },
];

function text(value, isError = false) {
  return { content: [{ type: "text", text: value }], isError };
}

function call(name, args) {
  if (name === "echo" && args && typeof args.text === "string" && Object.keys(args).length === 1) return text(args.text);
  if (name === "add" && args && Number.isFinite(args.a) && Number.isFinite(args.b) && Object.keys(args).length === 2)
    return text(String(args.a + args.b));
  return text(`Invalid arguments for ${name}`, true);
}

function factory() {
  const server = new Server({ name: "peer-ts-sdk-http", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", async () => ({ tools: TOOLS }));
  server.setRequestHandler("tools/call", async (request) => call(request.params.name, request.params.arguments));
  return server;
}

const handler = createMcpHandler(factory, { responseMode: "json", legacy: "stateless" });
const serve = toNodeHandler(handler);
const server = http.createServer((req, res) => {
  if (req.url === "/mcp") serve(req, res);
  else {
    res.writeHead(404);
    res.end();
  }
});
server.keepAliveTimeout = 60000;
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
