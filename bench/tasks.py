"""The task ``workerbench`` drains through Django's Tasks framework, under either backend."""

from __future__ import annotations

from jobs.tasks_framework import task


@task
def noop() -> None:
    """Does nothing: the benchmark measures the queue around it."""
