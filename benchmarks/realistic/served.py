"""The tools as every Python server registers them: tools.py's functions bound to this process's shared
clients, with the annotations and docstrings each framework builds its schema and description from."""

from __future__ import annotations

import tool_clients
import tools


async def search_products(user_id: int, query: str, category: str = "", limit: int = 5) -> str:
    """Search the product catalogue by name and category; flags the most popular results"""
    return await tools.search_products(tool_clients.shared(), user_id, query, category, limit)


async def get_product(user_id: int, product_id: int) -> str:
    """Get a product with the user's member price and popular products of its category"""
    return await tools.get_product(tool_clients.shared(), user_id, product_id)


async def calculate_cart(user_id: int) -> str:
    """Price the user's cart: discounts, tax and total, in cents"""
    return await tools.calculate_cart(tool_clients.shared(), user_id)


TOOLS = (search_products, get_product, calculate_cart)
