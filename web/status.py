"""Status reads for the web: a tenant's job, its events, its list, its batches, and when to ask again;
and each job's state in the submitter's words.

Polling is the hot read path (every open job page asks every few seconds), so a status
read is two indexed queries: the job by primary key and tenant, then its events by the
``jobevent_job_idx`` index. The payload is never loaded: it is not shown, and it may be
the largest column.

The words: a job is *Waiting*, *Reviewing*, *Done*, *Failed* or *Needs checking*; a finished
one has an outcome ("OK", "1 to correct" from its kind's summary; "failed — see why" and
"needs checking" derived from the state), and a tone the pages colour it by. The queue's
own terms (leases, epochs, markers) stay on the staff side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from typing import Any, Callable, Iterable, Iterator
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.paginator import Page, Paginator
from django.db.models import Case, Q, QuerySet, When
from django.http import Http404

from jobs import documents, kinds, queue
from jobs.errors import (
    DamagedDocument,
    DocumentTooComplex,
    DocumentUnpacksTooLarge,
    PayloadTooLarge,
    UnsupportedDocument,
)
from jobs.kinds import FailureCause
from jobs.models import Job, JobEvent, User
from jobs.queue import FailureCode

from . import schemas

STATUS_FIELDS = (
    "id", "tenant_id", "kind", "state", "epoch", "attempts", "max_attempts", "created_at", "updated_at",
    "finished_at", "deadline", "document", "document_name", "document_type", "document_size", "result",
    "last_error", "failure_code", "outcome", "outcome_text", "needs_action", "reference", "batch",
    "cancel_requested_at",
)
LIST_FIELDS = ("id", "kind", "state", "attempts", "created_at", "updated_at", "finished_at", "document_name",
               "outcome", "outcome_text", "needs_action", "reference", "batch", "last_error", "submitted_by")
MAX_EVENTS = 200
PAGE_SIZE = 20
# Seconds between status polls of a job page while the job is live: start at 1 s, back off to 5 s.
POLL_DELAYS = (1, 1, 2, 3, 5)
# Dead and unknown jobs wait for staff: their page still asks, slowly, so a staff fix shows.
SETTLING_POLL_SECONDS = 30
# API clients are told to wait at most this long between polls (Retry-After).
API_MAX_RETRY_AFTER = 10
LIST_POLL_SECONDS = 3
BATCH_POLL_DELAYS = (2, 2, 3, 5)
# At most this many rows in one CSV export (the newest that match).
EXPORT_LIMIT = 5000

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)
# Needs checking (unknown) is staff's to settle; the submitter acts on these.
NEEDS_SUBMITTER = Q(state=COMPLETED, needs_action=True) | Q(state=DEAD)


@dataclass(frozen=True)
class JobStatus:
    job: Job
    events: list[JobEvent]
    duplicate: kinds.Duplicate | None = None  # the earlier job it possibly repeats (once completed)


def job_status(*, tenant_id: int | None, job_id: int) -> JobStatus:
    """The job if it belongs to the tenant. Unknown and foreign ids raise the same Http404.
    A completed job's kind is asked whether it repeats an earlier one (a third query, once)."""
    job = job_query(tenant_id=tenant_id, job_id=job_id).first()
    if job is None:
        raise Http404("no such job")
    return JobStatus(job, list(events_query(job_id=job.pk)), duplicates_of([job]).get(job.pk))


def job_query(*, tenant_id: int | None, job_id: int):
    return Job.objects.for_tenant(tenant_id).filter(pk=job_id).only(*STATUS_FIELDS)


def duplicates_of(jobs: Iterable[Job]) -> dict[int, kinds.Duplicate]:
    """The earlier job each completed job possibly repeats, as its kind says (one query per kind
    and 500 jobs; none for jobs not completed)."""
    by_kind: dict[str, list[int]] = {}
    for job in jobs:
        if job.state == COMPLETED:
            by_kind.setdefault(job.kind, []).append(job.pk)
    found: dict[int, kinds.Duplicate] = {}
    for name, ids in by_kind.items():
        spec = kinds.get(name)
        hook = spec.presentation.duplicates if spec else None
        if hook is not None:
            for start in range(0, len(ids), 500):
                found.update(hook(ids[start:start + 500]))
    return found


def possible_duplicates(tenant_id: int | None) -> Q:
    """The tenant's jobs that some kind flags as possible duplicates of earlier ones."""
    match = Q(pk__in=[])
    for kind in kinds.offered_kinds():
        if kind.presentation.duplicate_ids:
            match |= Q(pk__in=kind.presentation.duplicate_ids(tenant_id))
    return match


# --- The document beside its result -------------------------------------------------------------


def job_document(*, tenant_id: int | None, job_id: int) -> Job:
    """The job, with its stored document's name and type, if it belongs to the tenant and has a
    document. Unknown and foreign ids, and jobs without a document, raise the same Http404."""
    job = (Job.objects.for_tenant(tenant_id).filter(pk=job_id).exclude(document="")
           .only("id", "tenant_id", "kind", "state", "document", "document_name", "document_type").first())
    if job is None:
        raise Http404("no such document")
    return job


@dataclass(frozen=True)
class DocumentPage:
    number: int
    url: str
    width: int  # pixels of its image
    height: int
    boxes: list[kinds.PageBox]


@dataclass(frozen=True)
class DocumentPane:
    """What the job's page shows of its document: the download, and its pages with the boxes the
    result points at, one page at a time (``current``), or why there are none."""

    name: str
    download_url: str
    pages: list[DocumentPage]
    current: int
    missing: str  # why no page is shown, in the submitter's words ("" when pages are shown)

    @property
    def page(self) -> DocumentPage | None:
        return self.pages[self.current - 1] if self.pages else None

    @property
    def previous(self) -> int | None:
        return self.current - 1 if self.current > 1 else None

    @property
    def next(self) -> int | None:
        return self.current + 1 if self.current < len(self.pages) else None


PAGES_LATER = "The pages show here once the review has read the document."
PAGES_BEFORE = ("There is no preview of this document's pages: it was reviewed before previews were kept, or its "
                "pages could not be drawn. Download the original to see it.")
NO_PAGES = "This kind of file has no pages to preview. Download the original to see it."


def document_pane(job: Job, *, page_url: Callable[[int], str], download_url: str,
                  requested: str | None = None, result: dict[str, Any] | None = None) -> DocumentPane | None:
    """The document pane of ``job`` (None without a document); ``requested`` is the page asked for
    (``?page=``: where a link to a box leads without script); ``result`` the result as the page shows
    it (``shown_result``), else the job's own."""
    if not job.document:
        return None
    images = documents.page_images(job.document) if job.is_terminal else []
    spec = kinds.get(job.kind)
    hook = spec.presentation.boxes if spec else None
    result = result if result is not None else job.result
    boxes = hook(result) if hook and job.state == COMPLETED and isinstance(result, dict) else []
    pages = [DocumentPage(image.number, page_url(image.number), image.width, image.height,
                          [box for box in boxes if box.page == image.number]) for image in images]
    try:
        current = min(max(int(requested or 1), 1), max(len(pages), 1))
    except ValueError:
        current = 1
    has_pages = job.document_type == "application/pdf" or (job.document_type or "").startswith("image/")
    missing = "" if pages else PAGES_LATER if not job.is_terminal else PAGES_BEFORE if has_pages else NO_PAGES
    return DocumentPane(job.document_name or "document", download_url, pages, current, missing)


def events_query(*, job_id: int):
    return (JobEvent.objects.filter(job_id=job_id).order_by("id")
            .only("id", "from_state", "to_state", "epoch", "actor", "reason", "at")[:MAX_EVENTS])


# --- The list -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobFilter:
    """Which of a tenant's jobs a list or an export shows. Empty values filter nothing."""

    tenant_id: int | None
    user_id: int | None = None  # only this member's jobs (the page's default: "mine")
    state: str = ""
    q: str = ""  # words in the document's name or reference, or a job id ("#12")
    outcome: str = ""  # a kind's summary outcome code
    needs_action: bool = False
    since: date | None = None  # days, inclusive, in ``zone``
    until: date | None = None
    zone: str = "UTC"
    duplicates: bool = False  # only possible duplicates of earlier jobs
    viewer_id: int | None = None  # whose "Needs my action" it is (a job assigned to another drops out)
    sort: str = ""  # a ``schemas.Sort`` value; "" the newest first


def zone_of(name: str) -> ZoneInfo | dt_timezone:
    """An IANA zone by name; UTC for an empty or unknown one."""
    try:
        return ZoneInfo(name) if name else dt_timezone.utc
    except (ZoneInfoNotFoundError, ValueError):
        return dt_timezone.utc


def filtered_jobs(f: JobFilter) -> QuerySet:
    """The jobs ``f`` selects, newest first (on the ``job_tenant_idx`` index)."""
    jobs = Job.objects.for_tenant(f.tenant_id).order_by("-id")
    if f.user_id is not None:
        mine = Q(submitted_by_id=f.user_id)
        if f.needs_action:  # and what the team assigned to them, whoever sent it
            mine |= work_assigned(f.tenant_id, f.user_id)
        jobs = jobs.filter(mine)
    if f.state in Job.State.values:
        jobs = jobs.filter(state=f.state)
    if f.outcome:
        jobs = jobs.filter(outcome=f.outcome)
    if f.needs_action:
        jobs = jobs.filter(NEEDS_SUBMITTER).exclude(resubmitted()).exclude(work_elsewhere(f.tenant_id, f.viewer_id))
    if f.duplicates:
        jobs = jobs.filter(possible_duplicates(f.tenant_id))
    words = f.q.strip()
    if words:
        match = Q(document_name__icontains=words) | Q(reference__icontains=words)
        number = words.lstrip("#")
        if number.isdigit() and len(number) < 19:
            match |= Q(pk=int(number))
        jobs = jobs.filter(match)
    zone = zone_of(f.zone)
    if f.since:
        jobs = jobs.filter(created_at__gte=datetime.combine(f.since, time.min, tzinfo=zone))
    if f.until:
        jobs = jobs.filter(created_at__lt=datetime.combine(f.until + timedelta(days=1), time.min, tzinfo=zone))
    return sorted_jobs(jobs, f.sort)


def sorted_jobs(jobs: QuerySet, sort: str) -> QuerySet:
    """``jobs`` in the order ``sort`` names: "submitted" (by id, which follows it), or a key the
    kinds sort by (``kinds.SORT_KEYS``: their expressions over their own rows, the members'
    corrections included), a leading "-" for descending; jobs without the value last, then the
    newest first. Any other value: the newest first."""
    key = sort.removeprefix("-")
    descending = sort.startswith("-")
    if key == "submitted":
        return jobs.order_by("-id" if descending else "id")
    if key not in kinds.SORT_KEYS:
        return jobs
    whens = [When(kind=kind.name, then=expression) for kind in kinds.offered_kinds()
             if kind.presentation.sort_key and (expression := kind.presentation.sort_key(key)) is not None]
    if not whens:
        return jobs
    value = Case(*whens, default=None)
    order = value.desc(nulls_last=True) if descending else value.asc(nulls_last=True)
    return jobs.order_by(order, "-id")


def job_page(*, tenant_id: int | None, state: str = "", page: Any = 1, **filters: Any) -> Page:
    """One page of the tenant's jobs, newest first, as ``JobFilter`` selects them."""
    # The result too: the list shows values from it (``list_columns_of``), for a page of 20 at most.
    jobs = filtered_jobs(JobFilter(tenant_id=tenant_id, state=state, **filters)).only(*LIST_FIELDS, "result")
    if filters.get("user_id") is None:
        jobs = jobs.select_related("submitted_by").only(*LIST_FIELDS, "result", "submitted_by__username")
    return Paginator(jobs, PAGE_SIZE).get_page(page)


def list_columns_of(jobs: Iterable[Job]) -> dict[int, dict[str, str]]:
    """What the list shows of each completed job's result (``kinds.LIST_COLUMNS``: supplier, invoice
    number and date, total with its currency), as its kind reads it through the members'
    corrections (``with_shown_results``); jobs without a result or a hook are left out."""
    found: dict[int, dict[str, str]] = {}
    for job, result in with_shown_results(jobs):
        spec = kinds.get(job.kind)
        hook = spec.presentation.list_columns if spec else None
        if hook is not None and isinstance(result, dict):
            found[job.pk] = hook(result)
    return found


def needing_action(*, tenant_id: int | None, user_id: int | None, viewer_id: int | None = None) -> int:
    """How many jobs the member (or the team) has something to do about: to do, and the viewer's
    or nobody's (``viewer_id``)."""
    return filtered_jobs(JobFilter(tenant_id=tenant_id, user_id=user_id, needs_action=True,
                                   viewer_id=viewer_id)).count()


# --- Work states: where the members are with a document, apart from its job's state -------------


def resubmitted() -> Q:
    """Failed jobs a member submitted again ("Submit again" notes it on the failed job): the new
    job carries the work, so the old one needs nothing more."""
    return Q(pk__in=JobEvent.objects.filter(to_state="", reason__startswith=queue.RESUBMITTED_AS).values("job_id"))


def work_elsewhere(tenant_id: int | None, viewer_id: int | None) -> Q:
    """The tenant's jobs that some kind's work state takes off the viewer's "Needs my action"
    (handled, ignored, waiting for the supplier, or assigned to another member)."""
    match = Q(pk__in=[])
    for hook in {kind.presentation.work_elsewhere for kind in kinds.offered_kinds()}:
        if hook is not None:
            match |= Q(pk__in=hook(tenant_id, viewer_id))
    return match


def work_assigned(tenant_id: int | None, user_id: int) -> Q:
    """The tenant's jobs some kind's work state assigns to the member."""
    match = Q(pk__in=[])
    for hook in {kind.presentation.work_assigned for kind in kinds.offered_kinds()}:
        if hook is not None:
            match |= Q(pk__in=hook(tenant_id, user_id))
    return match


def work_of(jobs: Iterable[Job]) -> dict[int, kinds.Work]:
    """Each job's work state, as its kind keeps them (one call per kind; none for kinds without)."""
    by_hook: dict[Any, list[Job]] = {}
    for job in jobs:
        spec = kinds.get(job.kind)
        if spec and spec.presentation.work:
            by_hook.setdefault(spec.presentation.work, []).append(job)
    found: dict[int, kinds.Work] = {}
    for hook, some in by_hook.items():
        found.update(hook(some))
    return found


def work_moments(job: Job) -> list[Moment]:
    """The job's work changes as lines of its page's history."""
    spec = kinds.get(job.kind)
    hook = spec.presentation.work_history if spec else None
    return [Moment(at, words) for at, words in hook(job.pk)] if hook else []


def members(tenant_id: int | None) -> list[tuple[int, str]]:
    """(id, username) of the tenant's active members, for an "assign to" choice."""
    if tenant_id is None:
        return []
    return list(User.objects.filter(tenant_id=tenant_id, is_active=True).order_by("username")
                .values_list("pk", "username"))


def outcome_choices() -> list[tuple[str, str]]:
    """(code, label) of every offered kind's outcomes, for the list's outcome filter."""
    choices: dict[str, str] = {}
    for kind in kinds.offered_kinds():
        choices.update(kind.presentation.outcomes)
    return list(choices.items())


# --- Batches ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchStatus:
    batch: str
    jobs: list[Job]

    @property
    def total(self) -> int:
        return len(self.jobs)

    @property
    def done(self) -> int:
        return sum(1 for job in self.jobs if job.is_terminal)

    @property
    def live(self) -> bool:
        return self.done < self.total

    @property
    def needing_action(self) -> int:
        return sum(1 for job in self.jobs if needs_submitter(job))

    @property
    def cancellable(self) -> int:
        """How many of its jobs a cancel would still stop: unfinished, and not already asked to."""
        return sum(1 for job in self.jobs if not job.is_terminal and job.cancel_requested_at is None)

    @property
    def settling(self) -> bool:
        """Some job waits for staff (dead or unknown): worth a slow look now and then."""
        return any(job.state in (DEAD, UNKNOWN) for job in self.jobs)

    @property
    def summary(self) -> str:
        """ "4 of 6 done, 1 to correct, 1 unreadable" while some are in progress; once none is,
        "Finished: 2 OK, 1 failed; with staff: 2 need checking". Staff's are counted apart: the
        jobs staff are confirming (needs checking) and the failures on our side they will run
        again (``failure(job).resubmit`` false)."""
        counts: dict[str, int] = {}
        staff: dict[str, int] = {}
        for job in self.jobs:
            if job.is_terminal:
                tally = staff if job.state == UNKNOWN or (job.state == DEAD and not failure(job).resubmit) else counts
                word = outcome_count_word(job)
                tally[word] = tally.get(word, 0) + 1
        parts = ", ".join(count_words(n, word) for word, n in counts.items())
        with_staff = ", ".join(count_words(n, word) for word, n in staff.items())
        head = "Finished" if not self.live else f"{self.done} of {self.total} done"
        text = f"{head}: {parts}" if not self.live and parts else ", ".join(filter(None, [head, parts]))
        return f"{text}; with staff: {with_staff}" if with_staff else text


def count_words(n: int, word: str) -> str:
    """ "1 needs checking", "2 need checking"; "3 OK"."""
    if word == CHECKING_WORDS and n != 1:
        word = "need checking"
    return f"{n} {word}"


def batch_status(*, tenant_id: int | None, batch: str) -> BatchStatus:
    """A batch's jobs in the order they were submitted. Unknown and foreign batches: the same 404."""
    jobs = list(Job.objects.for_tenant(tenant_id).filter(batch=batch).exclude(batch="")
                .only(*LIST_FIELDS, "failure_code", "cancel_requested_at").order_by("id")[:500])
    if not jobs:
        raise Http404("no such batch")
    return BatchStatus(batch, jobs)


def batch_poll_delay(polls: int) -> int:
    return BATCH_POLL_DELAYS[min(polls, len(BATCH_POLL_DELAYS) - 1)]


# --- Polling ------------------------------------------------------------------------------------


def poll_count(value: Any) -> int:
    """The ``poll`` counter a status poll carries (how many polls came before it)."""
    try:
        return min(max(int(value), 0), 1000)
    except (TypeError, ValueError):
        return 0


def poll_delay(polls: int) -> int:
    """Seconds before the next status poll of a live job: 1 s at first, backing off to 5 s."""
    return POLL_DELAYS[min(polls, len(POLL_DELAYS) - 1)]


def page_poll_delay(job: Job, polls: int) -> int | None:
    """When the job page asks again: soon while live, slowly while staff settle it, never once done."""
    if not job.is_terminal:
        return poll_delay(polls)
    if job.state in (DEAD, UNKNOWN):
        return SETTLING_POLL_SECONDS
    return None


def retry_after(job: Job, now: datetime) -> int:
    """Retry-After for API pollers: ask often for young jobs, every 10 s for old ones."""
    age = (now - job.created_at).total_seconds()
    return min(max(math.ceil(age / 10), 1), API_MAX_RETRY_AFTER)


def job_json(status: JobStatus) -> dict[str, Any]:
    """The job as ``GET /jobs/<id>`` answers it in JSON (``schemas.Job``)."""
    return schemas.Job.of(status.job, status.events, status.duplicate).to_json()


# --- In the submitter's words -------------------------------------------------------------------

STATE_WORDS = {QUEUED: "Waiting", LEASED: "Reviewing", COMPLETED: "Done", DEAD: "Failed",
               UNKNOWN: "Needs checking", "cancelled": "Cancelled"}
STATE_CHOICES = [(state, STATE_WORDS[state]) for state in Job.State.values if state in STATE_WORDS]
FAILED_WORDS = "failed — see why"
CHECKING_WORDS = "needs checking"


def state_words(state: str) -> str:
    return STATE_WORDS.get(state, state.capitalize())


def needs_submitter(job: Job) -> bool:
    return job.state == DEAD or (job.state == COMPLETED and job.needs_action)


def outcome_words(job: Job) -> str:
    """The outcome column: the kind's summary once done; derived from the state otherwise."""
    if job.state == COMPLETED:
        return job.outcome_text or "Done"
    if job.state == DEAD:
        return FAILED_WORDS
    if job.state == UNKNOWN:
        return CHECKING_WORDS
    if job.state == "cancelled":
        return "cancelled"
    return ""


def outcome_count_word(job: Job) -> str:
    """How a batch counts a finished job: "OK", "to correct", "unreadable", "failed"."""
    if job.state == COMPLETED:
        spec = kinds.get(job.kind)
        label = spec.presentation.outcomes.get(job.outcome) if spec else None
        if label:
            return label if label.isupper() else label.lower()
        return job.outcome_text or "done"
    return {DEAD: "failed", UNKNOWN: "needs checking"}.get(job.state, state_words(job.state).lower())


def tone(job: Job) -> str:
    """good, attention, bad, checking or pending: what the pages colour a job by."""
    if job.state == COMPLETED:
        if job.outcome == "unreadable":
            return "bad"
        return "attention" if job.needs_action else "good"
    return {DEAD: "bad", UNKNOWN: "checking", "cancelled": "neutral"}.get(job.state, "pending")


@dataclass(frozen=True)
class Failure:
    """Why a job failed, and what the submitter can do, in plain words."""

    why: str
    advice: str
    detail: str = ""  # the failing step's own words, when they were written for the submitter
    resubmit: bool = True  # whether to offer "Submit again" (not while staff will run it again)


# The queue's and the worker's failure codes by whose doing they are; a kind says the same of
# its own codes (``Presentation.failures``). Document failures are the input's (jobs.errors'
# refusals and the sandbox's limits): the same document would fail the same way.
DOCUMENT_CODES = frozenset({
    DamagedDocument.code, PayloadTooLarge.code, DocumentTooComplex.code, DocumentUnpacksTooLarge.code,
    UnsupportedDocument.code,
    FailureCode.MEMORY_LIMIT, FailureCode.CPU_LIMIT, FailureCode.TOO_DEEP, FailureCode.TIME_LIMIT,
})
TIME_CODES = frozenset({FailureCode.DEADLINE, FailureCode.DEADLINE_PASSED, FailureCode.NO_TIME_LEFT})
# Our side: the run was lost or crashed, with no code of the kind's to say more ("": a row
# whose error named none).
SERVICE_CODES = frozenset({
    "", FailureCode.LEASE_EXPIRED, FailureCode.ATTEMPTS_SPENT, FailureCode.HANDLER_ERROR,
    FailureCode.HANDLER_CRASHED, FailureCode.STOPPED, FailureCode.SHUTDOWN, FailureCode.BAD_RESULT,
    FailureCode.UNKNOWN_KIND,
})
READABLE_COPY = "submit a readable copy (a PDF with selectable text, a Word document or a text file)"


def failure_cause(kind: str, code: str) -> FailureCause:
    """Whose doing a failure with ``code`` was: the kind's word on its own codes first."""
    spec = kinds.get(kind)
    declared = spec.presentation.failures.get(code) if spec else None
    if declared is not None:
        return declared
    if code in DOCUMENT_CODES:
        return FailureCause.DOCUMENT
    if code in TIME_CODES:
        return FailureCause.TIME
    if code in SERVICE_CODES:
        return FailureCause.SERVICE
    return FailureCause.CHECK


def failure(job: Job) -> Failure:
    """A dead job's reason and what to do, chosen by its ``failure_code``; a document failure
    adds the failing step's message (``last_error`` after its code), written for the submitter."""
    code = job.failure_code
    if code == FailureCode.DISCARDED:
        return Failure("staff closed it: the review service could not finish it", "submit it again")
    cause = failure_cause(job.kind, code)
    if cause == FailureCause.DOCUMENT:
        message = (job.last_error or "").strip().removeprefix(f"{code}: ")
        return Failure("the document could not be read", READABLE_COPY, sentence(message))
    if cause == FailureCause.TIME:
        return Failure("the review ran out of time", "submit it again; if it happens again, tell your staff")
    if cause == FailureCause.SERVICE:
        return Failure("our review service had a problem",
                       "you need not do anything: staff have been told and will run it again", resubmit=False)
    return Failure("the review stopped at one of its safety checks", "submit it again; staff have been shown it")


def sentence(text: str) -> str:
    """A message as a sentence: a capital first letter and a full stop."""
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


@dataclass(frozen=True)
class Headline:
    """The job page's status line: "Reviewing — validating, step 2 of 3"."""

    title: str
    detail: str = ""
    tone: str = "pending"
    failure: Failure | None = None


def headline(job: Job, progress: str | None = None) -> Headline:
    if job.state == QUEUED:
        detail = "trying again shortly: the last try was interrupted" if job.attempts else "in line for review"
        return Headline("Waiting", detail, "pending")
    if job.state == LEASED:
        return Headline("Reviewing", progress or "", "pending")
    if job.state == COMPLETED:
        return Headline("Done", job.outcome_text or "", tone(job))
    if job.state == DEAD:
        return Headline("Failed", "", "bad", failure(job))
    if job.state == UNKNOWN:
        return Headline("Needs checking", "staff are confirming whether the review service finished; "
                        "this page updates when they have", "checking")
    return Headline(state_words(job.state), "", tone(job))


def progress_words(job: Job) -> str | None:
    """Where a running job is, as its kind says it (from its checkpoint); None for other states."""
    if job.state != LEASED:
        return None
    spec = kinds.get(job.kind)
    hook = spec.presentation.progress_text if spec else None
    return hook(job.pk) if hook else None


@dataclass(frozen=True)
class Moment:
    """One line of the submitter's timeline."""

    at: datetime
    words: str
    tone: str = ""


# A claim that ended with one of these was never started: a worker held it (prefetched) and
# died or stopped before it began (jobs.queue.recover, give_back_unstarted).
UNSTARTED_REASONS = ("returned unstarted", "handed back unstarted")


def timeline(events: Iterable[JobEvent], viewer_id: int | None = None) -> list[Moment]:
    """The events in the submitter's words. Rejected writes and notes (to_state empty), epochs
    and markers are staff matters and are left out, and so is a claim that was never started
    (the job only waited in a worker's hand): it was no try, and nothing was interrupted. A
    teammate's cancel or resubmission is said with their name ("you" for the viewer).

    A try is a claim whose attempt was spent: the external-call marker and its settling are
    notes on the running try, never tries. A deferral (the model provider said "not now", or
    the worker shut down before it began) gives the attempt back: it reads as a wait, the
    claims and deferrals that follow it until the review goes on read as one wait, and the
    claim that goes on reads "Review resumed", not as another try."""
    events = list(events)
    who = member_names(events, viewer_id)
    unstarted = {e.epoch for e in events
                 if e.from_state == LEASED and e.to_state == QUEUED and e.reason.startswith(UNSTARTED_REASONS)}
    moments: list[Moment] = []
    tries = 0
    waiting = False  # the last line shown is a deferral: claims and deferrals only continue it
    resumed: datetime | None = None  # a claim after a deferral, said once the review goes on
    for event in events:
        to, before = event.to_state, event.from_state
        by_staff = event.actor.startswith("staff:")
        member = who.get(event.actor)
        if waiting and to and not (event.epoch in unstarted and LEASED in (to, before) and not by_staff):
            if to == QUEUED and before == LEASED and event.reason.startswith(DEFERRED):
                resumed = None  # another "not now": still the same wait
                continue
            if to == LEASED and before == QUEUED:
                resumed = event.at
                continue
            if to == LEASED and before == LEASED and not event.reason.startswith(queue.CANCEL_REQUESTED):
                continue  # the worker's notes (the external-call marker): shown to nobody, they end no wait
            if resumed is not None:
                moments.append(Moment(resumed, "Review resumed"))
            waiting, resumed = False, None
        if not to and member and event.reason.startswith(queue.RESUBMITTED_AS):
            new_job = event.reason.removeprefix(queue.RESUBMITTED_AS)
            moments.append(Moment(event.at, f"Submitted again by {member}, as job {new_job}"))
            continue
        if not to:
            continue
        if event.epoch in unstarted and LEASED in (to, before) and not by_staff:
            continue
        if not before:
            moments.append(Moment(event.at, "Received"))
        elif to == LEASED and before == LEASED:  # a note on a running job: a cancel request is the submitter's
            if member and event.reason.startswith(queue.CANCEL_REQUESTED):
                moments.append(Moment(event.at, f"Cancel asked for by {member}: the review stops shortly"))
        elif to == LEASED:
            tries += 1
            moments.append(Moment(event.at, "Review started" if tries == 1 else f"Review started again (try {tries})"))
        elif to == QUEUED and by_staff:
            moments.append(Moment(event.at, "Staff sent it back to be reviewed again"))
        elif to == QUEUED and event.reason.startswith(DEFERRED):
            waiting = True
            moments.append(Moment(event.at, wait_words(event.reason)))
        elif to == QUEUED:
            moments.append(Moment(event.at, "Interrupted: it will be tried again shortly", "attention"))
        elif to == COMPLETED:
            moments.append(Moment(event.at, "Confirmed done by staff" if by_staff else "Done", "good"))
        elif to == DEAD:
            moments.append(Moment(event.at, "Closed by staff" if by_staff else "Failed", "bad"))
        elif to == UNKNOWN:
            moments.append(Moment(event.at, "Paused: staff are checking whether the review service finished",
                                  "checking"))
        elif to == CANCELLED:
            by = member or ("staff" if by_staff else "")
            moments.append(Moment(event.at, f"Cancelled by {by}" if by else "Cancelled"))
        else:
            moments.append(Moment(event.at, state_words(to)))
    if resumed is not None:  # running again after the wait
        moments.append(Moment(resumed, "Review resumed"))
    return moments


# A deferral's reason (``jobs.queue.defer``); the handler's own words follow it.
DEFERRED = "deferred: "
# Whose "not now" a deferral was, by words of its reason (the agent's model and planner calls,
# and the provider slots every host shares: ``jobs.context``).
PROVIDER_WORDS = ("provider", "planner", "(429)")


def wait_words(reason: str) -> str:
    """A deferral in the submitter's words: who asked to wait; no try was spent."""
    if any(word in reason for word in PROVIDER_WORDS):
        return "Waiting for the model provider, which asked us to slow down: the review goes on shortly"
    return "Paused: the review goes on shortly"


def member_names(events: Iterable[JobEvent], viewer_id: int | None) -> dict[str, str]:
    """The members behind ``user:<id>`` actors of the events said with a name (a cancel, a cancel
    request, a resubmission), by actor: "you" for the viewer, else the username. Most timelines
    have none, and cost no query (a status poll is two)."""
    ids = {int(e.actor[5:]) for e in events if e.actor.startswith("user:") and e.actor[5:].isdigit()
           and (e.to_state == CANCELLED or (e.to_state == LEASED and e.from_state == LEASED)
                or (not e.to_state and e.reason.startswith(queue.RESUBMITTED_AS)))}
    if not ids:
        return {}
    names = dict(User.objects.filter(pk__in=ids).values_list("pk", "username"))
    return {f"user:{pk}": "you" if pk == viewer_id else names[pk] for pk in ids if pk in names}


# --- The export ---------------------------------------------------------------------------------

EXPORT_HEAD = ("Document", "Outcome")
EXPORT_TAIL = ("Work state", "Assignee", "Job", "Link", "State")
DUPLICATE_COLUMN = "Possible duplicate of"
# A cell a spreadsheet would run as a formula: prefixed with ' (numbers are left alone).
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


@dataclass
class Export:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


def zone_name(name: str) -> str:
    """The zone's name as a header says it: an IANA name, else "UTC" (for an empty or unknown one)."""
    zone = zone_of(name)
    return zone.key if isinstance(zone, ZoneInfo) else "UTC"


def export(jobs: Iterable[Job], *, zone: str = "UTC", link: Callable[[int], str] | None = None) -> Export:
    """One row per document: its name, its outcome, then the kind's columns (each field's value,
    its issues in words...), then its work state and assignee, the job, its page (``link``), its
    state, and when it was submitted and reviewed, in ``zone`` (named in the header). The header is
    the union of the kinds' columns, in the order they first appear."""
    named = zone_name(zone)
    tz = zone_of(named)
    columns: dict[str, None] = {}
    records: list[tuple[Job, dict[str, str]]] = []
    for job, result in with_shown_results(jobs):
        spec = kinds.get(job.kind)
        hook = spec.presentation.export_columns if spec else None
        values = hook(result) if hook and result is not None else {}
        columns.update(dict.fromkeys(values))
        records.append((job, values))
    # A kind that flags duplicates adds their column, just before the job's own.
    duplicates = duplicates_of(job for job, _ in records)
    if any((spec := kinds.get(job.kind)) and spec.presentation.duplicates for job, _ in records):
        columns[DUPLICATE_COLUMN] = None
    works: dict[int, kinds.Work] = {}
    for start in range(0, len(records), 500):
        works.update(work_of(job for job, _ in records[start:start + 500]))

    def moment(at: datetime | None) -> str:
        return at.astimezone(tz).strftime("%Y-%m-%d %H:%M") if at else ""

    # The header too: a column is named by the result (a field a triage outcome invented, say).
    out = Export([safe_cell(name) for name in (*EXPORT_HEAD, *columns, *EXPORT_TAIL,
                                               f"Submitted ({named})", f"Reviewed at ({named})")])
    for job, values in records:
        if job.pk in duplicates:
            values = {**values, DUPLICATE_COLUMN: duplicate_words(duplicates[job.pk])}
        work = works.get(job.pk)
        row = [job.document_name or f"job {job.pk}", outcome_words(job) or state_words(job.state).lower(),
               *(values.get(name, "") for name in columns),
               work.words if work else "", work.assignee if work else "",
               str(job.pk), link(job.pk) if link else "", state_words(job.state),
               moment(job.created_at), moment(job.finished_at)]
        out.rows.append([safe_cell(cell) for cell in row])
    return out


def export_filename(zone: str, today: datetime) -> str:
    """ "docket-documents-2026-12-04.csv": the day in the reader's zone."""
    return f"docket-documents-{today.astimezone(zone_of(zone)):%Y-%m-%d}.csv"


def duplicate_words(duplicate: kinds.Duplicate) -> str:
    """ "#12 (same file; sent 2026-03-11 09:30 UTC by bob)": a CSV cell, in UTC like the rest of the export."""
    sent = duplicate.sent_at.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M")
    return f"#{duplicate.job_id} ({duplicate.match}; sent {sent} UTC by {duplicate.by})"


def shown_result(job: Job) -> Any:
    """A completed job's result as its submitters see it: through its kind's ``revise`` hook (their
    corrections applied, the kind's own result kept inside). None until the job is completed."""
    return next(with_shown_results([job]))[1]


def with_shown_results(jobs: Iterable[Job], *, chunk: int = 500) -> Iterator[tuple[Job, Any]]:
    """Each job with its result as ``shown_result`` reads it (None unless completed), asking each
    kind's ``revise`` hook once per ``chunk`` jobs rather than once a job."""
    def revised(group: list[Job]) -> Iterator[tuple[Job, Any]]:
        shown: dict[int, Any] = {}
        by_kind: dict[str, dict[int, dict[str, Any]]] = {}
        for job in group:
            if job.state == COMPLETED and job.result is not None:
                shown[job.pk] = job.result
                if isinstance(job.result, dict):
                    by_kind.setdefault(job.kind, {})[job.pk] = job.result
        for name, results in by_kind.items():
            spec = kinds.get(name)
            if spec is not None and spec.presentation.revise is not None:
                shown.update(spec.presentation.revise(results))
        return ((job, shown.get(job.pk)) for job in group)

    group: list[Job] = []
    for job in jobs:
        group.append(job)
        if len(group) >= chunk:
            yield from revised(group)
            group = []
    if group:
        yield from revised(group)


def safe_cell(value: str) -> str:
    """Text from documents must not become a formula in Alice's spreadsheet."""
    return "'" + value if _FORMULA.match(value) and not _NUMBER.match(value) else value


def export_jobs(f: JobFilter) -> Iterator[Job]:
    return filtered_jobs(f).only(*LIST_FIELDS, "result")[:EXPORT_LIMIT].iterator(chunk_size=500)
