"""The workload's three tools: plain async functions taking the clients (see tool_clients.py), served unchanged by
every Python server of the benchmark (server_node.mjs is their Node twin).

Each answers a compact JSON text that depends only on the seeded data, never on what earlier calls wrote,
so that every answer can be checked (answers.py computes them from the data alone).
"""

from __future__ import annotations

import json

from dataset import TIER_DISCOUNT

#: Calls a user may make before being refused; far above what a run makes, so no answer depends on timing.
RATE_LIMIT = 1_000_000_000
POPULAR_TOP = 10
ALSO_POPULAR = 3
RECENT_KEPT = 50


def _text(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))


async def _over_limit(redis, user_id: int) -> bool:
    return await redis.incr(f"ratelimit:{user_id}") > RATE_LIMIT


async def search_products(clients, user_id: int, query: str, category: str = "", limit: int = 5) -> str:
    """Search the catalogue; flag the results among the POPULAR_TOP most popular products."""
    redis = clients.redis
    if await _over_limit(redis, user_id):
        return _text({"error": "rate limited"})
    found = await clients.api.get_json("/products", {"q": query, "category": category, "limit": limit})
    popular = {int(pid) for pid in await redis.zrevrange("popular", 0, POPULAR_TOP - 1)}
    items = [
        {"id": p["id"], "name": p["name"], "price_cents": p["price_cents"], "popular": p["id"] in popular}
        for p in found["items"]
    ]
    return _text({"query": query, "category": category, "total": found["total"], "items": items})


async def get_product(clients, user_id: int, product_id: int) -> str:
    """A product with the user's member price and the category's most popular others; records the view."""
    redis = clients.redis
    if await _over_limit(redis, user_id):
        return _text({"error": "rate limited"})
    product = await clients.api.get_json(f"/products/{product_id}", None)
    if product is None:
        return _text({"error": "product not found", "product_id": product_id})
    user = await redis.hgetall(f"user:{user_id}")
    tier = user.get(b"tier", b"bronze").decode()
    top = await redis.zrevrange(f"popular:{product['category']}", 0, ALSO_POPULAR)
    also = [int(pid) for pid in top if int(pid) != product_id][:ALSO_POPULAR]
    await redis.rpush(f"recent:{user_id}", product_id)
    await redis.ltrim(f"recent:{user_id}", -RECENT_KEPT, -1)
    await redis.zincrby("views", 1, product_id)
    return _text(
        {
            "id": product["id"],
            "name": product["name"],
            "category": product["category"],
            "price_cents": product["price_cents"],
            "member_price_cents": product["price_cents"] * (100 - TIER_DISCOUNT.get(tier, 0)) // 100,
            "in_stock": product["stock"] > 0,
            "also_popular": also,
        }
    )


async def calculate_cart(clients, user_id: int) -> str:
    """Price the user's cart at their tier; name the products in it they bought before; record the total."""
    redis = clients.redis
    if await _over_limit(redis, user_id):
        return _text({"error": "rate limited"})
    lines = [entry.decode().split(":") for entry in await redis.lrange(f"cart:{user_id}", 0, -1)]
    user = await redis.hgetall(f"user:{user_id}")
    tier = user.get(b"tier", b"bronze").decode()
    bought = {int(pid) for pid in await redis.lrange(f"history:{user_id}", 0, -1)}
    order = {"tier": tier, "items": [{"product_id": int(pid), "quantity": int(qty)} for pid, qty in lines]}
    priced = await clients.api.post_json("/cart/calculate", order)
    await redis.zadd("cart_totals", {str(user_id): priced["total_cents"]})
    return _text(
        {
            "user_id": user_id,
            "tier": tier,
            "lines": len(lines),
            "subtotal_cents": priced["subtotal_cents"],
            "discount_cents": priced["discount_cents"],
            "tax_cents": priced["tax_cents"],
            "total_cents": priced["total_cents"],
            "bought_before": sorted(int(pid) for pid, _ in lines if int(pid) in bought),
        }
    )
