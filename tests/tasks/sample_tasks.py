"""Task functions for the tests: a real module, so worker processes import them by path."""

from __future__ import annotations

import asyncio
import os
import time

from jobs.kinds import JobFailed
from jobs.tasks_backend import queue_options
from jobs.tasks_backend.framework import task, task_finished, task_started


@task
def add(a: int, b: int) -> int:
    return a + b


@task
async def add_later(a: int, b: int) -> int:
    await asyncio.sleep(0)
    return a + b


@task(takes_context=True)
def which_attempt(context, fail_before: int = 0) -> dict:
    if context.attempt < fail_before:
        raise RuntimeError(f"attempt {context.attempt} fails on purpose")
    return {"attempt": context.attempt, "id": context.task_result.id}


@task
def fail_with(text: str) -> None:
    """Raises with the caller's text in the message: it must not reach the job or the logs."""
    raise ValueError(f"could not read {text}")


@task
def give_up(reason: str) -> None:
    raise JobFailed(reason, retryable=False)


@task
def unstorable() -> object:
    return {"when": object()}


@task
def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@task
@queue_options(outside_effects=True)
def send_payment(seconds: float) -> str:
    time.sleep(seconds)  # stands for a call to a provider that charges a card
    return "sent"


@task(priority=10)
def urgent() -> str:
    return "urgent"


@task(priority=-10)
def whenever() -> str:
    return "whenever"


@task
@queue_options(max_attempts=5, deadline=120)
def patient() -> str:
    return "patient"


@task
@queue_options(outside_effects=True)
def charge_then_fail() -> None:
    raise ConnectionError("the provider hung up after the charge request")


# --- The framework's signals, as a worker process sends them ------------------------------------
# With TASK_SIGNAL_LOG set (the tests' worker processes), each signal appends a line to that
# file: the test reads what the worker process sent.


def plain(command: str) -> str:
    """A module-level function that is no task: a job naming it must not run it."""
    raise AssertionError(f"plain() ran with {command!r}")


def plain_twin(n: int) -> int:
    """A task's function kept at its own name (the task is bound to another)."""
    return n * 2


twin = task(plain_twin)


def _record(signal_name: str):
    def receiver(sender, task_result, **kwargs) -> None:
        path = os.environ.get("TASK_SIGNAL_LOG")
        if path:
            with open(path, "a") as out:
                out.write(f"{signal_name} {task_result.id} {task_result.status} {os.getpid()}\n")

    return receiver


_on_started, _on_finished = _record("started"), _record("finished")
task_started.connect(_on_started)
task_finished.connect(_on_finished)
