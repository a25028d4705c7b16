"""Admin fixtures: staff with and without the triage permission, jobs put in each state."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from html import unescape

import pytest
from django.contrib.auth.models import Permission

from documents.rules import DocumentRules
from jobs import kinds
from jobs.admin import JobAdmin, kind_triage
from jobs.models import Job
from tests.conftest import drive_to

CHANGELIST = "/admin/jobs/job/"
STATES = [s.value for s in Job.State]
_earlier = itertools.count(1)


@pytest.fixture(autouse=True)
def admin_clock(clock, monkeypatch):
    """The admin moves jobs on the same logical clock the tests' workers use."""
    monkeypatch.setattr(JobAdmin, "clock", clock)
    return clock


@pytest.fixture
def triager(make_member):
    """A triage member, as createmember --staff makes one: in the Triage group (view jobs, triage them)."""
    return make_member("ops", "triager", staff=True)


@pytest.fixture
def viewer(make_member):
    """Staff who may look at every jobs model in the admin but holds no triage permission (nor
    view_document, which is the tenants' content rather than a model)."""
    user = make_member("ops", "viewer")
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="jobs", codename__startswith="view_")
                              .exclude(codename="view_document"))
    return user


@pytest.fixture
def superuser(make_member):
    """An administrator: manages users, groups and tokens, and may download jobs' input."""
    user = make_member("ops", "root")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


@pytest.fixture
def in_state(clock, accept):
    """Make a job and drive it through the queue into ``state``.

    Each job is accepted a little earlier than the one before, so the claim below takes it
    and not another queued job of the same test.
    """

    def make(state: str, *, kind: str = "diagnostic.sleep", payload: dict | None = None, **kwargs) -> Job:
        job = accept(kind, payload or {"seconds": 1}, now=clock.now() - timedelta(seconds=next(_earlier)), **kwargs)
        return drive_to(job, state, now=clock.now())

    return make


@dataclass
class Triage:
    """A kind's triage for one test (``jobs.admin.kind_triage.KindTriage``), its hooks given as functions."""

    checkpoint_of: Callable[[int], dict | None] | None = None
    evidence_of: Callable[[int], list[tuple[str, str]]] | None = None
    guidance: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def supports_checkpoint(self) -> bool:
        return self.checkpoint_of is not None

    @property
    def supports_evidence(self) -> bool:
        return self.evidence_of is not None

    def checkpoint(self, job_id: int) -> dict | None:
        assert self.checkpoint_of is not None
        return self.checkpoint_of(job_id)

    def evidence(self, job_id: int) -> list[tuple[str, str]]:
        assert self.evidence_of is not None
        return self.evidence_of(job_id)


@pytest.fixture
def register_triage():
    """Register a kind's triage for one test; removed again when the test ends."""
    with ExitStack() as stack:
        yield lambda name, triage: stack.enter_context(kind_triage.registered(name, triage))


@pytest.fixture
def progress_kind(register_kind, register_triage):
    """A kind that takes documents and reports a checkpoint, as the agent's kind does."""
    checkpoints: dict[int, dict] = {}
    register_kind(kinds.Kind(
        name="test.review", handler=lambda ctx: {}, payload_schema={"type": "object"},
    ), documents=DocumentRules(max_bytes=10_000))
    register_triage("test.review", Triage(checkpoint_of=checkpoints.get))
    return checkpoints


def start_action(client, action: str, *jobs: Job, path: str = CHANGELIST):
    """What the changelist's action form posts: the confirmation page comes back."""
    return client.post(path, {"action": action, "index": 0, "_selected_action": [j.pk for j in jobs]})


_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def confirmation_fields(response) -> dict[str, list[str]]:
    """The hidden fields the confirmation page's form would send (what the browser posts back)."""
    html = response.content.decode()
    form = html[html.index('<form method="post">'):]
    fields: dict[str, list[str]] = {}
    for name, value in _HIDDEN.findall(form):
        if name != "csrfmiddlewaretoken":
            fields.setdefault(name, []).append(unescape(value))
    return fields


def confirm(client, page, *, path: str = CHANGELIST, **form):
    """Submit the confirmation page as rendered, with the staff member's reason (and outcome)."""
    return client.post(path, {**confirmation_fields(page), **form})


def messages_of(response) -> list[str]:
    return [str(m) for m in response.wsgi_request._messages]
