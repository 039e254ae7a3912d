"""The calls the load makes and the exact text each must answer, computed from the seeded data alone (never
by asking a server, Redis or the API service): the oracle every server's answers are checked against."""

from __future__ import annotations

import json
import random

import dataset
import tools

#: Calls in the case list the load cycles through (a third of each tool, interleaved).
CASES = 300
QUERY_WORDS = dataset.COLOURS + dataset.MATERIALS + dataset.NOUNS + ("1", "42", "zebra")


class Oracle:
    """What each tool must answer, from the data the store and the API service were given."""

    def __init__(self) -> None:
        self.catalogue = dataset.products()
        self.by_id = {p["id"]: p for p in self.catalogue}
        self.users = dataset.users()
        self.carts = dataset.carts()
        self.histories = dataset.histories()
        self.ranked = {
            key: sorted(scores, key=scores.__getitem__, reverse=True)
            for key, scores in dataset.popularity(self.catalogue).items()
        }

    def search_products(self, user_id: int, query: str, category: str = "", limit: int = 5) -> dict:
        found = dataset.search(self.catalogue, query, category, limit)
        popular = set(self.ranked["popular"][: tools.POPULAR_TOP])
        items = [
            {"id": p["id"], "name": p["name"], "price_cents": p["price_cents"], "popular": p["id"] in popular}
            for p in found["items"]
        ]
        return {"query": query, "category": category, "total": found["total"], "items": items}

    def get_product(self, user_id: int, product_id: int) -> dict:
        product = self.by_id.get(product_id)
        if product is None:
            return {"error": "product not found", "product_id": product_id}
        top = self.ranked[f"popular:{product['category']}"][: tools.ALSO_POPULAR + 1]
        discount = dataset.TIER_DISCOUNT[self.users[user_id]["tier"]]
        return {
            "id": product_id,
            "name": product["name"],
            "category": product["category"],
            "price_cents": product["price_cents"],
            "member_price_cents": product["price_cents"] * (100 - discount) // 100,
            "in_stock": product["stock"] > 0,
            "also_popular": [pid for pid in top if pid != product_id][: tools.ALSO_POPULAR],
        }

    def calculate_cart(self, user_id: int) -> dict:
        tier = self.users[user_id]["tier"]
        lines = self.carts[user_id]
        priced = dataset.price_cart(self.by_id, lines, tier)
        bought = set(self.histories[user_id])
        return {
            "user_id": user_id,
            "tier": tier,
            "lines": len(lines),
            "subtotal_cents": priced["subtotal_cents"],
            "discount_cents": priced["discount_cents"],
            "tax_cents": priced["tax_cents"],
            "total_cents": priced["total_cents"],
            "bought_before": sorted(pid for pid, _ in lines if pid in bought),
        }

    def text(self, tool: str, arguments: dict) -> str:
        """The exact text content a call must answer."""
        return json.dumps(getattr(self, tool)(**arguments), separators=(",", ":"))


def cases(count: int = CASES) -> list:
    """[{"tool", "arguments", "text"}]: the calls the load cycles through, with their answers."""
    rng = random.Random(dataset.SEED + 5)
    oracle = Oracle()
    out = []
    for index in range(count):
        user = rng.randrange(1, dataset.USERS + 1)
        kind = index % 3
        if kind == 0:
            # one in three looks for the number of one of the most popular products, which it then finds
            popular = rng.choice(oracle.ranked["popular"][: tools.POPULAR_TOP])
            if rng.randrange(3) == 0:
                query, category = str(popular), rng.choice(("", oracle.by_id[popular]["category"]))
            else:
                query, category = rng.choice(QUERY_WORDS), rng.choice(("",) + dataset.CATEGORIES)
            arguments = {"user_id": user, "query": query, "category": category, "limit": rng.randrange(1, 11)}
            tool = "search_products"
        elif kind == 1:
            # one in twenty asks for a product that does not exist; about one in three for one of the most popular
            # products of a category, which its own answer leaves out of the popular others
            chance = rng.randrange(20)
            if chance == 0:
                product = dataset.PRODUCTS + index
            elif chance <= 7:
                product = rng.choice(oracle.ranked[f"popular:{rng.choice(dataset.CATEGORIES)}"][: tools.ALSO_POPULAR])
            else:
                product = rng.randrange(1, dataset.PRODUCTS + 1)
            arguments, tool = {"user_id": user, "product_id": product}, "get_product"
        else:
            arguments, tool = {"user_id": user}, "calculate_cart"
        out.append({"tool": tool, "arguments": arguments, "text": oracle.text(tool, arguments)})
    return out
