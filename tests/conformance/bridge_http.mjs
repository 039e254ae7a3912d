// What the HTTP side of both bridges shares: loopback clients only, bounded bodies, JSON-RPC refusals.

/** The bound on a request body, and on a line the server writes. */
export const MAX_BYTES = 16 * 1024 * 1024;

/** Answer with an HTTP error status and a JSON-RPC error (`id` null unless the request's is known). */
export function refuse(response, status, message, id = null, code = -32000) {
  if (response.headersSent) return response.end();
  response.writeHead(status, { "Content-Type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
}

/** The request body as text; undefined (after answering 413) when over MAX_BYTES. */
export async function readBody(request, response) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size <= MAX_BYTES) chunks.push(chunk); // past the bound: read on, keep nothing
  }
  if (size > MAX_BYTES) {
    refuse(response, 413, "Request body over 16 MiB");
    return undefined;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Whether the request is one for this loopback endpoint: its Host is it and its Origin, if any,
 * too (what stops a DNS-rebinding page); otherwise it is answered 403. Then whether its path is
 * /mcp (otherwise 404).
 */
export function admitted(request, response, port) {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  const origin = request.headers.origin;
  if (!hosts.includes(request.headers.host) || (origin !== undefined && !hosts.some((h) => origin === `http://${h}`))) {
    refuse(response, 403, "Forbidden: loopback clients only");
    return false;
  }
  if (new URL(request.url, "http://127.0.0.1").pathname !== "/mcp") {
    refuse(response, 404, "Not found");
    return false;
  }
  return true;
}
