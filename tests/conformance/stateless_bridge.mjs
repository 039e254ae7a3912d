// A stdio MCP server served over the stateless Streamable HTTP of protocol 2026-07-28, on loopback.
//
//   node stateless_bridge.mjs [--max-waiting N] -- COMMAND [ARG...]
//
// Listens on 127.0.0.1 at a free port and prints its endpoint, http://127.0.0.1:PORT/mcp, as
// the first line on stdout. One COMMAND process, started at once, serves every HTTP request:
// each POST body goes to its stdin as one line, unchanged, and the lines it writes on stdout
// come back unchanged.
//
// - A request is forwarded once the one before it is answered (at most --max-waiting, default
//   64, wait their turn; 503 beyond). Every notification the server writes between forwarding
//   a request and its answer belongs to that request (its progress, its log messages): they
//   open an SSE stream, the answer ends it. An answer with no notification before it goes back
//   as one application/json body, its status taken from its error code as the transport
//   prescribes: 400 for -32700, -32600, -32602, -32020, -32021 and -32022, 404 for -32601,
//   200 otherwise. A client that accepts no text/event-stream gets the answer alone.
// - `subscriptions/listen` is forwarded at once and stays open as an SSE stream: it carries
//   every notification whose `_meta["io.modelcontextprotocol/subscriptionId"]` is its id, and
//   ends with the server's answer to it or its `notifications/cancelled` for it.
// - A client that closes its response before the answer cancels the request: the server gets
//   `notifications/cancelled` for its id, a late answer is dropped, and the next request goes.
// - A notification is forwarded and answered 202. A body that is not one JSON-RPC request or
//   notification is answered 400; GET and DELETE 405; anything but /mcp 404; a Host or Origin
//   that is not this loopback endpoint 403. A request whose id is that of an open listen stream
//   is answered 409: on the server's one stdio channel the id would be ambiguous.
//
// Bounds: bodies and output lines of at most 16 MiB, at most 32 listen streams. The bridge
// stops when its stdin ends (its parent is gone) or on SIGTERM/SIGINT, and when the server
// exits (each open request is then answered 502). Diagnostics go to stderr.

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { MAX_BYTES, admitted, readBody, refuse } from "./bridge_http.mjs";

const MAX_LISTENS = 32;
const MAX_DROPPED = 1024; // ids of cancelled requests whose late answers are still dropped
const EXIT_GRACE_MS = 2000;
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const STATUS = new Map([
  [-32700, 400],
  [-32600, 400],
  [-32602, 400],
  [-32020, 400],
  [-32021, 400],
  [-32022, 400],
  [-32601, 404],
]);

function parseArguments(argv) {
  const options = { maxWaiting: 64 };
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) {
    throw new Error("usage: node stateless_bridge.mjs [--max-waiting N] -- COMMAND [ARG...]");
  }
  const flags = argv.slice(0, split);
  for (let i = 0; i < flags.length; i += 2) {
    const value = Number(flags[i + 1]);
    if (flags[i] === "--max-waiting" && Number.isInteger(value) && value > 0) options.maxWaiting = value;
    else throw new Error(`bad option ${flags[i]} ${flags[i + 1] ?? ""}`);
  }
  return { ...options, command: argv.slice(split + 1) };
}

const options = parseArguments(process.argv.slice(2));
const log = (text) => process.stderr.write(`stateless bridge: ${text}\n`);
const idKey = (id) => JSON.stringify(id);

/** One HTTP request awaiting the server: the lines that belong to it go back on its response. */
class Exchange {
  constructor(request, response, message, line) {
    this.id = message.id;
    this.key = idKey(message.id);
    this.method = message.method;
    this.line = line;
    this.response = response;
    this.streams = (request.headers.accept ?? "").includes("text/event-stream");
    this.streaming = false;
    this.done = false;
  }

  /** A notification of this request: an SSE event, opening the stream on the first. */
  event(line) {
    if (this.done || !this.streams) return;
    if (!this.streaming) {
      this.streaming = true;
      this.response.writeHead(200, {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
      });
    }
    this.response.write(`event: message\ndata: ${line}\n\n`);
  }

  /** The server's answer: the stream's last event, or the whole body. */
  answer(message, line) {
    if (this.done) return;
    this.done = true;
    if (this.streaming) {
      this.response.end(`event: message\ndata: ${line}\n\n`);
      return;
    }
    const status = (message.error && STATUS.get(message.error.code)) || 200;
    this.response.writeHead(status, { "Content-Type": "application/json" });
    this.response.end(line);
  }

  /** End the stream (or answer with an HTTP error when nothing was sent yet). */
  close(status, text) {
    if (this.done) return;
    this.done = true;
    if (this.streaming) this.response.end();
    else refuse(this.response, status, text, this.id);
  }
}

const waiting = []; // ordinary requests, in arrival order
let current = null; // the ordinary request the server is working on
const listens = new Map(); // idKey -> Exchange of an open subscriptions/listen stream
const dropped = new Set(); // idKeys of cancelled requests
let stopping = false;

const [program, ...args] = options.command;
const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
child.on("error", (error) => stop(`cannot start the server: ${error.message}`, 1));
child.on("close", (code, signal) => stop(`server exited (${signal ?? code})`, stopping ? 0 : 1));
child.stdin.on("error", () => {}); // the close handler reports a server that went away

let chunks = [];
let pendingBytes = 0;
child.stdout.on("data", (chunk) => {
  let start = 0;
  let end = chunk.indexOf(10);
  while (end >= 0) {
    chunks.push(chunk.subarray(start, end));
    const line = Buffer.concat(chunks).toString("utf8");
    chunks = [];
    pendingBytes = 0;
    if (line.trim() !== "") route(line);
    start = end + 1;
    end = chunk.indexOf(10, start);
  }
  chunks.push(chunk.subarray(start));
  pendingBytes += chunk.length - start;
  if (pendingBytes > MAX_BYTES) stop("server wrote a line over 16 MiB", 1);
});

function send(line) {
  child.stdin.write(`${line}\n`);
}

/** One line from the server, to the request it belongs to. */
function route(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    log(`server wrote a line that is not JSON: ${line.slice(0, 200)}`);
    return;
  }
  if (message === null || typeof message !== "object") {
    log(`server wrote a line that is not a message: ${line.slice(0, 200)}`);
    return;
  }
  if (!("method" in message)) {
    const key = idKey(message.id);
    if (current !== null && current.key === key) {
      current.answer(message, line);
      current = null;
      next();
    } else if (listens.has(key)) {
      listens.get(key).answer(message, line);
      listens.delete(key);
    } else if (!dropped.delete(key)) {
      log(`an answer to no open request: ${line.slice(0, 200)}`);
    }
    return;
  }
  const subscription = message.params?._meta?.[SUBSCRIPTION_ID];
  if (subscription !== undefined) {
    listens.get(idKey(subscription))?.event(line); // none: a stream the client has closed
    return;
  }
  if (message.method === "notifications/cancelled" && listens.has(idKey(message.params?.requestId))) {
    const key = idKey(message.params.requestId);
    listens.get(key).close(502, "Bridge: the server ended the subscription");
    listens.delete(key);
    return;
  }
  if (current !== null) current.event(line);
  else log(`a message for no open request: ${line.slice(0, 200)}`);
}

/** Forward the next waiting request whose client is still there. */
function next() {
  while (current === null && waiting.length > 0) {
    const exchange = waiting.shift();
    if (exchange.done) continue;
    current = exchange;
    send(exchange.line);
  }
}

/** The client closed its response early: cancel the request on the server, drop its late answer. */
function abandon(exchange) {
  if (exchange.done) return;
  exchange.done = true;
  if (listens.get(exchange.key) === exchange) listens.delete(exchange.key);
  else if (current !== exchange) return; // still waiting: next() skips it
  else current = null;
  if (dropped.size >= MAX_DROPPED) dropped.delete(dropped.values().next().value);
  dropped.add(exchange.key);
  const reason = "The client closed the response";
  send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: exchange.id, reason } }));
  next();
}

async function handle(request, response, port) {
  if (!admitted(request, response, port)) return;
  if (request.method !== "POST") {
    response.setHeader("Allow", "POST");
    return refuse(response, 405, "Method not allowed: POST only");
  }
  const text = await readBody(request, response);
  if (text === undefined) return;
  let message;
  try {
    message = JSON.parse(text);
  } catch {
    return refuse(response, 400, "Parse error", null, -32700);
  }
  if (message === null || typeof message !== "object" || Array.isArray(message) || typeof message.method !== "string") {
    return refuse(response, 400, "Invalid Request: one JSON-RPC request or notification per POST", null, -32600);
  }
  const line = text.replace(/[\r\n]+/g, " "); // in JSON a line break is only ever whitespace
  if (!("id" in message)) {
    send(line);
    response.writeHead(202).end();
    return;
  }
  const exchange = new Exchange(request, response, message, line);
  if (listens.has(exchange.key)) return refuse(response, 409, "The id of an open subscriptions/listen stream", message.id);
  response.on("close", () => abandon(exchange));
  if (message.method === "subscriptions/listen") {
    if (current !== null && current.key === exchange.key) {
      return refuse(response, 409, "The id of the request being served", message.id);
    }
    if (listens.size >= MAX_LISTENS) return refuse(response, 503, "Too many listen streams", message.id);
    listens.set(exchange.key, exchange);
    send(line);
    return;
  }
  if (waiting.length >= options.maxWaiting) return refuse(response, 503, "Too many waiting requests", message.id);
  waiting.push(exchange);
  next();
}

function stop(reason, code = 0) {
  if (stopping && code === 0) return;
  if (!stopping) log(reason);
  stopping = true;
  for (const exchange of [current, ...waiting, ...listens.values()]) {
    exchange?.close(502, `Bridge: ${reason}`);
  }
  current = null;
  waiting.length = 0;
  listens.clear();
  server.close();
  server.closeAllConnections();
  child.stdin.end();
  if (child.exitCode === null && child.signalCode === null) {
    setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_MS).unref();
    child.once("exit", () => process.exit(code));
  } else {
    process.exit(code);
  }
}

const server = createServer((request, response) => {
  handle(request, response, server.address().port).catch((error) => {
    log(`${request.method} ${request.url}: ${error.stack ?? error}`);
    refuse(response, 500, "Internal server error");
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.stdin.on("end", () => stop("stdin ended"));
process.stdin.on("error", () => stop("stdin failed"));
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => stop(signal));
