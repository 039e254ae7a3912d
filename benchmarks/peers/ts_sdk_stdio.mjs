// Peer: the official MCP TypeScript SDK (@modelcontextprotocol/sdk) over stdio, serving the benchmark catalogue.
//
//   node ts_sdk_stdio.mjs              # low-level Server with request handlers
//   node ts_sdk_stdio.mjs --mcpserver  # high-level McpServer with zod-typed tools
//   ... --slow                        # also the slow workload's async `sleep` tool (awaits a timer)
//
// The SDK is looked up in benchmarks/.node/ (where run.py installs the benchmarks' locked Node project), or
// in the folder named by MCP_TS_SDK_DIR.
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = process.env.MCP_TS_SDK_DIR || path.join(here, "..", ".node");
const require = createRequire(path.join(base, "package.json"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);

const { StdioServerTransport } = await load("@modelcontextprotocol/sdk/server/stdio.js");

const ECHO_SCHEMA = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
};
const ADD_SCHEMA = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
  additionalProperties: false,
};
const SLEEP_SCHEMA = {
  type: "object",
  properties: { ms: { type: "integer" } },
  required: ["ms"],
  additionalProperties: false,
};
const SLEEP_DESCRIPTION = "Wait ms milliseconds, then answer ok";
const SLOW = process.argv.includes("--slow");
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const HELLO = { uri: "file:///hello.txt", name: "hello.txt", mimeType: "text/plain" };
const HELLO_TEXT = "Hello, world!";
const text = (t, isError = false) => (isError ? { content: [{ type: "text", text: t }], isError } : { content: [{ type: "text", text: t }] });
const isNum = (v) => typeof v === "number" && Number.isFinite(v);

async function lowLevel() {
  const { Server } = await load("@modelcontextprotocol/sdk/server/index.js");
  const types = await load("@modelcontextprotocol/sdk/types.js");
  const server = new Server(
    { name: "peer-ts-sdk", version: "1.0.0" },
    { capabilities: { tools: {}, resources: {} } },
  );
  const tools = [
    { name: "echo", description: "Echo back the given text", inputSchema: ECHO_SCHEMA },
    { name: "add", description: "Add two numbers", inputSchema: ADD_SCHEMA },
  ];
  if (SLOW) tools.push({ name: "sleep", description: SLEEP_DESCRIPTION, inputSchema: SLEEP_SCHEMA });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(types.CallToolRequestSchema, async (req) => {
    const { name } = req.params;
    const args = req.params.arguments ?? {};
    const keys = Object.keys(args);
    if (name === "echo") {
      return keys.length === 1 && typeof args.text === "string" ? text(args.text) : text("Invalid arguments for echo", true);
    }
    if (name === "sleep" && SLOW) {
      if (keys.length !== 1 || !Number.isInteger(args.ms) || args.ms < 0) return text("Invalid arguments for sleep", true);
      await wait(args.ms);
      return text("ok");
    }
    if (name === "add") {
      return keys.length === 2 && isNum(args.a) && isNum(args.b) ? text(String(args.a + args.b)) : text("Invalid arguments for add", true);
    }
    throw new types.McpError(types.ErrorCode.InvalidParams, "Unknown tool");
  });
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: [HELLO] }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (req) => {
    if (req.params.uri !== HELLO.uri) throw new types.McpError(-32002, "Resource not found");
    return { contents: [{ uri: HELLO.uri, mimeType: HELLO.mimeType, text: HELLO_TEXT }] };
  });
  return server;
}

async function highLevel() {
  const { McpServer } = await load("@modelcontextprotocol/sdk/server/mcp.js");
  const { z } = await load("zod");
  const server = new McpServer({ name: "peer-ts-sdk-mcpserver", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo back the given text", inputSchema: { text: z.string() } }, async ({ text: t }) => text(t));
  server.registerTool("add", { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => text(String(a + b)));
  if (SLOW) {
    server.registerTool("sleep", { description: SLEEP_DESCRIPTION, inputSchema: { ms: z.number().int() } }, async ({ ms }) => {
      await wait(ms);
      return text("ok");
    });
  }
  server.registerResource("hello.txt", HELLO.uri, { mimeType: HELLO.mimeType }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: HELLO.mimeType, text: HELLO_TEXT }],
  }));
  return server;
}

const server = process.argv.includes("--mcpserver") ? await highLevel() : await lowLevel();
await server.connect(new StdioServerTransport());
