"""The review's side of the tenant's supplier register (the ``suppliers`` app).

At review, ``findings`` adds what the register says of the invoice (a new supplier, a bank
account it has never been paid on, a tax id of another supplier, an unusual total, an invoice
addressed to someone else); ``currencies`` is the tenant's own list of those it pays in. What
the register learns back, when a member marks a document handled, is the inbox's
(``agent.inbox.register``).
"""

from __future__ import annotations

from typing import Any

from suppliers import review, services


def findings(*, tenant_id: int, fields: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The register's findings on one of the tenant's invoices (structured: code, field, words, blocks)."""
    return review.review(tenant_id=tenant_id, fields=fields, text=text)


def currencies(tenant_id: int) -> frozenset[str] | None:
    """The currencies the tenant pays in, as set in its register settings; None: the review's default list."""
    return frozenset(services.currencies(tenant_id)) or None
