"""The provider budget: how many calls to the model provider are in flight at once, across all
hosts, and the hold every worker keeps when the provider says "not now".

A handler wraps each call in ``slot(ctx)``; the functions under it take the job's id and epoch,
so the budget needs nothing of the queue but its rows.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import DateTimeField, Exists, F, OuterRef, Value
from django.db.models.functions import Greatest

from jobs.context import JobContext
from jobs.kinds import JobDeferred
from jobs.models import Job
from jobs.writelock import write_transaction

from . import conf
from .models import ProviderHold, ProviderSlot


@dataclass(frozen=True)
class Slot:
    """A call to the model provider this epoch may make now; or, if not, when to ask again."""

    number: int | None
    retry_at: datetime | None = None

    def __bool__(self) -> bool:
        return self.number is not None


@contextmanager
def slot(ctx: JobContext) -> Iterator[None]:
    """Hold one of the provider calls allowed in flight at once, on every host, for the block.

    Without a free slot (or while every worker holds off after the provider's 429) the
    job is handed back, without spending its attempt, to try again shortly.
    """
    taken = take_slot(job_id=ctx.job_id, epoch=ctx.epoch, now=ctx.now())
    if taken.number is None:
        raise JobDeferred(taken.retry_at or ctx.now(), "waiting for a provider slot")
    try:
        yield
    finally:
        release_slot(job_id=ctx.job_id, epoch=ctx.epoch, number=taken.number)


def take_slot(*, job_id: int, epoch: int, now: datetime) -> Slot:
    """One of the ``PROVIDER_SLOTS`` calls allowed in flight at once, across all hosts.

    A slot is free when no job holds it or its holder no longer owns its lease (finished,
    recovered, or its worker died and the lease ran out), so nobody has to release the slot
    of a dead worker. While every worker holds off (the provider's 429, ``hold_off``)
    no slot is given.
    """
    with write_transaction():
        held = ProviderHold.objects.filter(pk=1, hold_until__gt=now).values_list("hold_until", flat=True).first()
        if held is not None:
            return Slot(None, held)
        slots = conf.slots()
        if ProviderSlot.objects.filter(number__lt=slots).count() < slots:
            ProviderSlot.objects.bulk_create([ProviderSlot(number=n) for n in range(slots)], ignore_conflicts=True)
        holder = Job.objects.filter(pk=OuterRef("job_id"), epoch=OuterRef("epoch"), state=Job.State.LEASED,
                                    lease_expires_at__gt=now)
        free = (ProviderSlot.objects.filter(number__lt=slots).exclude(Exists(holder)).order_by("number")
                .select_for_update(skip_locked=True).values_list("number", flat=True).first())
        if free is None:
            return Slot(None, now + timedelta(seconds=1 + random.random() * 2))  # noqa: S311  jitter, not a secret
        ProviderSlot.objects.filter(number=free).update(job_id=job_id, epoch=epoch, taken_at=now)
    return Slot(free)


def release_slot(*, job_id: int, epoch: int, number: int) -> None:
    """Give the slot back as soon as the call is over (its lease would free it later anyway)."""
    with write_transaction():
        ProviderSlot.objects.filter(number=number, job_id=job_id, epoch=epoch).update(job=None, taken_at=None)


def hold_off(*, until: datetime) -> None:
    """Every worker holds off calling the provider until ``until`` (it answered 429)."""
    with write_transaction():
        later = Greatest(F("hold_until"), Value(until, output_field=DateTimeField()))
        if not ProviderHold.objects.filter(pk=1).update(hold_until=later):
            ProviderHold.objects.get_or_create(pk=1, defaults={"hold_until": until})
