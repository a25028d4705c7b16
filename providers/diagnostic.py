"""``diagnostic.provider_call``: the queue's diagnostic outside call (``jobs.diagnostic.call``)
made in a provider slot, so tests can watch real workers keep the budget. Offered to users
only with the queue's diagnostic kinds (``JOBS_DIAGNOSTIC_KINDS``), like the queue's own."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from jobs import diagnostic
from jobs.context import JobContext
from jobs.kinds import Kind

from . import budget


def provider_call(ctx: JobContext) -> dict[str, Any]:
    """An outside call that takes ``seconds`` in a slot: marked first, settled, then cancellable."""
    seconds = min(float(ctx.payload.get("seconds", 0)), max(ctx.remaining().total_seconds(), 0))
    return diagnostic.call(ctx, seconds, within=budget.slot(ctx))


KIND = Kind(
    name="diagnostic.provider_call",
    handler=provider_call,
    payload_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 60}},
        "additionalProperties": False,
    },
    max_payload_bytes=256,
    deadline=timedelta(minutes=10),
    diagnostic=True,
    description="Makes an outside call that takes its seconds, in one of the provider's slots.",
)
