"""The queue's terms: the job states, the failure codes, and the values its operations take and return."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from jobs.models import Job

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (
    Job.State.QUEUED.value,
    Job.State.LEASED.value,
    Job.State.COMPLETED.value,
    Job.State.DEAD.value,
    Job.State.UNKNOWN.value,
    Job.State.CANCELLED.value,
)
NEEDS_HUMAN = frozenset({DEAD, UNKNOWN})
MAX_OPERATION_KEY = 200
# The reason of the event a cancel request of a running job records (the timeline reads it).
CANCEL_REQUESTED = "cancel requested"
RETURNED_UNSTARTED = "returned unstarted: its worker held it but never started it"
MAX_FAILURE_CODE = 64  # Job.failure_code


class FailureCode(StrEnum):
    """Why a job's run ended without a result, as ``Job.failure_code`` keeps it beside
    ``last_error``: the queue's and the worker's own reasons. A kind's reasons (its
    ``JobFailed.code``, an acceptance refusal's code) are kept as the kind gave them."""

    # Time
    DEADLINE = "deadline"  # the sandbox stopped the handler when the deadline came
    DEADLINE_PASSED = "deadline_passed"  # recovery found the job past its deadline
    NO_TIME_LEFT = "no_time_left"  # deferred to a time after its deadline
    # The run, as the queue saw it
    LEASE_EXPIRED = "lease_expired"  # its worker stopped renewing the lease (died, froze, cut off)
    ATTEMPTS_SPENT = "attempts_spent"  # ... on its last attempt
    CANCELLED = "cancelled"
    DISCARDED = "discarded"  # staff gave up on a job whose outcome was unknown
    # The handler, as the worker saw it
    HANDLER_ERROR = "handler_error"  # an exception the handler did not catch
    HANDLER_FAILED = "handler_failed"  # a JobFailed that named no code of its own
    HANDLER_CRASHED = "handler_crashed"  # its process died
    STOPPED = "stopped"  # it did not stop when asked
    SHUTDOWN = "shutdown"  # it stopped because its worker was shutting down
    BAD_RESULT = "bad_result"
    UNKNOWN_KIND = "unknown_kind"
    # The input, under an isolated kind's limits
    MEMORY_LIMIT = "memory_limit"
    CPU_LIMIT = "cpu_limit"
    TIME_LIMIT = "time_limit"
    TOO_DEEP = "too_deep"



@dataclass(frozen=True)
class Outcome:
    """What a write did: applied (and the state it left), or rejected and why."""

    applied: bool
    state: str | None = None
    reason: str = ""

    def __bool__(self) -> bool:
        return self.applied


@dataclass(frozen=True)
class Claim:
    """A worker's authority over one job: valid only while the epoch is current."""

    job_id: int
    kind: str
    epoch: int
    attempt: int
    lease_expires_at: datetime
    deadline: datetime
    payload: dict[str, Any]
    worker: str
    lease: timedelta = timedelta(seconds=30)  # the length each renewal grants


@dataclass(frozen=True)
class Acceptance:
    job: Job
    created: bool


@dataclass(frozen=True)
class KeptInput:
    """An input another app kept beside a job's payload (``jobs.queue.accept``'s ``keep_input``):
    its ``digest`` goes in the request's fingerprint (a retry must repeat it), and ``attach(job)``
    writes its row in the insert's transaction."""

    digest: str
    attach: Callable[[Job], object]


class StaleEpoch(Exception):
    """A fenced write found that the job is no longer this epoch's to write."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

