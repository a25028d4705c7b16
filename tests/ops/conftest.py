"""Fixtures for the operators' instruments: staff and members, a clock near real time, jobs in states."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import pytest
from django.test import Client

from jobs import kinds, queue
from jobs.clock import LogicalClock

SECRET = "CONFIDENTIAL-INVOICE-TEXT-4711"  # must never appear in metrics or command output
_earlier = itertools.count(1)


@pytest.fixture
def clock() -> LogicalClock:
    """Two hours before real time: events land inside /metrics' one-hour window once advanced."""
    return LogicalClock(datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=2))


@pytest.fixture(autouse=True)
def ops_kind(monkeypatch, settings, tmp_path):
    """A kind that takes text and documents, so the tests need neither the agent nor the web tests."""
    settings.MEDIA_ROOT = tmp_path / "documents"
    kind = kinds.Kind(
        name="opstest.echo", handler=lambda ctx: {"echo": True},
        payload_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        accepts_document=True, max_document_bytes=10_000, diagnostic=True,
    )
    monkeypatch.setitem(kinds._registry, kind.name, kind)
    return kind


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
        if state != "queued":
            c = queue.claim(now=clock.now(), worker="w1", lease=timedelta(seconds=30))
            assert c is not None and c.job_id == job.pk
            if state == "completed":
                assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"ok": 1}, now=clock.now())
            elif state == "dead":
                assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", now=clock.now(),
                                  retryable=False).state == "dead"
            elif state == "unknown":
                assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=clock.now())
                assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="timed out", now=clock.now()).state == "unknown"
        job.refresh_from_db()
        assert job.state == state
        return job

    return make
