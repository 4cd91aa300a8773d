"""Read a support ticket (fictional data)."""

TICKETS = {
    "T-7": "Acme Ltd asks to send invoices to ap@acme.example from now on.",
}


def read_ticket(ticket: str) -> str:
    """Read a support ticket by its id.

    Args:
        ticket: The ticket id, e.g. T-7.
    """
    return TICKETS.get(ticket, f"no ticket {ticket}")
