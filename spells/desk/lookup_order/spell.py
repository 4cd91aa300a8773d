"""Spell: look up an order in a small offline table."""

_ORDERS = {
    "A-1001": {"status": "shipped", "amount": 42.5, "currency": "EUR"},
    "A-1002": {"status": "refunded", "amount": 19.0, "currency": "EUR"},
}


def lookup_order(order_id: str) -> dict[str, object]:
    """Look up an order by its id: status and amount."""
    found = _ORDERS.get(order_id.strip().upper())
    if found is None:
        return {"order_id": order_id, "status": "unknown"}
    return {"order_id": order_id.upper(), **found}
