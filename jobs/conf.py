"""The queue's settings as one typed, validated value, built from ``settings.JOBS``.

``jobsite/settings.py`` reads the environment into the ``JOBS`` dict; ``queue_settings()``
turns that dict into a frozen ``QueueSettings`` once per process and checks it, so a lease of
0 or a misspelt kind limit stops start-up with a sentence saying what is wrong
(``JobsConfig.ready``), not a worker half an hour later. Changing ``settings.JOBS`` (the
``settings`` fixture of the tests does) builds it afresh on next use.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

# A handler's child runs at this niceness above its worker: a CPU-bound handler takes the CPU
# that the web's requests leave, so pollers stay quick on a host that both serve (docs/decisions.md).
DEFAULT_HANDLER_NICE = 10
MAX_NICE = 19


@dataclass(frozen=True)
class QueueSettings:
    """What ``settings.JOBS`` says, one field a key (see jobsite/settings.py for each)."""

    max_attempts: int
    lease: timedelta  # DEFAULT_LEASE_SECONDS: a claim's lease unless its kind sets one
    deadline: timedelta  # DEFAULT_DEADLINE_SECONDS: a job's budget unless its kind sets one
    retry_base_seconds: float
    retry_max_seconds: float
    diagnostic_kinds: bool  # users are offered the diagnostic kinds
    isolate_handlers: bool  # isolated kinds run in the sandbox (jobs.worker.sandbox)
    handler_nice: int  # HANDLER_NICE: the sandbox's children run this much below the worker's CPU priority
    fair_claims: bool  # tenants take turns
    tenant_max_waiting: int  # 0: no limit
    tenant_full_retry_after: int  # seconds
    provider_slots: int
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
    """``QueueSettings`` from a ``JOBS`` dict; ImproperlyConfigured names the first bad key."""
    try:
        built = QueueSettings(
            max_attempts=int(jobs["MAX_ATTEMPTS"]),
            lease=timedelta(seconds=float(jobs["DEFAULT_LEASE_SECONDS"])),
            deadline=timedelta(seconds=float(jobs["DEFAULT_DEADLINE_SECONDS"])),
            retry_base_seconds=float(jobs["RETRY_BASE_SECONDS"]),
            retry_max_seconds=float(jobs["RETRY_MAX_SECONDS"]),
            diagnostic_kinds=bool(jobs["DIAGNOSTIC_KINDS"]),
            isolate_handlers=bool(jobs["ISOLATE_HANDLERS"]),
            handler_nice=int(jobs.get("HANDLER_NICE", DEFAULT_HANDLER_NICE)),
            fair_claims=bool(jobs["FAIR_CLAIMS"]),
            tenant_max_waiting=int(jobs["TENANT_MAX_WAITING"]),
            tenant_full_retry_after=int(jobs["TENANT_FULL_RETRY_AFTER"]),
            provider_slots=int(jobs["PROVIDER_SLOTS"]),
            prefetch=int(jobs["PREFETCH"]),
            prefetch_window_seconds=float(jobs["PREFETCH_WINDOW_SECONDS"]),
            completion_batch=int(jobs["COMPLETION_BATCH"]),
            completion_flush_seconds=float(jobs["COMPLETION_FLUSH_MS"]) / 1000,
            kind_limits=dict(jobs.get("KIND_LIMITS") or {}),
            expected_wait=timedelta(seconds=float(jobs.get("EXPECTED_WAIT_SECONDS", 120))),
            kind_max_running=dict(jobs.get("KIND_MAX_RUNNING") or {}),
        )
    except KeyError as exc:
        raise ImproperlyConfigured(f"JOBS[{exc.args[0]!r}] is missing from the settings") from None
    except (TypeError, ValueError) as exc:
        raise ImproperlyConfigured(f"JOBS holds a value of the wrong type: {exc}") from None
    _check(built)
    return built


def _check(s: QueueSettings) -> None:
    positive = {
        "DEFAULT_LEASE_SECONDS (JOBS_LEASE_SECONDS)": s.lease.total_seconds(),
        "DEFAULT_DEADLINE_SECONDS (JOBS_DEADLINE_SECONDS)": s.deadline.total_seconds(),
        "EXPECTED_WAIT_SECONDS (JOBS_EXPECTED_WAIT_SECONDS)": s.expected_wait.total_seconds(),
        "MAX_ATTEMPTS": s.max_attempts,
        "PROVIDER_SLOTS (JOBS_PROVIDER_SLOTS)": s.provider_slots,
        "PREFETCH (JOBS_PREFETCH)": s.prefetch,
        "COMPLETION_BATCH (JOBS_COMPLETION_BATCH)": s.completion_batch,
    }
    for name, value in positive.items():
        if not value > 0:
            raise ImproperlyConfigured(f"JOBS {name} must be above 0, not {value:g}")
    not_negative = {
        "TENANT_MAX_WAITING (JOBS_TENANT_MAX_WAITING)": s.tenant_max_waiting,
        "TENANT_FULL_RETRY_AFTER": s.tenant_full_retry_after,
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


@functools.cache
def queue_settings() -> QueueSettings:
    """The queue's settings, built and checked once per process (again after they change)."""
    return build(settings.JOBS)


@receiver(setting_changed)
def _rebuild(*, setting: str, **kwargs: Any) -> None:
    if setting == "JOBS":
        queue_settings.cache_clear()
