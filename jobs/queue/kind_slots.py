"""Per-kind running limits: the slots a claim takes (``jobs.models.KindSlot``, ``jobs.sql``)."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import Q

from jobs.models import KindSlot
from jobs.writelock import write_transaction

from .. import kinds


def sync_kind_slots(limits: Mapping[str, int] | None = None) -> None:
    """Make the slot rows match the running limits (default: the registered kinds' with the
    settings' overrides): N slots for a kind limited to N, none for a kind without a limit.

    Every worker calls it as it starts; workers of one deployment agree, so it changes
    nothing after the first. A lowered limit removes slots whose jobs may still be running:
    until those finish, the kind may run up to its old limit. Idempotent, one transaction.
    """
    limits = kinds.running_limits() if limits is None else limits
    with write_transaction():
        unlimited = Q(number__gte=0)
        for kind, limit in limits.items():
            unlimited &= ~Q(kind=kind)
            KindSlot.objects.filter(kind=kind, number__gte=limit).delete()
        KindSlot.objects.filter(unlimited).delete()
        KindSlot.objects.bulk_create([KindSlot(kind=kind, number=n) for kind, limit in limits.items()
                                      for n in range(limit)], ignore_conflicts=True)
