"""What the job pages show, in words and HTML: ages, people, times, JSON, and the page's width."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.http import HttpRequest
from django.utils.html import format_html

from ..models import Job, JobEvent

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)
# The job pages without the admin's app sidebar: the list's triage columns and its filters
# fit 1280 px beside each other only with that width (the breadcrumbs lead back home).
WIDE = {"is_nav_sidebar_enabled": False}
# Who is looking at a job's page, while it renders (a read-only field has only the job).
viewer: ContextVar[AbstractUser | None] = ContextVar("job_admin_viewer", default=None)

MEMBER_ACTOR = "user:"  # a member's actor on the timeline: ``user:<id>``


def member(request: HttpRequest) -> AbstractUser:
    """Who is using the admin: always a signed-in member (the admin site lets no one else in)."""
    return cast("AbstractUser", request.user)


def short_age(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"


def parse_seen(values: list[str]) -> Iterator[tuple[int, int]]:
    """``"<id>:<epoch>"`` pairs the confirmation page rendered for the jobs it offered to move."""
    for value in values:
        pk, _, epoch = value.partition(":")
        if pk.isdigit() and epoch.isdigit():
            yield int(pk), int(epoch)


def pretty_json(value: Any) -> str:
    return format_html('<pre class="job-json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False, default=str))


def person(user: AbstractUser) -> str:
    """A member by name: the full name when it has one, else the username (never ``user:<id>``)."""
    return user.get_full_name() or user.get_username()


def member_names(events: list[JobEvent]) -> dict[str, str]:
    """``user:<id>`` actors by the member's name, in one query."""
    ids = {int(member) for e in events
           if (member := e.actor.removeprefix(MEMBER_ACTOR)) != e.actor and member.isdigit()}
    return {f"{MEMBER_ACTOR}{user.pk}": person(user) for user in get_user_model().objects.filter(pk__in=ids)}


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
