"""Fixtures for the operators' instruments: staff and members, a clock near real time, jobs in states."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from documents.rules import DocumentRules
from jobs import kinds
from jobs.clock import LogicalClock
from tests.conftest import drive_to

SECRET = "CONFIDENTIAL-INVOICE-TEXT-4711"  # must never appear in metrics or command output
_earlier = itertools.count(1)


@pytest.fixture
def clock() -> LogicalClock:
    """Two hours before real time: events land inside /metrics' one-hour window once advanced."""
    return LogicalClock(datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2))


@pytest.fixture(autouse=True)
def ops_kind(register_kind):
    """A kind that takes text and documents, so the tests need neither the agent nor the web tests."""
    return register_kind(kinds.Kind(
        name="opstest.echo", handler=lambda ctx: {"echo": True},
        payload_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        diagnostic=True,
    ), documents=DocumentRules(max_bytes=10_000))


@pytest.fixture
def staff(make_member):
    return make_member("ops", "operator", staff=True)


@pytest.fixture
def member(make_member):
    return make_member("acme", "plainmember")


@pytest.fixture
def client_for():
    def make(user=None) -> Client:
        client = Client(headers={"Accept": "text/html"})
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def in_state(clock, accept):
    """Accept a job and drive it with the real queue operations into ``state``, at ``clock`` time."""

    def make(state: str, *, kind: str = "opstest.echo", payload: dict | None = None, **kwargs):
        job = accept(kind, payload or {"text": SECRET}, now=clock.now() - timedelta(microseconds=next(_earlier)),
                     **kwargs)
        return drive_to(job, state, now=clock.now())

    return make
