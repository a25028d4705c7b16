"""Fixtures for the Tasks framework's backend: the backend on the logical clock, an in-process worker."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs.models import Job
from jobs.tasks_backend.framework import task_backends
from jobs.worker import Worker


@pytest.fixture
def backend(clock, monkeypatch, db):
    """The project's default task backend, enqueuing on the tests' logical clock."""
    b = task_backends["default"]
    monkeypatch.setattr(b, "clock", clock)
    return b


@pytest.fixture
def task_options(settings, clock, monkeypatch, db):
    """Set the default backend's OPTIONS for one test (a new backend, on the logical clock too)."""

    def set_options(**options):
        settings.TASKS = {"default": {**settings.TASKS["default"], "OPTIONS": options}}
        monkeypatch.setattr(task_backends["default"], "clock", clock)

    return set_options


@pytest.fixture
def worker(clock):
    """A worker driven in-process on the same clock: ``worker.run_one()`` runs one job."""
    w = Worker(name="w1", lease=timedelta(seconds=10), clock=clock, listen=False)
    yield w
    w.close()


def job_of(result) -> Job:
    return Job.objects.get(pk=int(result.id))
