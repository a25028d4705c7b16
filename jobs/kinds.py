"""The one place job kinds are registered: name -> handler, payload schema, limits.

The queue knows no workflow; apps register their kinds from ``AppConfig.ready()``.
Acceptance refuses any kind that is not registered here (or not offered to users).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .conf import queue_settings

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from .context import JobContext
    from .models import User


class DocumentCheck(Protocol):
    def __call__(self, *, content: bytes, name: str, content_type: str) -> str:
        """Raise an AcceptanceError if the document is refused; return its media type."""


class InputCheck(Protocol):
    def __call__(self, *, payload: dict[str, Any], has_document: bool) -> None:
        """Raise an AcceptanceError for input the schema alone cannot refuse."""


class JobFailed(Exception):
    """Raised by a handler to fail its job. ``retryable=False`` sends it to ``dead``."""

    def __init__(self, message: str, *, retryable: bool = True, code: str = "handler_failed") -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.code = code


class JobDeferred(Exception):
    """Raised by a handler to hand the job back until ``until`` without spending an attempt.

    For a provider's 429: the outside system said "not now", which proves it did nothing.
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


@dataclass(frozen=True, kw_only=True)
class PageBox:
    """A place on a document's page that a result points at (where a value was read), in
    percent of the page's width and height, so it is drawn at any size the page is shown."""

    id: str  # unique on the job's page: what a link to it names ("box-total_amount")
    page: int  # from 1
    left: float
    top: float
    width: float
    height: float
    label: str  # what it shows, in the submitter's words ("Total amount")
    tone: str = ""  # the kind's status code, for its colour ("present", "to_check")


@dataclass(frozen=True, kw_only=True)
class Duplicate:
    """An earlier job of the same tenant whose input a job's seems to repeat (the same document sent
    again), as the kind compares them: what the pages, the export and the API flag."""

    job_id: int
    sent_at: datetime  # when that job was submitted
    by: str  # its submitter's username
    by_id: int | None  # its submitter (the pages say "you" to them)
    document_name: str  # "" for pasted text
    match: str  # how they match, in the submitter's words ("same file")


@dataclass(frozen=True, kw_only=True)
class Work:
    """Where the tenant's members are with a job's document, apart from the job's state: its work
    state (the kind's code and words: "to do", "handled"...), who it is assigned
    to, and a short note."""

    state: str  # "" when there is nothing to do and no member said otherwise
    words: str
    assignee_id: int | None = None
    assignee: str = ""  # the assignee's username
    note: str = ""


class FailureCause(StrEnum):
    """Whose doing a failure was, as the submitter is told it (``web.wording.failure``)."""

    DOCUMENT = "document"  # the input itself: the same input fails the same way; send another copy
    TIME = "time"  # the handler ran out of time
    SERVICE = "service"  # our side (the provider, a crash): staff run it again, nothing to do
    CHECK = "check"  # the handler stopped at one of its own checks


class Refused(Exception):
    """A kind's hook refusing what a submitter asked of a finished job (a correction): a stable
    code, the reason in the submitter's words, and the status the web answers with (400: the
    input; 404: no such job for this tenant; 409: not possible in the job's state), with the
    input at fault for a 400 and the job's state for a 409."""

    def __init__(self, status: int, code: str, message: str, *, field: str | None = None,
                 state: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field, self.state = status, code, message, field, state


@dataclass(frozen=True, kw_only=True)
class Correction:
    """One field of a completed result corrected (or confirmed as seen) by a member of its tenant,
    as the kind recorded it: the value it now has and its check, the value before, the
    handler's own, who and when, and the job's summary as the kind now reads the result."""

    field: str
    label: str  # the field in the submitter's words ("IBAN / bank account")
    value: str | None  # as the field's check keeps it (an IBAN grouped in fours, a date in ISO)
    status: str  # the kind's status code, from the same check the handler ran
    detail: str
    confirmed: bool  # the member confirmed the value as it was, rather than typing another
    previous_value: str | None  # before this correction (the handler's, or an earlier correction's)
    original_value: str | None  # the handler's own, kept for the audit
    original_status: str
    by: str  # the member's username
    at: datetime
    summary: Summary | None = None


class Corrector(Protocol):
    def __call__(self, *, job_id: int, tenant_id: int | None, user: User, field: str, value: str | None,
                 confirm: bool, now: datetime) -> Correction:
        """Correct ``field`` of the job's result to ``value``, or confirm its value (``confirm``),
        for ``user`` of the tenant; raise ``Refused`` when it cannot be (nothing is written)."""


@dataclass(frozen=True)
class Remark:
    """A line a kind adds to the submitter's history of a job (a member corrected a value)."""

    at: datetime
    words: str
    tone: str = ""  # good, attention, bad: what the timeline colours it by


@dataclass(frozen=True, kw_only=True)
class Words:
    """What a kind's submitters call its work, for the sentences the pages say about its jobs
    ("Running", "the run stops shortly", "our service had a problem"). The defaults are a queue's
    generic words; a kind says its own (``Presentation.words``).
    """

    running: str = "Running"  # a running job's state
    run: str = "run"  # one go at a job, a noun: "Run started", "the run ran out of time"
    waiting: str = "in line to run"  # a waiting job that has not been tried yet
    again: str = "to run again"  # "Staff sent it back to run again"
    service: str = "service"  # what runs the jobs: "our service had a problem"
    ran: str = "ran"  # a verb in the past: "it ran before page images were kept"
    unreadable: str = "submit a readable copy of the document"  # advice when its document could not be read


@dataclass(frozen=True)
class Presentation:
    """How a kind's jobs read on the submitter's pages, so the pages show them without knowing a
    result's shape. Every hook is optional; a kind without them is shown generically.
    """

    # Summary outcome codes (Summary.outcome) and their labels, for the list's outcome filter.
    outcomes: dict[str, str] = field(default_factory=dict)
    # A completed result -> extra context for ``Kind.result_template`` (given as ``view``):
    # labelled, formatted values the template shows.
    present: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # A completed result -> one export row's columns after "document" and "outcome", in order
    # (e.g. each field's value and status): text, or a typed date or amount (``date``,
    # ``Decimal``) that a spreadsheet export keeps typed. The header is the union over its rows.
    export_columns: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # A completed result -> the text offered as a .txt download ("" when there is none).
    note: Callable[[dict[str, Any]], str] | None = None
    # A running job's id -> where it is, in the submitter's words ("validating, step 2 of 3").
    progress_text: Callable[[int], str | None] | None = None
    # A completed result -> the places it points at on the document's pages (``PageBox``),
    # drawn over the page images beside the result.
    boxes: Callable[[dict[str, Any]], list[PageBox]] | None = None
    # Completed jobs' ids -> the earlier job each one possibly repeats (``Duplicate``), for those
    # that do: one call for a page of jobs. Only ever a job of the same tenant.
    duplicates: Callable[[list[int]], dict[int, Duplicate]] | None = None
    # A tenant -> the ids of its jobs flagged as possible duplicates (a subquery of job ids), for
    # the list's filter.
    duplicate_ids: Callable[[int | None], QuerySet[Any, Any]] | None = None
    # The kind's own failure codes (``JobFailed.code``) and whose doing each is, so a failed
    # job's page says why in the right words. Codes not named here: the queue's own reading
    # of them (``web.wording.failure``), else ``CHECK``.
    failures: dict[str, FailureCause] = field(default_factory=dict)
    # Completed results by job id -> the same results as the submitters' corrections make them
    # (each corrected field with its new value and check, the handler's own kept beside it); a
    # job without corrections comes back as it was. The pages, downloads, the API and the CSV
    # pass a result through it before the hooks above.
    revise: Callable[[dict[int, dict[str, Any]]], dict[int, dict[str, Any]]] | None = None
    # Correct one field of a completed result, or confirm it as seen (``Corrector``).
    correct: Corrector | None = None
    # A job's id and the viewer's user id -> lines for the submitter's history of the job.
    history: Callable[[int, int | None], list[Remark]] | None = None
    # The work states a member may set (code -> words), for the job page's form; none: no work
    # state is kept for this kind.
    work_states: dict[str, str] = field(default_factory=dict)
    # Jobs -> each one's work state (``Work``), its default for those nobody changed: one call
    # for a page of jobs.
    work: Callable[[list[Any]], dict[int, Work]] | None = None
    # (tenant, member) -> the ids of the tenant's jobs off that member's "Needs my action" (not to
    # do any more, or assigned to another member), as a subquery of job ids.
    work_elsewhere: Callable[[int | None, int | None], QuerySet[Any, Any]] | None = None
    # A job's id -> its work history, oldest first, as (when, words) lines for its page's history.
    work_history: Callable[[int], list[tuple[datetime, str]]] | None = None
    # (tenant, member) -> the ids of the tenant's jobs assigned to that member (a subquery): on
    # their "Needs my action" whoever sent them.
    work_assigned: Callable[[int | None, int], QuerySet[Any, Any]] | None = None
    # A completed result (as ``revise`` makes it) -> what the list shows of it, by the names of
    # the columns the pages' list has, in the submitter's words.
    list_columns: Callable[[dict[str, Any]], dict[str, str]] | None = None
    # A sort key of the pages' list -> an expression over the kind's Job rows that orders them by
    # that value as corrected (NULL when unknown), so the database sorts a tenant's list; None:
    # the kind cannot sort by it.
    sort_key: Callable[[str], Any] | None = None
    # A completed result (as ``revise`` makes it) -> the words a batch's summary counts the job
    # under ("OK", "to correct", "not found"): one bucket a job. None: its outcome's label.
    tally: Callable[[dict[str, Any]], str] | None = None
    # What the kind's submitters call its work, in the pages' sentences about its jobs.
    words: Words = field(default_factory=Words)


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
    name: str
    handler: Callable[[JobContext], dict[str, Any]]
    payload_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    max_payload_bytes: int = 64 * 1024
    deadline: timedelta = timedelta(minutes=5)
    lease: timedelta | None = None
    accepts_document: bool = False
    max_document_bytes: int = 0
    check_document: DocumentCheck | None = None
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
    # For staff pages: the kind's own view of a job's progress (the agent's checkpoint),
    # so the queue app can show it without importing the app that owns it.
    progress: Callable[[int], dict[str, Any] | None] | None = None
    # For the job page: the template that shows a completed job's result (given ``result``),
    # so the queue app shows it without knowing its shape. Empty: the result as JSON.
    result_template: str = ""
    # For the submitter's pages: outcome labels, the result's presentation, CSV columns,
    # the note to download, progress in words.
    presentation: Presentation = field(default_factory=Presentation)
    # For staff settling an ``unknown`` job: what the kind recorded of its outside call, as
    # (label, value) lines in words (the step, the idempotency key, the provider's request id,
    # the last checkpoint), never the document's text or a prompt.
    evidence: Callable[[int], list[tuple[str, str]]] | None = None
    # For staff triaging a job that stopped on one of the kind's own failure codes
    # (``JobFailed.code``): what to do, by the job's state and then that code, in place of the
    # queue's line for the state (``jobs.admin.guidance``). The queue's own codes have theirs.
    staff_guidance: dict[str, dict[str, str]] = field(default_factory=dict)
    # Called by the worker with a job's id once its completion has committed (never before, never
    # for a rejected one): the kind's follow-up work (the agent's webhooks). It must be idempotent
    # and quick; what it raises is logged and costs the job nothing.
    on_completed: Callable[[int], None] | None = None
    # At most this many of the kind's jobs running at once across all workers and hosts (None:
    # no limit), counted in the claim (``jobs.models.KindSlot``), so no kind can take every
    # worker; ``JOBS_KIND_MAX_RUNNING`` overrides it per kind.
    max_running: int | None = None


_registry: dict[str, Kind] = {}


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
