"""The provider budget: how many calls to the model provider are in flight at once, across all
hosts, and the hold every worker keeps when the provider says "not now"."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import DateTimeField, Exists, F, OuterRef, Value
from django.db.models.functions import Greatest

from jobs.models import Job, ProviderHold, ProviderSlot
from jobs.writelock import write_transaction

from ..conf import queue_settings
from .terms import LEASED


@dataclass(frozen=True)
class Slot:
    """A call to the model provider this epoch may make now; or, if not, when to ask again."""

    number: int | None
    retry_at: datetime | None = None

    def __bool__(self) -> bool:
        return self.number is not None


def take_provider_slot(*, job_id: int, epoch: int, now: datetime) -> Slot:
    """One of the ``PROVIDER_SLOTS`` calls allowed in flight at once, across all hosts.

    A slot is free when no job holds it or its holder no longer owns its lease (finished,
    recovered, or its worker died and the lease ran out), so nobody has to release the slot
    of a dead worker. While every worker holds off (the provider's 429, ``hold_provider``)
    no slot is given.
    """
    with write_transaction():
        held = ProviderHold.objects.filter(pk=1, hold_until__gt=now).values_list("hold_until", flat=True).first()
        if held is not None:
            return Slot(None, held)
        slots = queue_settings().provider_slots
        if ProviderSlot.objects.filter(number__lt=slots).count() < slots:
            ProviderSlot.objects.bulk_create([ProviderSlot(number=n) for n in range(slots)], ignore_conflicts=True)
        holder = Job.objects.filter(pk=OuterRef("job_id"), epoch=OuterRef("epoch"), state=LEASED,
                                    lease_expires_at__gt=now)
        free = (ProviderSlot.objects.filter(number__lt=slots).exclude(Exists(holder)).order_by("number")
                .select_for_update(skip_locked=True).values_list("number", flat=True).first())
        if free is None:
            return Slot(None, now + timedelta(seconds=1 + random.random() * 2))  # noqa: S311  jitter, not a secret
        ProviderSlot.objects.filter(number=free).update(job_id=job_id, epoch=epoch, taken_at=now)
    return Slot(free)


def release_provider_slot(*, job_id: int, epoch: int, number: int) -> None:
    """Give the slot back as soon as the call is over (its lease would free it later anyway)."""
    with write_transaction():
        ProviderSlot.objects.filter(number=number, job_id=job_id, epoch=epoch).update(job=None, taken_at=None)


def hold_provider(*, until: datetime) -> None:
    """Every worker holds off calling the provider until ``until`` (it answered 429)."""
    with write_transaction():
        later = Greatest(F("hold_until"), Value(until, output_field=DateTimeField()))
        if not ProviderHold.objects.filter(pk=1).update(hold_until=later):
            ProviderHold.objects.get_or_create(pk=1, defaults={"hold_until": until})

