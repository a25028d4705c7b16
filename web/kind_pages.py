"""What the product's pages ask of a job's kind, and each kind's answer, registered by the product.

The queue (``jobs.kinds``) runs a kind and knows nothing of how its jobs read. The pages do: an
app registers a ``KindPages`` for its kind from ``AppConfig.ready()`` (``register``), and a kind
that registers none is shown generically (``GenericPages``): its state, its timeline and its
result as JSON, so a second kind never inherits another's pages. What a kind offers beyond
reading its results it says with a capability flag, as Django's task backends say
``supports_defer``: the pages branch on the flag, never on a missing hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from jobs.kinds import Summary
from jobs.registry import KindRegistry

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from accounts.models import User
    from jobs.models import Job


@dataclass(frozen=True, kw_only=True)
class Words:
    """What a kind's submitters call its work, for the sentences the pages say about its jobs
    ("Running", "the run stops shortly", "our service had a problem"). The defaults are a queue's
    generic words; a kind says its own (``KindPages.words``).
    """

    running: str = "Running"  # a running job's state
    run: str = "run"  # one go at a job, a noun: "Run started", "the run ran out of time"
    waiting: str = "in line to run"  # a waiting job that has not been tried yet
    again: str = "to run again"  # "Staff sent it back to run again"
    service: str = "service"  # what runs the jobs: "our service had a problem"
    ran: str = "ran"  # a verb in the past: "it ran before page images were kept"
    unreadable: str = "submit a readable copy of the document"  # advice when its document could not be read


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


class Refused(Exception):
    """A kind refusing what a submitter asked of a finished job (a correction): a stable
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


@dataclass(frozen=True)
class Remark:
    """A line a kind adds to the submitter's history of a job (a member corrected a value)."""

    at: datetime
    words: str
    tone: str = ""  # good, attention, bad: what the timeline colours it by


class ResultPages(Protocol):
    """How a kind's jobs and results read: every kind answers these (the generic answers say little).
    Each hook takes what the kind stored and tolerates a result of another shape: staff may
    complete an unknown job with a note of their own."""

    words: Words  # what its submitters call its work, in the pages' sentences about its jobs
    outcomes: Mapping[str, str]  # its Summary.outcome codes and their labels, for the list's outcome filter
    result_template: str  # the template that shows a completed result (given ``result`` and ``view``); "": JSON

    def present(self, result: dict[str, Any]) -> dict[str, Any]:
        """A completed result -> the ``view`` its template shows: labelled, formatted values."""
        ...

    def export_columns(self, result: dict[str, Any]) -> dict[str, Any]:
        """A completed result -> one export row's columns after "document" and "outcome", in order:
        text, or a typed date or amount a spreadsheet keeps typed. The header is the union over rows."""
        ...

    def list_columns(self, result: dict[str, Any]) -> dict[str, str]:
        """A completed result -> what the list shows of it, by the list's column names (``status.LIST_COLUMNS``)."""
        ...

    def sort_key(self, key: str) -> Any:
        """A sort key of the list -> an expression over the kind's Job rows ordering them by that
        value as corrected (NULL when unknown); None: the kind cannot sort by it."""
        ...

    def tally(self, result: dict[str, Any]) -> str:
        """A completed result -> the words a batch's summary counts it under; "": its outcome's label."""
        ...

    def note(self, result: dict[str, Any]) -> str:
        """A completed result -> the text offered as a .txt download ("" when there is none)."""
        ...

    def boxes(self, result: dict[str, Any]) -> list[PageBox]:
        """A completed result -> the places it points at on the document's pages."""
        ...

    def progress_text(self, job_id: int) -> str | None:
        """A running job -> where it is, in the submitter's words ("validating, step 2 of 3")."""
        ...

    def revise(self, results: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """Completed results by job id -> the same as the members' corrections make them. The pages,
        downloads, the API and the export pass a result through it before the hooks above."""
        ...

    def history(self, job_id: int, viewer_id: int | None) -> list[Remark]:
        """Lines the kind adds to the submitter's history of a job (who corrected which value)."""
        ...

    def version_sql(self, job: str) -> tuple[str, ...]:
        """SQL expressions beside a job's row (``job``: its id column) whose values change whenever
        what the kind adds to the job's answer does without a write to the row (its work state, the
        earlier job it repeats): a poll's validator reads them in the job's own query
        (``web.status.job_version``). Empty when the kind adds nothing of its own."""
        ...


class CorrectionPages(Protocol):
    """A kind whose completed results its submitters may correct, field by field."""

    supports_corrections: bool

    def correct(self, *, job_id: int, tenant_id: int | None, user: User, field: str, value: str | None,
                confirm: bool, now: datetime) -> Correction:
        """Correct ``field`` of the job's result to ``value``, or confirm its value (``confirm``),
        for ``user`` of the tenant; raise ``Refused`` when it cannot be (nothing is written)."""
        ...


class DuplicatePages(Protocol):
    """A kind that flags a job whose input repeats an earlier one of the same tenant."""

    supports_duplicates: bool

    def duplicates(self, job_ids: list[int]) -> dict[int, Duplicate]:
        """Completed jobs -> the earlier job each one possibly repeats, for those that do: one call a page."""
        ...

    def duplicate_ids(self, tenant_id: int | None) -> QuerySet[Any, Any]:
        """The ids of the tenant's jobs flagged as possible duplicates (a subquery), for the list's filter."""
        ...


class WorkPages(Protocol):
    """A kind that keeps a work state per document (to do, handled...), apart from the job's state."""

    supports_work: bool
    work_states: Mapping[str, str]  # the states a member may set (code -> words), for the job page's form

    def work(self, jobs: list[Job]) -> dict[int, Work]:
        """Jobs -> each one's work state, its default for those nobody changed: one call a page."""
        ...

    def work_elsewhere(self, tenant_id: int | None, viewer_id: int | None) -> QuerySet[Any, Any]:
        """The ids of the tenant's jobs off that member's "Needs my action" (a subquery)."""
        ...

    def work_assigned(self, tenant_id: int | None, user_id: int) -> QuerySet[Any, Any]:
        """The ids of the tenant's jobs assigned to that member (a subquery)."""
        ...

    def work_history(self, job_id: int) -> list[tuple[datetime, str]]:
        """A job's work history, oldest first, as (when, words) lines for its page's history."""
        ...


class KindPages(ResultPages, CorrectionPages, DuplicatePages, WorkPages, Protocol):
    """Everything the pages ask of a kind; a product registers one per kind (``register``)."""


class GenericPages:
    """The pages of a kind that registered none: generic words, the result as it is (shown as
    JSON), and no corrections, duplicates or work states. A kind's own pages may start from it."""

    words = Words()
    outcomes: Mapping[str, str] = {}
    result_template = ""
    supports_corrections = False
    supports_duplicates = False
    supports_work = False
    work_states: Mapping[str, str] = {}

    def present(self, result: dict[str, Any]) -> dict[str, Any]:
        return {}

    def export_columns(self, result: dict[str, Any]) -> dict[str, Any]:
        return {}

    def list_columns(self, result: dict[str, Any]) -> dict[str, str]:
        return {}

    def sort_key(self, key: str) -> Any:
        return None

    def tally(self, result: dict[str, Any]) -> str:
        return ""

    def note(self, result: dict[str, Any]) -> str:
        return ""

    def boxes(self, result: dict[str, Any]) -> list[PageBox]:
        return []

    def progress_text(self, job_id: int) -> str | None:
        return None

    def revise(self, results: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
        return results

    def history(self, job_id: int, viewer_id: int | None) -> list[Remark]:
        return []

    def version_sql(self, job: str) -> tuple[str, ...]:
        return ()

    # What a flag says the kind does not offer is never asked (as Django's task backends do).

    def correct(self, *, job_id: int, tenant_id: int | None, user: User, field: str, value: str | None,
                confirm: bool, now: datetime) -> Correction:
        raise NotImplementedError("this kind's results cannot be corrected (supports_corrections)")

    def duplicates(self, job_ids: list[int]) -> dict[int, Duplicate]:
        raise NotImplementedError("this kind flags no duplicates (supports_duplicates)")

    def duplicate_ids(self, tenant_id: int | None) -> QuerySet[Any, Any]:
        raise NotImplementedError("this kind flags no duplicates (supports_duplicates)")

    def work(self, jobs: list[Job]) -> dict[int, Work]:
        raise NotImplementedError("this kind keeps no work states (supports_work)")

    def work_elsewhere(self, tenant_id: int | None, viewer_id: int | None) -> QuerySet[Any, Any]:
        raise NotImplementedError("this kind keeps no work states (supports_work)")

    def work_assigned(self, tenant_id: int | None, user_id: int) -> QuerySet[Any, Any]:
        raise NotImplementedError("this kind keeps no work states (supports_work)")

    def work_history(self, job_id: int) -> list[tuple[datetime, str]]:
        raise NotImplementedError("this kind keeps no work states (supports_work)")


GENERIC: KindPages = GenericPages()
_pages = KindRegistry[KindPages]("pages", GENERIC)
register = _pages.register
register_later = _pages.register_later
registered = _pages.registered
of = _pages.of
kinds_with_pages = _pages.kinds
