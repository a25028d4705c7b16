"""What staff's landing page (the admin's index) says of the queue: the jobs that need a human,
and whether jobs wait longer than expected (the workers stopped, or too few)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import template
from django.db.models import Count
from django.urls import reverse

from jobs import queue
from jobs.admin.job_admin import JobAdmin
from jobs.models import Job

register = template.Library()


@dataclass(frozen=True)
class Landing:
    dead: int
    unknown: int
    list_url: str  # the admin's list of the jobs that need a human
    late: int  # jobs that could run and have waited longer than expected
    late_minutes: int
    running: int
    expected_seconds: float
    queued_url: str

    @property
    def needs_human(self) -> int:
        return self.dead + self.unknown


@register.simple_tag(takes_context=True)
def staff_landing(context: dict[str, Any]) -> Landing | None:
    """The counts for staff who may see jobs (None for the others): one query per state group, and
    the queue's lateness (noticed, so the triage alert is raised the first time staff see it)."""
    request = context.get("request")
    if request is None or not request.user.has_perm("jobs.view_job"):
        return None
    counts = dict(Job.objects.needs_human().values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    now = JobAdmin.clock.now()
    late = queue.notice_lateness(now=now, always=True)
    changelist = reverse("admin:jobs_job_changelist")
    return Landing(dead=counts.get(Job.State.DEAD, 0), unknown=counts.get(Job.State.UNKNOWN, 0),
                   list_url=f"{changelist}?state=needs_human", late=late.late,
                   late_minutes=max(1, int(late.waited(now).total_seconds() // 60)) if late.delayed else 0,
                   running=late.running, expected_seconds=late.expected.total_seconds(),
                   queued_url=f"{changelist}?state=queued")
