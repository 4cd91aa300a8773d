"""Save a customer's invoice email in records.json (the example's record store)."""

import json
from pathlib import Path

from sanctum.ritual.mandate import Mandate


def update_email(ticket: str, email: str, mandate: Mandate) -> str:
    """Change the invoice email a ticket asks for.

    Args:
        ticket: The ticket asking for the change.
        email: The new invoice email.
    """
    store = Path("records.json")
    records = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
    records["acme"] = {"invoice_email": email, "ticket": ticket, "saved_by": mandate.principal}
    store.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return f"saved {email} for {ticket}"
