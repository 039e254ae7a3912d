// k6 load of the workload: every iteration is one tool call, checked against the exact text answers.py
// computed for it.
//
// VARIANT=legacy: a whole 2025-era session per call, as clients of that era make it: initialize (2024-11-05),
//   notifications/initialized, tools/call, DELETE of the session.
// VARIANT=stateless: the 2026-07-28 equivalent, one POST per call (_meta and the Mcp-* headers, no session).
//
// Environment: MCP_URL, CASES (the JSON file of answers.py's cases), VARIANT, VUS, DURATION, SUMMARY (where the
// JSON summary is written).
import http from "k6/http";
import { check } from "k6";
import { SharedArray } from "k6/data";

const cases = new SharedArray("cases", () => JSON.parse(open(__ENV.CASES)));
const URL = __ENV.MCP_URL;
const LEGACY = "2024-11-05";
const MODERN = "2026-07-28";
const BASE = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const MAX_LOGGED = 3;
let logged = 0;

export const options = {
  scenarios: {
    load: { executor: "constant-vus", vus: Number(__ENV.VUS || 50), duration: __ENV.DURATION || "20s" },
  },
  summaryTrendStats: ["avg", "min", "med", "p(95)", "p(99)", "max"],
};

// The JSON-RPC message of an answer: the body, or the last data: line of an event stream.
function message(response) {
  const type = response.headers["Content-Type"] || "";
  let text = response.body || "";
  if (type.startsWith("text/event-stream")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:"));
    text = data.length ? data[data.length - 1].slice(5) : "";
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    return null;
  }
}

function answerText(response) {
  const answer = message(response);
  const content = answer && answer.result && !answer.result.isError ? answer.result.content : null;
  return content && content.length ? content[0].text : null;
}

function report(ok, step, response) {
  if (!ok && logged < MAX_LOGGED) {
    logged += 1;
    console.warn(`${step}: HTTP ${response.status} ${String(response.body).slice(0, 300)}`);
  }
  return ok;
}

function rpc(id, method, params) {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

function legacy(call) {
  const init = http.post(
    URL,
    rpc(1, "initialize", {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: "realistic-k6", version: "1.0.0" },
    }),
    { headers: BASE, tags: { step: "initialize" } },
  );
  const opened = message(init);
  const version = opened && opened.result ? opened.result.protocolVersion : null;
  report(check(init, { "initialize answered": () => init.status === 200 && version === LEGACY }), "initialize", init);
  const session = init.headers["Mcp-Session-Id"];
  const headers = Object.assign({ "MCP-Protocol-Version": LEGACY }, BASE);
  if (session) headers["Mcp-Session-Id"] = session;
  const note = http.post(URL, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {
    headers,
    tags: { step: "initialized" },
  });
  report(check(note, { "initialized accepted": (r) => r.status === 202 }), "initialized", note);
  const answer = http.post(URL, rpc(2, "tools/call", { name: call.tool, arguments: call.arguments }), {
    headers,
    tags: { step: "tools/call" },
  });
  report(check(answer, { "tool answer exact": (r) => r.status === 200 && answerText(r) === call.text }), call.tool, answer);
  const closed = http.del(URL, null, { headers, tags: { step: "delete" } });
  // A server that opened no session (a stateless legacy fallback) may refuse the DELETE with 405.
  const closedOk = (r) => (r.status >= 200 && r.status < 300) || (!session && r.status === 405);
  report(check(closed, { "session deleted": closedOk }), "delete", closed);
}

function stateless(call) {
  const params = {
    name: call.tool,
    arguments: call.arguments,
    _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} },
  };
  const headers = Object.assign({ "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": call.tool }, BASE);
  const answer = http.post(URL, rpc(1, "tools/call", params), { headers, tags: { step: "tools/call" } });
  report(check(answer, { "tool answer exact": (r) => r.status === 200 && answerText(r) === call.text }), call.tool, answer);
}

export default function () {
  const call = cases[((__VU - 1) * 37 + __ITER) % cases.length];
  if (__ENV.VARIANT === "stateless") stateless(call);
  else legacy(call);
}

export function handleSummary(data) {
  return { [__ENV.SUMMARY]: JSON.stringify(data) };
}
