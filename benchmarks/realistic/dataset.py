"""The workload's data, generated the same on every run: products, users, carts, purchase histories and
popularity; and the two computations the API service answers with (search, a cart's price).

Every amount is in integer cents, every text is ASCII: the tools' answers are then the same bytes from a
Python server and from a Node one.
"""

from __future__ import annotations

import random

SEED = 27
PRODUCTS = 1000
USERS = 200
CATEGORIES = ("books", "electronics", "garden", "grocery", "kitchen", "music", "sports", "toys")
COLOURS = ("red", "blue", "green", "black", "white", "silver", "amber", "teal")
MATERIALS = ("steel", "oak", "cotton", "glass", "bamboo", "copper", "wool", "stone")
NOUNS = ("kettle", "lamp", "chair", "speaker", "notebook", "racket", "puzzle", "planter", "guitar", "blender")
TIERS = ("bronze", "silver", "gold")
#: Discount in percent by a user's tier.
TIER_DISCOUNT = {"bronze": 0, "silver": 5, "gold": 10}
#: Sales tax in basis points (8.25%), on the amount after discounts, rounded half up to the cent.
TAX_BASIS_POINTS = 825
#: Extra discount in percent on a cart line of at least BULK_QUANTITY items.
BULK_DISCOUNT = 5
BULK_QUANTITY = 3
SEARCH_LIMIT_MAX = 50


def products() -> list:
    """The catalogue: dicts with id (1..PRODUCTS), name, category, price_cents and stock, by id."""
    rng = random.Random(SEED)
    out = []
    for pid in range(1, PRODUCTS + 1):
        name = f"{rng.choice(COLOURS)} {rng.choice(MATERIALS)} {rng.choice(NOUNS)} {pid}"
        out.append(
            {
                "id": pid,
                "name": name,
                "category": rng.choice(CATEGORIES),
                "price_cents": rng.randrange(199, 50000),
                "stock": rng.randrange(0, 500),
            }
        )
    return out


def users() -> dict:
    """user id -> {"name", "tier"} (ids 1..USERS)."""
    rng = random.Random(SEED + 1)
    return {uid: {"name": f"user{uid}", "tier": rng.choice(TIERS)} for uid in range(1, USERS + 1)}


def carts() -> dict:
    """user id -> the cart: 1 to 5 lines of (product id, quantity), distinct products."""
    rng = random.Random(SEED + 2)
    return {
        uid: [(pid, rng.randrange(1, 6)) for pid in rng.sample(range(1, PRODUCTS + 1), rng.randrange(1, 6))]
        for uid in range(1, USERS + 1)
    }


def histories() -> dict:
    """user id -> product ids bought before, oldest first (0 to 12 of them; about a third from the user's cart)."""
    rng = random.Random(SEED + 3)
    out = {}
    for uid, lines in carts().items():
        bought = [rng.randrange(1, PRODUCTS + 1) for _ in range(rng.randrange(0, 13))]
        out[uid] = bought + [pid for pid, _ in lines if rng.randrange(3) == 0]
    return out


def popularity(catalogue: list) -> dict:
    """Sorted-set scores: "popular" (every product) and "popular:<category>" -> {product id: score}; scores are
    distinct, so the order is total."""
    rng = random.Random(SEED + 4)
    scores = rng.sample(range(1, 1_000_000), len(catalogue))
    sets: dict = {"popular": {}}
    for product, score in zip(catalogue, scores, strict=True):
        sets["popular"][product["id"]] = score
        sets.setdefault(f"popular:{product['category']}", {})[product["id"]] = score
    return sets


def search(catalogue: list, query: str, category: str, limit: int) -> dict:
    """``GET /products``: products whose name contains ``query`` (case-insensitive) in ``category`` (any when
    empty), by id, at most ``limit`` (clamped to 1..SEARCH_LIMIT_MAX); with the number of matches."""
    needle = query.lower()
    found = [p for p in catalogue if needle in p["name"] and (not category or p["category"] == category)]
    limit = min(max(limit, 1), SEARCH_LIMIT_MAX)
    return {"total": len(found), "items": found[:limit]}


def price_cart(by_id: dict, lines: list, tier: str) -> dict | None:
    """``POST /cart/calculate``: each line's price (a bulk discount on BULK_QUANTITY or more), the tier's
    discount, tax and total, all in cents; None when a product is unknown or a quantity is not positive."""
    priced, subtotal, discount = [], 0, 0
    for pid, quantity in lines:
        product = by_id.get(pid)
        if product is None or quantity < 1:
            return None
        amount = product["price_cents"] * quantity
        bulk = amount * BULK_DISCOUNT // 100 if quantity >= BULK_QUANTITY else 0
        priced.append({"product_id": pid, "quantity": quantity, "line_cents": amount - bulk})
        subtotal += amount
        discount += bulk
    discount += (subtotal - discount) * TIER_DISCOUNT.get(tier, 0) // 100
    taxable = subtotal - discount
    tax = (taxable * TAX_BASIS_POINTS + 5000) // 10000
    return {
        "lines": priced,
        "subtotal_cents": subtotal,
        "discount_cents": discount,
        "tax_cents": tax,
        "total_cents": taxable + tax,
    }
