"""The one place job kinds are registered: name -> handler, payload schema, limits.

The queue knows no workflow; apps register their kinds from ``AppConfig.ready()``.
Acceptance refuses any kind that is not registered here (or not offered to users).
A ``Kind`` holds only what the queue itself reads; how its jobs read on a product's pages is
the product's (``web.kind_pages``), and what staff are shown of it beyond the queue's rows is
registered with the admin (``jobs.admin.kind_triage``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .conf import queue_settings

if TYPE_CHECKING:
    from .context import JobContext


class InputCheck(Protocol):
    def __call__(self, *, payload: dict[str, Any], attached: bool) -> None:
        """Raise an AcceptanceError for input the schema alone cannot refuse; ``attached``: an input
        (another app's, kept beside the payload) comes with it (``jobs.queue.accept``'s ``keep_input``)."""


class JobFailed(Exception):
    """Raised by a handler to fail its job. ``retryable=False`` sends it to ``dead``."""

    def __init__(self, message: str, *, retryable: bool = True, code: str = "handler_failed") -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.code = code


class JobDeferred(Exception):
    """Raised by a handler to hand the job back until ``until`` without spending an attempt.

    For an outside service's 429: it said "not now", which proves it did nothing.
    """

    def __init__(self, until: datetime, reason: str = "deferred") -> None:
        super().__init__(reason)
        self.until = until
        self.reason = reason


class JobCancelled(Exception):
    """Raised by a handler that saw its job's cancel request (``JobContext.cancelled()``):
    the worker acknowledges it (``cancelled``) instead of completing or failing the job."""


@dataclass(frozen=True)
class Summary:
    """A completed job's outcome in a few words, as its kind reads its own result.

    Stored on the job row, so lists can show, filter and search outcomes without loading
    results or knowing their shape.
    """

    outcome: str  # a short code the kind defines ("ok", "to_correct", "unreadable")
    text: str  # in the submitter's words ("OK", "2 to correct")
    needs_action: bool  # the submitter has something to do about it
    reference: str = ""  # words to find the job by (a name and a number the kind read from the input)


class FailureCause(StrEnum):
    """Whose doing a failure was (``Kind.failures``), as the submitter is told it (``web.wording.failure``)."""

    DOCUMENT = "document"  # the input itself: the same input fails the same way; send another copy
    TIME = "time"  # the handler ran out of time
    SERVICE = "service"  # our side (an outside service, a crash): staff run it again, nothing to do
    CHECK = "check"  # the handler stopped at one of its own checks


@dataclass(frozen=True)
class Limits:
    """Hard limits on an isolated handler, per job (see ``jobs.worker.sandbox``).

    ``memory_mb`` is what the handler may add to its process's data segment (memory committed); ``cpu_seconds``
    the CPU time it may burn. Wall-clock time is bounded by the job's deadline and by the
    ``JobContext.time_limit`` sections the handler declares.
    """

    memory_mb: int = 512
    cpu_seconds: float = 60.0


@dataclass(frozen=True)
class Kind:
    """What the queue needs of a kind: its handler, the input it accepts, its time and resource
    limits, its failure codes and whose doing each is, and what follows a completion."""

    name: str
    handler: Callable[[JobContext], dict[str, Any]]
    payload_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    max_payload_bytes: int = 64 * 1024
    deadline: timedelta = timedelta(minutes=5)
    lease: timedelta | None = None
    check_input: InputCheck | None = None
    diagnostic: bool = False
    # Made only by code on the server (the Tasks framework's backend), never offered to users:
    # its payload names a function for the worker to import and call.
    internal: bool = False
    # Kinds that read what users send run in a child process under ``limits``, so no input
    # can exhaust the worker's memory, hold its CPU or outlive the job's deadline.
    isolated: bool = False
    limits: Limits = field(default_factory=Limits)
    description: str = ""
    # A completed job's result in a few words (Summary), stored with the completion.
    summarize: Callable[[dict[str, Any]], Summary] | None = None
    # The kind's own failure codes (``JobFailed.code``) and whose doing each is, so a failed job is
    # told in the right words. Codes not named here: the queue's own reading of them
    # (``web.wording.failure``), else ``CHECK``.
    failures: Mapping[str, FailureCause] = field(default_factory=dict)
    # Called by the worker with a job's id once its completion has committed (never before, never
    # for a rejected one): the kind's follow-up work (the agent's webhooks). It must be idempotent
    # and quick; what it raises is logged and costs the job nothing.
    on_completed: Callable[[int], None] | None = None
    # At most this many of the kind's jobs running at once across all workers and hosts (None:
    # no limit), counted in the claim (``jobs.models.KindSlot``), so no kind can take every
    # worker; ``JOBS_KIND_MAX_RUNNING`` overrides it per kind.
    max_running: int | None = None
    # Loads what the kind's callables need (its handler's modules, the readers its input's checks use)
    # in the process that forks their children, once (``warmed``): a worker before the kind's first
    # job, a web process before its first input check. A process that never meets the kind
    # never pays for it (``runworkers`` of other kinds, a management command, a benchmark's child).
    warm: Callable[[], None] | None = None


_registry: dict[str, Kind] = {}
_warmed: set[str] = set()


def warmed(kind: Kind) -> Kind:
    """``kind`` after its ``warm`` has run in this process (once: forked children inherit it)."""
    if kind.warm is not None and kind.name not in _warmed:
        kind.warm()
        _warmed.add(kind.name)
    return kind


def warm_all() -> None:
    """Every registered kind warmed: a web process as it starts (``jobsite.wsgi``), which will meet
    them all. A worker warms a kind at its first job of it instead (``Worker._execute``): a host
    that drains other kinds, or a benchmark's short-lived workers, never loads what only another kind needs."""
    for kind in list(_registry.values()):
        warmed(kind)


def register(kind: Kind) -> Kind:
    if kind.name in _registry and _registry[kind.name] is not kind:
        raise ValueError(f"job kind {kind.name!r} is already registered")
    _registry[kind.name] = kind
    return kind


@contextmanager
def registered(kind: Kind) -> Iterator[Kind]:
    """Register ``kind`` for the duration of the block, then restore what the name had.

    For code that needs a kind briefly (tests, experiments); apps register theirs for good
    with ``register`` from ``AppConfig.ready()``.
    """
    previous = _registry.get(kind.name)
    _registry[kind.name] = kind
    try:
        yield kind
    finally:
        if previous is None:
            _registry.pop(kind.name, None)
        else:
            _registry[kind.name] = previous


def limits_for(kind: Kind) -> Limits:
    """The kind's limits, with what ``JOBS_KIND_LIMITS[kind.name]`` overrides (settings)."""
    override = queue_settings().kind_limits.get(kind.name)
    if not override:
        return kind.limits
    return Limits(**{**vars(kind.limits), **override})


def max_running(kind: Kind | None) -> int | None:
    """The kind's running limit, with what ``JOBS_KIND_MAX_RUNNING[kind.name]`` says instead (a
    number, or null for none)."""
    if kind is None:
        return None
    overrides = queue_settings().kind_max_running
    return overrides.get(kind.name, kind.max_running)


def running_limits() -> dict[str, int]:
    """Every registered kind with a running limit, and the limit."""
    limits = {name: max_running(kind) for name, kind in _registry.items()}
    return {name: limit for name, limit in limits.items() if limit is not None}


def get(name: str) -> Kind | None:
    return _registry.get(name)


def offered(name: str) -> Kind | None:
    """The kind if users may submit it: diagnostic kinds only when the setting allows, internal
    kinds never."""
    kind = _registry.get(name)
    if kind is None or kind.internal or (kind.diagnostic and not queue_settings().diagnostic_kinds):
        return None
    return kind


def internal_names() -> list[str]:
    """The kinds the server queues for itself (``Kind.internal``): nobody's documents."""
    return sorted(name for name, kind in _registry.items() if kind.internal)


def offered_kinds() -> list[Kind]:
    return [k for k in _registry.values() if offered(k.name)]
