"""The queue's settings as one typed, validated value, built from ``settings.JOBS``.

Every key is optional: ``DEFAULTS`` below holds each one's value and what it means, so a project
that installs the queue sets only what it changes (a project with no ``JOBS`` at all gets these).
``queue_settings()`` turns the defaults and ``settings.JOBS`` into a frozen ``QueueSettings``
once per process and checks it, so a lease of 0 or a misspelt key stops start-up with a sentence
saying what is wrong (``JobsConfig.ready``), not a worker half an hour later. Changing
``settings.JOBS`` (the ``settings`` fixture of the tests does) builds it afresh on next use.
The names in brackets in the refusals are the environment variables this repository's own
project (``jobsite/settings.py``) reads them from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

# A handler's child runs at this niceness above its worker: a CPU-bound handler takes the CPU
# that the web's requests leave, so pollers stay quick on a host that both serve (docs/decisions.md).
DEFAULT_HANDLER_NICE = 10
MAX_NICE = 19
T = TypeVar("T")

# Each key of ``settings.JOBS``, and its value when the project does not set it.
DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "MAX_ATTEMPTS": 3,  # claims a job may have before it is dead (a kind or a task may set its own)
    "DEFAULT_LEASE_SECONDS": 30.0,  # a claim's lease unless its kind sets one
    "DEFAULT_DEADLINE_SECONDS": 300.0,  # a job's budget from when it may first run, unless its kind sets one
    # A job that could run and has waited longer than this: the workers are stopped or too few.
    # Submitters are told their work is delayed, and staff are alerted (jobs.queue.lateness).
    "EXPECTED_WAIT_SECONDS": 120.0,
    # A failed attempt waits RETRY_BASE_SECONDS·2^(n-1), with jitter, at most RETRY_MAX_SECONDS.
    "RETRY_BASE_SECONDS": 2.0,
    "RETRY_MAX_SECONDS": 60.0,
    # The diagnostic kind (sleeps, can mark an external start) is for tests and the benchmarks;
    # submitters are offered it only when this is on.
    "DIAGNOSTIC_KINDS": False,
    # Kinds that read submitted documents run their handler in a child process under hard memory,
    # CPU and time limits (jobs.worker.sandbox). Off only for tests that drive a worker in-process.
    "ISOLATE_HANDLERS": True,
    # An isolated handler's child runs this much nicer than its worker (0 to 19): on a host that
    # also serves the web, CPU-bound handlers yield to requests.
    "HANDLER_NICE": DEFAULT_HANDLER_NICE,
    # Per-kind overrides of an isolated kind's limits: {"kind": {"memory_mb": 1024, "cpu_seconds": 120}}.
    "KIND_LIMITS": {},
    # Per-kind overrides of how many of a kind's jobs may run at once across all workers and hosts
    # (a kind declares its own): {"webhook.deliver": 2, "other.kind": None} (None: no limit).
    "KIND_MAX_RUNNING": {},
    # Scopes take turns (jobs.sql); False serves jobs first come, first served instead.
    "FAIR_CLAIMS": True,
    # The default of what staff can set per scope in the admin: jobs waiting at most (past it a
    # submission is refused; 0: no limit), and the seconds a refused client is told to wait.
    "SCOPE_MAX_WAITING": 5000,
    "SCOPE_FULL_RETRY_AFTER": 30,
    # Throughput (docs/workers-and-sharing.md, Prefetch): a worker claims up to PREFETCH jobs in one
    # transaction, as many as its recent jobs suggest it finishes within PREFETCH_WINDOW_SECONDS,
    # and commits up to COMPLETION_BATCH completions in one transaction, none of them held back
    # longer than COMPLETION_FLUSH_MS. runworkers --prefetch / --completion-batch override.
    "PREFETCH": 32,
    "PREFETCH_WINDOW_SECONDS": 0.02,
    "COMPLETION_BATCH": 32,
    "COMPLETION_FLUSH_MS": 20.0,
})


@dataclass(frozen=True)
class QueueSettings:
    """What ``settings.JOBS`` says over ``DEFAULTS``, one field a key."""

    max_attempts: int
    lease: timedelta  # DEFAULT_LEASE_SECONDS
    deadline: timedelta  # DEFAULT_DEADLINE_SECONDS
    retry_base_seconds: float
    retry_max_seconds: float
    diagnostic_kinds: bool  # users are offered the diagnostic kinds
    isolate_handlers: bool  # isolated kinds run in the sandbox (jobs.worker.sandbox)
    handler_nice: int  # HANDLER_NICE: the sandbox's children run this much below the worker's CPU priority
    fair_claims: bool  # scopes take turns
    scope_max_waiting: int  # 0: no limit
    scope_full_retry_after: int  # seconds
    prefetch: int
    prefetch_window_seconds: float
    completion_batch: int
    completion_flush_seconds: float  # COMPLETION_FLUSH_MS / 1000
    kind_limits: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # EXPECTED_WAIT_SECONDS: a claimable job waiting longer means the workers are not keeping up
    expected_wait: timedelta = timedelta(minutes=2)
    # KIND_MAX_RUNNING: kind -> at most this many running at once on all workers (None: no limit)
    kind_max_running: Mapping[str, int | None] = field(default_factory=dict)


def build(jobs: Mapping[str, Any]) -> QueueSettings:
    """``QueueSettings`` from a ``JOBS`` dict over ``DEFAULTS``; ImproperlyConfigured names the bad key."""
    unknown = sorted(set(jobs) - set(DEFAULTS))
    if unknown:
        raise ImproperlyConfigured(f"JOBS has unknown keys {unknown}: it may set {sorted(DEFAULTS)}")
    given = {**DEFAULTS, **jobs}

    def read(key: str, convert: Callable[[Any], T]) -> T:
        try:
            return convert(given[key])
        except (TypeError, ValueError):
            raise ImproperlyConfigured(f"JOBS[{key!r}] holds a value of the wrong type: {given[key]!r}") from None

    built = QueueSettings(
        max_attempts=read("MAX_ATTEMPTS", int),
        lease=read("DEFAULT_LEASE_SECONDS", _seconds),
        deadline=read("DEFAULT_DEADLINE_SECONDS", _seconds),
        retry_base_seconds=read("RETRY_BASE_SECONDS", float),
        retry_max_seconds=read("RETRY_MAX_SECONDS", float),
        diagnostic_kinds=read("DIAGNOSTIC_KINDS", bool),
        isolate_handlers=read("ISOLATE_HANDLERS", bool),
        handler_nice=read("HANDLER_NICE", int),
        fair_claims=read("FAIR_CLAIMS", bool),
        scope_max_waiting=read("SCOPE_MAX_WAITING", int),
        scope_full_retry_after=read("SCOPE_FULL_RETRY_AFTER", int),
        prefetch=read("PREFETCH", int),
        prefetch_window_seconds=read("PREFETCH_WINDOW_SECONDS", float),
        completion_batch=read("COMPLETION_BATCH", int),
        completion_flush_seconds=read("COMPLETION_FLUSH_MS", float) / 1000,
        kind_limits=read("KIND_LIMITS", _mapping),
        expected_wait=read("EXPECTED_WAIT_SECONDS", _seconds),
        kind_max_running=read("KIND_MAX_RUNNING", _mapping),
    )
    _check(built)
    return built



def _seconds(value: Any) -> timedelta:
    return timedelta(seconds=float(value))


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value or {})


def _check(s: QueueSettings) -> None:
    positive = {
        "DEFAULT_LEASE_SECONDS (JOBS_LEASE_SECONDS)": s.lease.total_seconds(),
        "DEFAULT_DEADLINE_SECONDS (JOBS_DEADLINE_SECONDS)": s.deadline.total_seconds(),
        "EXPECTED_WAIT_SECONDS (JOBS_EXPECTED_WAIT_SECONDS)": s.expected_wait.total_seconds(),
        "MAX_ATTEMPTS": s.max_attempts,
        "PREFETCH (JOBS_PREFETCH)": s.prefetch,
        "COMPLETION_BATCH (JOBS_COMPLETION_BATCH)": s.completion_batch,
    }
    for name, value in positive.items():
        if not value > 0:
            raise ImproperlyConfigured(f"JOBS {name} must be above 0, not {value:g}")
    not_negative = {
        "SCOPE_MAX_WAITING (JOBS_TENANT_MAX_WAITING)": s.scope_max_waiting,
        "SCOPE_FULL_RETRY_AFTER": s.scope_full_retry_after,
        "RETRY_BASE_SECONDS (JOBS_RETRY_BASE_SECONDS)": s.retry_base_seconds,
        "RETRY_MAX_SECONDS (JOBS_RETRY_MAX_SECONDS)": s.retry_max_seconds,
        "PREFETCH_WINDOW_SECONDS (JOBS_PREFETCH_WINDOW)": s.prefetch_window_seconds,
        "COMPLETION_FLUSH_MS (JOBS_COMPLETION_FLUSH_MS)": s.completion_flush_seconds,
    }
    for name, value in not_negative.items():
        if value < 0:
            raise ImproperlyConfigured(f"JOBS {name} must not be negative, not {value:g}")
    if not 0 <= s.handler_nice <= MAX_NICE:
        raise ImproperlyConfigured(f"JOBS HANDLER_NICE (JOBS_HANDLER_NICE) must be from 0 to {MAX_NICE}, "
                                   f"not {s.handler_nice}")
    if s.retry_max_seconds < s.retry_base_seconds:
        raise ImproperlyConfigured("JOBS RETRY_MAX_SECONDS must be at least RETRY_BASE_SECONDS")
    _check_kind_limits(s.kind_limits)
    _check_kind_max_running(s.kind_max_running)


def _check_kind_limits(kind_limits: Mapping[str, Any]) -> None:
    from .kinds import Limits  # jobs.kinds reads these settings: imported when checked, not before

    known = set(Limits.__dataclass_fields__)
    for kind, limits in kind_limits.items():
        if not isinstance(limits, Mapping):
            raise ImproperlyConfigured(f"JOBS_KIND_LIMITS[{kind!r}] must be an object like "
                                       '{"memory_mb": 1024, "cpu_seconds": 120}')
        unknown = set(limits) - known
        if unknown:
            raise ImproperlyConfigured(f"JOBS_KIND_LIMITS[{kind!r}] has unknown limits {sorted(unknown)}: "
                                       f"it may set {sorted(known)}")
        for name, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ImproperlyConfigured(f"JOBS_KIND_LIMITS[{kind!r}][{name!r}] must be a number above 0")


MAX_RUNNING_LIMIT = 1000  # slots a kind may have (one row each)


def _check_kind_max_running(limits: Mapping[str, Any]) -> None:
    for kind, limit in limits.items():
        whole = isinstance(limit, int) and not isinstance(limit, bool)
        if limit is not None and not (whole and 1 <= limit <= MAX_RUNNING_LIMIT):
            raise ImproperlyConfigured(f"JOBS_KIND_MAX_RUNNING[{kind!r}] must be a whole number from 1 to "
                                       f"{MAX_RUNNING_LIMIT} (or null: no limit), not {limit!r}")


# The SQLite settings beside JOBS, each optional (a project on PostgreSQL needs none): the seconds
# a connection waits for SQLite's own lock (the connections' "timeout" option should say the
# same), the part of it a writer first waits for the queue's fair lock (jobs.writelock), and the
# "synchronous" level the connections run at. The defaults are Python's sqlite3 timeout and
# SQLite's durable level.
SQLITE_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "SQLITE_BUSY_TIMEOUT": 5.0, "SQLITE_LOCK_WAIT": 1.0, "SQLITE_SYNCHRONOUS": "FULL"})


def sqlite_busy_timeout() -> float:
    return float(getattr(settings, "SQLITE_BUSY_TIMEOUT", SQLITE_DEFAULTS["SQLITE_BUSY_TIMEOUT"]))


def sqlite_lock_wait() -> float:
    """Never more than half the busy timeout, whatever the project says."""
    wait = float(getattr(settings, "SQLITE_LOCK_WAIT", SQLITE_DEFAULTS["SQLITE_LOCK_WAIT"]))
    return min(wait, sqlite_busy_timeout() / 2)


def sqlite_synchronous() -> str:
    return str(getattr(settings, "SQLITE_SYNCHRONOUS", SQLITE_DEFAULTS["SQLITE_SYNCHRONOUS"]))


@functools.cache
def queue_settings() -> QueueSettings:
    """The queue's settings, built and checked once per process (again after they change)."""
    return build(getattr(settings, "JOBS", None) or {})


@receiver(setting_changed)
def _rebuild(*, setting: str, **kwargs: Any) -> None:
    if setting == "JOBS":
        queue_settings.cache_clear()
