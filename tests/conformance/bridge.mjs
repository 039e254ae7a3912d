// A stdio MCP server served over Streamable HTTP on loopback, one server process per session.
//
//   node bridge.mjs [--max-sessions N] [--idle-seconds S] -- COMMAND [ARG...]
//
// Listens on 127.0.0.1 at a free port and prints its endpoint, http://127.0.0.1:PORT/mcp, as
// the first line on stdout. Each `initialize` without a session starts COMMAND; from then on
// every JSON-RPC message of that session passes through, one line of JSON each way: client
// requests, notifications and responses (to the server's sampling, elicitation and roots
// requests) go to the process's stdin; each line it writes on stdout goes back to the client.
// A response goes on the stream of its request. A progress notification goes on the stream of
// the request that carried its token; any other notification or server request goes on the
// stream of the session's one pending request, or on the session's GET stream when none or
// several are pending.
//
// Bounds: at most --max-sessions live sessions (default 32; 503 beyond); request bodies and
// output lines of at most 16 MiB; a session whose client holds no open HTTP request and awaits
// no answer is closed, 3 s after its client dropped its GET stream (as a closing client does)
// or after --idle-seconds (default 60) for a client that never opened one. Closing a session
// (also on DELETE, or when its process ends) answers each request still awaiting the process
// with -32000 "Bridge: <reason>", ends the process's stdin, and kills it if it has not exited
// 2 s later. The bridge stops when its stdin ends (its parent is gone) or on SIGTERM/SIGINT.
// Diagnostics go to stderr.

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { MAX_BYTES, admitted, readBody, refuse } from "./bridge_http.mjs";

const EXIT_GRACE_MS = 2000;
const STREAM_DROPPED_MS = 3000;

function parseArguments(argv) {
  const options = { maxSessions: 32, idleSeconds: 60 };
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) {
    throw new Error("usage: node bridge.mjs [--max-sessions N] [--idle-seconds S] -- COMMAND [ARG...]");
  }
  const flags = argv.slice(0, split);
  for (let i = 0; i < flags.length; i += 2) {
    const value = Number(flags[i + 1]);
    if (flags[i] === "--max-sessions" && Number.isInteger(value) && value > 0) options.maxSessions = value;
    else if (flags[i] === "--idle-seconds" && value > 0) options.idleSeconds = value;
    else throw new Error(`bad option ${flags[i]} ${flags[i + 1] ?? ""}`);
  }
  return { ...options, command: argv.slice(split + 1) };
}

const options = parseArguments(process.argv.slice(2));
const log = (text) => process.stderr.write(`bridge: ${text}\n`);
const idKey = (id) => JSON.stringify(id);
const sessions = new Set(); // every live session, initialized or not
const byId = new Map(); // session id -> session

/** One client session: its transport and its server process. */
class Session {
  constructor() {
    this.pending = new Map(); // idKey(request id) -> request id, for requests awaiting the server
    this.progressTokens = new Map(); // idKey(progress token) -> request id
    this.openRequests = 0; // HTTP requests of this session still open (GET stream included)
    this.lastActive = Date.now();
    this.hadStream = false; // whether the client opened its GET stream
    this.closed = false; // then the reason it closed
    this.outputChunks = [];
    this.outputBytes = 0;
    this.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => byId.set(id, this),
    });
    this.transport.onmessage = (message) => this.toServer(message);
    this.transport.onclose = () => this.close("closed by the client", true);
    this.transport.onerror = (error) => log(`session ${this.transport.sessionId}: ${error.message}`);
    const [program, ...args] = options.command;
    this.process = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
    this.process.on("error", (error) => this.close(`cannot start the server: ${error.message}`));
    this.process.on("exit", () => {
      this.exited = true;
    });
    // "close" comes once the process has exited and its stdout is read to the end.
    this.process.on("close", (code, signal) => this.close(`server exited (${signal ?? code})`));
    this.process.stdin.on("error", () => {}); // the exit handler reports a server that went away
    this.process.stdout.on("data", (chunk) => this.fromServer(chunk));
    sessions.add(this);
  }

  /** A client message: remember requests until answered, then pass the line on. */
  toServer(message) {
    if (this.closed) {
      if ("method" in message && "id" in message) this.answerClosed(message.id);
      return;
    }
    if ("method" in message && "id" in message) {
      this.pending.set(idKey(message.id), message.id);
      const token = message.params?._meta?.progressToken;
      if (token !== undefined) this.progressTokens.set(idKey(token), message.id);
    } else if (message.method === "notifications/cancelled") {
      this.settle(message.params?.requestId);
    }
    this.process.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Bytes from the server's stdout: split into lines, each one message. */
  fromServer(chunk) {
    let start = 0;
    let end = chunk.indexOf(10);
    while (end >= 0) {
      this.outputChunks.push(chunk.subarray(start, end));
      const line = Buffer.concat(this.outputChunks).toString("utf8");
      this.outputChunks = [];
      this.outputBytes = 0;
      this.forward(line);
      start = end + 1;
      end = chunk.indexOf(10, start);
    }
    this.outputChunks.push(chunk.subarray(start));
    this.outputBytes += chunk.length - start;
    if (this.outputBytes > MAX_BYTES) this.close("server wrote a line over 16 MiB");
  }

  forward(line) {
    if (this.closed || line.trim() === "") return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      log(`session ${this.transport.sessionId}: server wrote a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    let related;
    if (!("method" in message)) {
      this.settle(message.id); // a response: the transport sends it on its request's stream
    } else if (message.method === "notifications/progress") {
      related = this.progressTokens.get(idKey(message.params?.progressToken));
    }
    if (related === undefined && "method" in message && this.pending.size === 1) {
      related = this.pending.values().next().value;
    }
    this.transport
      .send(message, related === undefined ? undefined : { relatedRequestId: related })
      .catch((error) => log(`session ${this.transport.sessionId}: cannot deliver ${line.slice(0, 200)}: ${error.message}`));
  }

  settle(id) {
    if (this.pending.delete(idKey(id))) {
      for (const [token, request] of this.progressTokens) {
        if (idKey(request) === idKey(id)) this.progressTokens.delete(token);
      }
    }
  }

  /** Serve one HTTP request of this session, counting it open until its response ends. */
  async handle(request, response, body) {
    this.openRequests += 1;
    this.lastActive = Date.now();
    if (request.method === "GET") this.hadStream = true;
    response.on("close", () => {
      this.openRequests -= 1;
      this.lastActive = Date.now();
    });
    await this.transport.handleRequest(request, response, body);
  }

  /** Whether the client is gone: nothing open or pending, for a while (short once its GET stream is dropped). */
  idle(now) {
    const wait = this.hadStream ? STREAM_DROPPED_MS : options.idleSeconds * 1000;
    return this.openRequests === 0 && this.pending.size === 0 && now - this.lastActive > wait;
  }

  /** Answer a request the closed session's process will never answer. */
  answerClosed(id) {
    const answer = { jsonrpc: "2.0", id, error: { code: -32000, message: `Bridge: ${this.closed}` } };
    this.transport.send(answer).catch(() => {});
  }

  /**
   * End the session; each request still awaiting the server is answered with an error naming
   * the reason, which is logged too unless the end is a normal one (`quiet`).
   */
  close(reason, quiet = false) {
    if (this.closed) return;
    this.closed = reason;
    sessions.delete(this);
    byId.delete(this.transport.sessionId);
    if (!quiet || this.pending.size > 0) log(`session ${this.transport.sessionId}: ${reason}`);
    for (const id of this.pending.values()) this.answerClosed(id);
    this.pending.clear();
    this.process.stdin.end();
    if (!this.exited) setTimeout(() => this.process.kill("SIGKILL"), EXIT_GRACE_MS).unref();
    this.transport.close().catch(() => {});
  }
}

/** The request body parsed as JSON; undefined (after answering) when too large or not JSON. */
async function readMessage(request, response) {
  const text = await readBody(request, response);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    refuse(response, 400, "Parse error", null, -32700);
    return undefined;
  }
}

async function route(request, response, port) {
  if (!admitted(request, response, port)) return;
  let body;
  if (request.method === "POST") {
    body = await readMessage(request, response);
    if (body === undefined) return;
  }
  const sessionId = request.headers["mcp-session-id"];
  if (sessionId !== undefined) {
    const session = byId.get(sessionId);
    if (session === undefined) return refuse(response, 404, "Session not found");
    return session.handle(request, response, body);
  }
  if (request.method !== "POST" || !isInitializeRequest(body)) {
    return refuse(response, 400, "Bad Request: no valid session id");
  }
  if (sessions.size >= options.maxSessions) return refuse(response, 503, "Too many sessions");
  return new Session().handle(request, response, body);
}

let stopping = false;
function stop(server) {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  const processes = [...sessions].map((session) => session.process);
  for (const session of [...sessions]) session.close("the bridge is stopping", true);
  const exits = processes.map((child) =>
    child.exitCode !== null || child.signalCode !== null ? null : new Promise((done) => child.once("exit", done)),
  );
  Promise.all(exits).then(() => process.exit(0));
  setTimeout(() => process.exit(0), EXIT_GRACE_MS + 500).unref();
}

const server = createServer((request, response) => {
  route(request, response, server.address().port).catch((error) => {
    log(`${request.method} ${request.url}: ${error.stack ?? error}`);
    refuse(response, 500, "Internal server error");
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}/mcp\n`);
});
setInterval(() => {
  const now = Date.now();
  for (const session of [...sessions]) if (session.idle(now)) session.close("idle", true);
}, 500).unref();
process.stdin.on("end", () => stop(server));
process.stdin.on("error", () => stop(server));
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => stop(server));
