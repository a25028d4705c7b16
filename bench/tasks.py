"""The task ``workerbench`` drains through Django's Tasks framework, under either backend."""

from __future__ import annotations

from datetime import timedelta

from jobs.tasks_backend import queue_options
from jobs.tasks_backend.framework import task


@task
@queue_options(deadline=timedelta(days=1))  # a drain may start long after the tasks were enqueued
def noop() -> None:
    """Does nothing: the benchmark measures the queue around it."""
