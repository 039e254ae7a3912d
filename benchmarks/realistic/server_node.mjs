// The official MCP TypeScript SDK 2 (@modelcontextprotocol/server, @modelcontextprotocol/node) serving the
// workload's tools: the same logic as tools.py, with node-redis and fetch, answering the same JSON texts.
//
// usage: node server_node.mjs PORT [WORKERS]   (run.py realistic copies it into benchmarks/.node/)
// Served as the SDK's serving guide does: createMcpHandler with a low-level Server per request (2026-07-28
// requests, and 2025-era ones through its stateless legacy fallback) on node:http, behind its localhost Host
// and Origin guards; WORKERS processes (default 2) share the port through node:cluster.
import cluster from "node:cluster";
import http from "node:http";
import { Server, createMcpHandler } from "@modelcontextprotocol/server";
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from "@modelcontextprotocol/node";
import { createClient } from "redis";

const port = Number(process.argv[2]);
const workers = Number(process.argv[3] || 2);
const RATE_LIMIT = 1_000_000_000;
const POPULAR_TOP = 10;
const ALSO_POPULAR = 3;
const RECENT_KEPT = 50;
const TIER_DISCOUNT = { bronze: 0, silver: 5, gold: 10 };
const API = process.env.REALISTIC_API_URL;

const int = { type: "integer" };
const TOOLS = [
  {
    name: "search_products",
    description: "Search the product catalogue by name and category; flags the most popular results",
    inputSchema: {
      type: "object",
      properties: { user_id: int, query: { type: "string" }, category: { type: "string" }, limit: int },
      required: ["user_id", "query"],
    },
  },
  {
    name: "get_product",
    description: "Get a product with the user's member price and popular products of its category",
    inputSchema: { type: "object", properties: { user_id: int, product_id: int }, required: ["user_id", "product_id"] },
  },
  {
    name: "calculate_cart",
    description: "Price the user's cart: discounts, tax and total, in cents",
    inputSchema: { type: "object", properties: { user_id: int }, required: ["user_id"] },
  },
];

let redis;

async function overLimit(userId) {
  return (await redis.incr(`ratelimit:${userId}`)) > RATE_LIMIT;
}

async function apiJson(path, init) {
  const response = await fetch(API + path, init);
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`API ${path}: HTTP ${response.status}`);
  return response.json();
}

async function searchProducts({ user_id, query, category = "", limit = 5 }) {
  if (await overLimit(user_id)) return { error: "rate limited" };
  const params = new URLSearchParams({ q: query, category, limit: String(limit) });
  const found = await apiJson(`/products?${params}`);
  const popular = new Set((await redis.zRange("popular", 0, POPULAR_TOP - 1, { REV: true })).map(Number));
  const items = found.items.map((p) => ({ id: p.id, name: p.name, price_cents: p.price_cents, popular: popular.has(p.id) }));
  return { query, category, total: found.total, items };
}

async function getProduct({ user_id, product_id }) {
  if (await overLimit(user_id)) return { error: "rate limited" };
  const product = await apiJson(`/products/${product_id}`);
  if (product === null) return { error: "product not found", product_id };
  const user = await redis.hGetAll(`user:${user_id}`);
  const tier = user.tier ?? "bronze";
  const top = await redis.zRange(`popular:${product.category}`, 0, ALSO_POPULAR, { REV: true });
  const also = top.map(Number).filter((pid) => pid !== product_id).slice(0, ALSO_POPULAR);
  await redis.rPush(`recent:${user_id}`, String(product_id));
  await redis.lTrim(`recent:${user_id}`, -RECENT_KEPT, -1);
  await redis.zIncrBy("views", 1, String(product_id));
  return {
    id: product.id,
    name: product.name,
    category: product.category,
    price_cents: product.price_cents,
    member_price_cents: Math.floor((product.price_cents * (100 - (TIER_DISCOUNT[tier] ?? 0))) / 100),
    in_stock: product.stock > 0,
    also_popular: also,
  };
}

async function calculateCart({ user_id }) {
  if (await overLimit(user_id)) return { error: "rate limited" };
  const lines = (await redis.lRange(`cart:${user_id}`, 0, -1)).map((entry) => entry.split(":").map(Number));
  const user = await redis.hGetAll(`user:${user_id}`);
  const tier = user.tier ?? "bronze";
  const bought = new Set((await redis.lRange(`history:${user_id}`, 0, -1)).map(Number));
  const order = { tier, items: lines.map(([pid, qty]) => ({ product_id: pid, quantity: qty })) };
  const priced = await apiJson("/cart/calculate", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(order),
  });
  await redis.zAdd("cart_totals", { score: priced.total_cents, value: String(user_id) });
  return {
    user_id,
    tier,
    lines: lines.length,
    subtotal_cents: priced.subtotal_cents,
    discount_cents: priced.discount_cents,
    tax_cents: priced.tax_cents,
    total_cents: priced.total_cents,
    bought_before: lines.map(([pid]) => pid).filter((pid) => bought.has(pid)).sort((a, b) => a - b),
  };
}

const CALLS = { search_products: searchProducts, get_product: getProduct, calculate_cart: calculateCart };

async function call(name, args) {
  const tool = CALLS[name];
  if (!tool || !args || !Number.isInteger(args.user_id)) {
    return { content: [{ type: "text", text: `Invalid arguments for ${name}` }], isError: true };
  }
  return { content: [{ type: "text", text: JSON.stringify(await tool(args)) }] };
}

function factory() {
  const server = new Server({ name: "realistic-ts-sdk", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", async () => ({ tools: TOOLS }));
  server.setRequestHandler("tools/call", async (request) => call(request.params.name, request.params.arguments));
  return server;
}

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on("SIGTERM", () => {
    for (const worker of Object.values(cluster.workers)) worker.kill("SIGTERM");
    process.exit(0);
  });
} else {
  redis = createClient({ url: process.env.REALISTIC_REDIS_URL });
  await redis.connect();
  const serve = toNodeHandler(createMcpHandler(factory));
  const validateHost = localhostHostValidation();
  const validateOrigin = localhostOriginValidation();
  const server = http.createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    if (req.url === "/mcp") serve(req, res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  server.keepAliveTimeout = 60000;
  server.listen(port, "127.0.0.1");
  process.on("SIGTERM", () => process.exit(0));
}
