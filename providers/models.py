"""The budget's rows, on the tables they had when the queue's app kept them (``jobs_providerslot``,
``jobs_providerhold``): moved in Django's state only (``migrations/0001_initial.py``)."""

from __future__ import annotations

from django.db import models

from jobs.models import Job


class ProviderSlot(models.Model):
    """One of the calls to the model provider that may be in flight at once, on any host.

    A slot is held by a job's epoch and lasts as long as that claim's lease: when the job
    is no longer leased on that epoch (finished, recovered, or its worker died and the lease
    ran out), the slot is free again without anyone releasing it.
    """

    number = models.PositiveSmallIntegerField(primary_key=True)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    epoch = models.PositiveIntegerField(default=0)
    taken_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_providerslot"

    def __str__(self) -> str:
        return f"provider slot {self.number}" + (f" (job {self.job_id})" if self.job_id else "")


class ProviderHold(models.Model):
    """Until when every worker holds off calling the provider (its 429 with Retry-After)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    hold_until = models.DateTimeField()

    class Meta:
        db_table = "jobs_providerhold"

    def __str__(self) -> str:
        return f"provider hold until {self.hold_until}"
