"""Status reads for the web: a tenant's job, its events, its list, its batches, its document.

Polling is the hot read path (every open job page asks every few seconds), so a status
read is two indexed queries: the job by primary key and tenant, then its events by the
``jobevent_job_idx`` index. The payload is never loaded: it is not shown, and it may be
the largest column. The words the pages say them in are ``web.wording``'s; the CSV export
is ``web.exports``; when to ask again, ``web.polling``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cache, cached_property
from typing import Any

from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import Case, Q, QuerySet, When
from django.db.models.expressions import RawSQL
from django.http import Http404

from accounts.models import User
from documents import store as document_store
from documents.models import of as document_of
from jobs import kinds, queue
from jobs.models import Job, JobEvent

from . import kind_pages, schemas, wording, zones
from .kind_pages import Duplicate, PageBox, Work

STATUS_FIELDS = (
    "id", "scope_id", "kind", "state", "epoch", "attempts", "max_attempts", "created_at", "updated_at",
    "finished_at", "deadline", "document__name", "document__original_name", "document__content_type",
    "document__size", "result",
    "last_error", "failure_code", "outcome", "outcome_text", "needs_action", "reference", "batch",
    "cancel_requested_at",
)
# Read with ``select_related("document")``: its name in the same query as the job, never one query a row.
LIST_FIELDS = ("id", "kind", "state", "attempts", "created_at", "updated_at", "finished_at",
               "document__original_name", "outcome", "outcome_text", "needs_action", "reference", "batch", "last_error",
               "submitted_by")
MAX_EVENTS = 200
# The most digits a job number can have and still fit a 64-bit key (19 digits may overflow it).
ID_DIGITS = 18
# The list's columns a kind may fill (``KindPages.list_columns``), and the keys it may sort by
# (``KindPages.sort_key``).
LIST_COLUMNS = ("supplier", "number", "invoice_date", "total")
SORT_KEYS = ("invoice_date", "total", "supplier")
PAGE_SIZE = 20
QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)
# Needs checking (unknown) is staff's to settle; the submitter acts on these.
NEEDS_SUBMITTER = Q(state=COMPLETED, needs_action=True) | Q(state=DEAD)


@dataclass(frozen=True)
class JobStatus:
    job: Job
    events: list[JobEvent]
    duplicate: Duplicate | None = None  # the earlier job it possibly repeats (once completed)

    tag: str = ""  # ``job_version``'s tag of the job as this read found it (``tagged`` reads only)


def job_status(*, tenant_id: int | None, job_id: int, tagged: bool = False) -> JobStatus:
    """The job if it belongs to the tenant; ``tagged``: with its version (``job_version``'s columns)
    in the same query, for an answer that carries its ETag. Unknown and foreign ids raise the same
    Http404. A completed job's kind is asked whether it repeats an earlier one (a third query, once)."""
    columns = _version_columns(connection.ops.quote_name(Job._meta.db_table)) if tagged else ()
    job = (job_query(tenant_id=tenant_id, job_id=job_id)
           .annotate(**{name: RawSQL(sql, ()) for name, sql in columns}).first())  # noqa: S611  the kinds' own SQL, no input
    if job is None:
        raise Http404("no such job")
    return JobStatus(job, list(events_query(job_id=job.pk)), duplicates_of([job]).get(job.pk),
                     tag=_tag(job, columns) if tagged else "")


# ``needs_action`` too: a kind's work state defaults from it (a deferred field would be a query more).
VERSION_FIELDS = ("id", "scope_id", "kind", "state", "epoch", "attempts", "created_at", "updated_at", "finished_at",
                  "needs_action")


@dataclass(frozen=True)
class JobVersion:
    tag: str  # a weak ETag
    job: Job  # only VERSION_FIELDS loaded


def job_version(*, tenant_id: int | None, job_id: int) -> JobVersion:
    """A validator (a weak ETag) of what ``GET /jobs/<id>`` answers about the job, read without
    building the answer, in one query: the job's VERSION_FIELDS (every write to its row moves
    ``updated_at``; a member's correction does too, in ``queue.amending``), its newest event's id
    (a rejected write adds one and changes no row), and what its kind adds to the answer without a
    write to the row (``KindPages.version_sql``: its work state, the earlier job it repeats).
    The tenant's jobs alone (``Job.objects.for_scope``'s rule: no tenant, no job; internal kinds
    are nobody's): unknown and foreign ids raise the same Http404 as ``job_status``.

    Written out once, not built by the ORM on each call: a poll reads this every second or so,
    and building the queries cost several times what the database spends answering them."""
    columns, job = _version_columns("j"), None
    if tenant_id is not None:
        job = next(iter(Job.objects.raw(_version_sql(columns), [job_id, tenant_id])), None)
    if job is None or job.kind in kinds.internal_names():
        raise Http404("no such job")
    return JobVersion(_tag(job, columns), job)


def _tag(job: Job, columns: tuple[tuple[str, str], ...]) -> str:
    """The weak ETag of a job read with the version's ``columns`` (``newest_event``, ``kind_1``...)."""
    parts = [job.pk, job.state, job.epoch, job.attempts, job.updated_at.isoformat(),
             job.finished_at.isoformat() if job.finished_at else ""]
    parts += [getattr(job, name) or "" for name, _ in columns]
    digest = hashlib.blake2b("|".join(str(part) for part in parts).encode(), digest_size=12).hexdigest()
    return f'W/"{digest}"'


def _version_columns(table: str) -> tuple[tuple[str, str], ...]:
    """The version's columns beyond the row's, as SQL beside the job's row in ``table`` (an alias
    or the table's quoted name): its newest event's id, and every kind's ``version_sql`` (a job's
    own kind's find its rows, the others' find none: each reads its own tables by the job's id)."""
    q = connection.ops.quote_name
    job = f"{table}.{q('id')}"
    found = {f"(SELECT e.{q('id')} FROM {q(JobEvent._meta.db_table)} e "  # noqa: S608  names, quoted
             f"WHERE e.{q('job_id')} = {job} ORDER BY e.{q('id')} DESC LIMIT 1)": None}
    for name in kind_pages.kinds_with_pages():
        found.update(dict.fromkeys(kind_pages.of(name).version_sql(job)))
    return tuple(("newest_event" if n == 0 else f"kind_{n}", sql) for n, sql in enumerate(found))


@cache
def _version_sql(columns: tuple[tuple[str, str], ...]) -> str:
    q = connection.ops.quote_name
    column = {field.attname: field.column for field in Job._meta.concrete_fields}  # scope_id's is tenant_id
    selected = ", ".join([*(f"j.{q(column[name])}" for name in VERSION_FIELDS),
                          *(f"{sql} AS {name}" for name, sql in columns)])
    return (f"SELECT {selected} FROM {q(Job._meta.db_table)} j "  # noqa: S608  names, quoted
            f"WHERE j.{q('id')} = %s AND j.{q(column['scope_id'])} = %s")


def job_query(*, tenant_id: int | None, job_id: int) -> QuerySet[Job]:
    return Job.objects.for_scope(tenant_id).filter(pk=job_id).select_related("document").only(*STATUS_FIELDS)


def duplicates_of(jobs: Iterable[Job]) -> dict[int, Duplicate]:
    """The earlier job each completed job possibly repeats, as its kind says (one query per kind
    and 500 jobs; none for jobs not completed)."""
    by_kind: dict[str, list[int]] = {}
    for job in jobs:
        if job.state == COMPLETED:
            by_kind.setdefault(job.kind, []).append(job.pk)
    found: dict[int, Duplicate] = {}
    for name, ids in by_kind.items():
        pages = kind_pages.of(name)
        if pages.supports_duplicates:
            for start in range(0, len(ids), 500):
                found.update(pages.duplicates(ids[start:start + 500]))
    return found


def possible_duplicates(tenant_id: int | None) -> Q:
    """The tenant's jobs that some kind flags as possible duplicates of earlier ones."""
    match = Q(pk__in=[])
    for kind in kinds.offered_kinds():
        if (pages := kind_pages.of(kind.name)).supports_duplicates:
            match |= Q(pk__in=pages.duplicate_ids(tenant_id))
    return match


def job_document(*, tenant_id: int | None, job_id: int) -> Job:
    """The job, with its stored document's name and type, if it belongs to the tenant and has a
    document. Unknown and foreign ids, and jobs without a document, raise the same Http404."""
    job = (Job.objects.for_scope(tenant_id).filter(pk=job_id, document__isnull=False).select_related("document")
           .only("id", "scope_id", "kind", "state", "document__name", "document__original_name",
                 "document__content_type").first())
    if job is None:
        raise Http404("no such document")
    return job


@dataclass(frozen=True)
class DocumentPage:
    number: int
    url: str
    width: int  # pixels of its image
    height: int
    boxes: list[PageBox]


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


# Why a document pane has no pages, in the kind's words (``KindPages.words``).
PAGES_LATER = "The pages show here once the {run} has read the document."
PAGES_BEFORE = ("There is no preview of this document's pages: it {ran} before previews were kept, or its "
                "pages could not be drawn. Download the original to see it.")
NO_PAGES = "This kind of file has no pages to preview. Download the original to see it."


def document_pane(job: Job, *, page_url: Callable[[int], str], download_url: str,
                  requested: str | None = None, result: dict[str, Any] | None = None) -> DocumentPane | None:
    """The document pane of ``job`` (None without a document); ``requested`` is the page asked for
    (``?page=``: where a link to a box leads without script); ``result`` the result as the page shows
    it (``shown_result``), else the job's own."""
    document = document_of(job)
    if document is None:
        return None
    images = document_store.page_images(document.name) if job.is_terminal else []
    result = result if result is not None else job.result
    boxes = kind_pages.of(job.kind).boxes(result) if job.state == COMPLETED and isinstance(result, dict) else []
    pages = [DocumentPage(image.number, page_url(image.number), image.width, image.height,
                          [box for box in boxes if box.page == image.number]) for image in images]
    try:
        current = min(max(int(requested or 1), 1), max(len(pages), 1))
    except ValueError:
        current = 1
    has_pages = document.content_type == "application/pdf" or document.content_type.startswith("image/")
    missing = "" if pages else PAGES_LATER if not job.is_terminal else PAGES_BEFORE if has_pages else NO_PAGES
    words = wording.words_of(job.kind)
    missing = missing.format(run=words.run, ran=words.ran)
    return DocumentPane(document.original_name or "document", download_url, pages, current, missing)


def events_query(*, job_id: int) -> QuerySet[JobEvent]:
    return (JobEvent.objects.filter(job_id=job_id).order_by("id")
            .only("id", "from_state", "to_state", "epoch", "actor", "reason", "at")[:MAX_EVENTS])


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


def filtered_jobs(f: JobFilter) -> QuerySet[Job]:
    """The jobs ``f`` selects, newest first (on the ``job_tenant_idx`` index)."""
    jobs = Job.objects.for_scope(f.tenant_id).order_by("-id")
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
        match = Q(document__original_name__icontains=words) | Q(reference__icontains=words)
        number = words.lstrip("#")
        if number.isdigit() and len(number) <= ID_DIGITS:
            match |= Q(pk=int(number))
        jobs = jobs.filter(match)
    zone = zones.zone_of(f.zone)
    if f.since:
        jobs = jobs.filter(created_at__gte=datetime.combine(f.since, time.min, tzinfo=zone))
    if f.until:
        jobs = jobs.filter(created_at__lt=datetime.combine(f.until + timedelta(days=1), time.min, tzinfo=zone))
    return sorted_jobs(jobs, f.sort)


def sorted_jobs(jobs: QuerySet[Job], sort: str) -> QuerySet[Job]:
    """``jobs`` in the order ``sort`` names: "submitted" (by id, which follows it), or a key the
    kinds sort by (``SORT_KEYS``: their expressions over their own rows, the members'
    corrections included), a leading "-" for descending; jobs without the value last, then the
    newest first. Any other value: the newest first."""
    key = sort.removeprefix("-")
    descending = sort.startswith("-")
    if key == "submitted":
        return jobs.order_by("-id" if descending else "id")
    if key not in SORT_KEYS:
        return jobs
    whens = [When(kind=kind.name, then=expression) for kind in kinds.offered_kinds()
             if (expression := kind_pages.of(kind.name).sort_key(key)) is not None]
    if not whens:
        return jobs
    value = Case(*whens, default=None)
    order = value.desc(nulls_last=True) if descending else value.asc(nulls_last=True)
    return jobs.order_by(order, "-id")


def job_page(*, tenant_id: int | None, state: str = "", page: Any = 1, **filters: Any) -> Page[Job]:
    """One page of the tenant's jobs, newest first, as ``JobFilter`` selects them."""
    # The result too: the list shows values from it (``list_columns_of``), for a page of 20 at most.
    jobs = (filtered_jobs(JobFilter(tenant_id=tenant_id, state=state, **filters)).select_related("document")
            .only(*LIST_FIELDS, "result"))
    if filters.get("user_id") is None:
        jobs = jobs.select_related("submitted_by").only(*LIST_FIELDS, "result", "submitted_by__username")
    return Paginator(jobs, PAGE_SIZE).get_page(page)


def list_columns_of(jobs: Iterable[Job]) -> dict[int, dict[str, str]]:
    """What the list shows of each completed job's result (``LIST_COLUMNS``: supplier, invoice
    number and date, total with its currency), as its kind reads it through the members'
    corrections (``with_shown_results``); jobs without a result, or whose kind shows none of it, are left out."""
    found: dict[int, dict[str, str]] = {}
    for job, result in with_shown_results(jobs):
        if isinstance(result, dict) and (columns := kind_pages.of(job.kind).list_columns(result)):
            found[job.pk] = columns
    return found


def needing_action(*, tenant_id: int | None, user_id: int | None, viewer_id: int | None = None) -> int:
    """How many jobs the member (or the team) has something to do about: to do, and the viewer's
    or nobody's (``viewer_id``)."""
    return filtered_jobs(JobFilter(tenant_id=tenant_id, user_id=user_id, needs_action=True,
                                   viewer_id=viewer_id)).count()


def resubmitted() -> Q:
    """Failed jobs a member submitted again ("Submit again" notes it on the failed job): the new
    job carries the work, so the old one needs nothing more."""
    return Q(pk__in=JobEvent.objects.filter(to_state="", reason__startswith=queue.RESUBMITTED_AS).values("job_id"))


def work_elsewhere(tenant_id: int | None, viewer_id: int | None) -> Q:
    """The tenant's jobs that some kind's work state takes off the viewer's "Needs my action"
    (handled, ignored, waiting for the supplier, or assigned to another member)."""
    match = Q(pk__in=[])
    for pages in _keeping_work():
        match |= Q(pk__in=pages.work_elsewhere(tenant_id, viewer_id))
    return match


def work_assigned(tenant_id: int | None, user_id: int) -> Q:
    """The tenant's jobs some kind's work state assigns to the member."""
    match = Q(pk__in=[])
    for pages in _keeping_work():
        match |= Q(pk__in=pages.work_assigned(tenant_id, user_id))
    return match


def _keeping_work() -> list[kind_pages.KindPages]:
    """The pages of the offered kinds that keep work states, each once (kinds may share them)."""
    found: dict[int, kind_pages.KindPages] = {}
    for kind in kinds.offered_kinds():
        if (pages := kind_pages.of(kind.name)).supports_work:
            found.setdefault(id(pages), pages)
    return list(found.values())


def work_of(jobs: Iterable[Job]) -> dict[int, Work]:
    """Each job's work state, as its kind keeps them (one call per kind; none for kinds without)."""
    by_kind: dict[str, list[Job]] = {}
    for job in jobs:
        by_kind.setdefault(job.kind, []).append(job)
    found: dict[int, Work] = {}
    for name, some in by_kind.items():
        if (pages := kind_pages.of(name)).supports_work:
            found.update(pages.work(some))
    return found


def work_moments(job: Job) -> list[wording.Moment]:
    """The job's work changes as lines of its page's history."""
    pages = kind_pages.of(job.kind)
    return [wording.Moment(at, words) for at, words in pages.work_history(job.pk)] if pages.supports_work else []


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
        choices.update(kind_pages.of(kind.name).outcomes)
    return list(choices.items())


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
        return sum(1 for job in self.jobs if wording.needs_submitter(job))

    @property
    def cancellable(self) -> int:
        """How many of its jobs a cancel would still stop: unfinished, and not already asked to."""
        return sum(1 for job in self.jobs if not job.is_terminal and job.cancel_requested_at is None)

    @property
    def settling(self) -> bool:
        """Some job waits for staff (dead or unknown): worth a slow look now and then."""
        return any(job.state in (DEAD, UNKNOWN) for job in self.jobs)

    @cached_property
    def tallies(self) -> dict[int, str]:
        """What each completed job is counted as, by its kind (``KindPages.tally``), from its
        result as the members corrected it: a document with values not found is not one "to correct"."""
        found: dict[int, str] = {}
        for job, result in with_shown_results(job for job in self.jobs if job.state == COMPLETED):
            if isinstance(result, dict) and (tally := kind_pages.of(job.kind).tally(result)):
                found[job.pk] = tally
        return found

    @property
    def summary(self) -> str:
        """ "4 of 6 done, 1 to correct, 1 unreadable" while some are in progress; once none is,
        "Finished: 2 OK, 1 failed; with staff: 2 need checking". Staff's are counted apart: the
        jobs staff are confirming (needs checking) and the failures on our side they will run
        again (``wording.failure(job).resubmit`` false)."""
        counts: dict[str, int] = {}
        staff: dict[str, int] = {}
        tallies = self.tallies
        for job in self.jobs:
            if job.is_terminal:
                staffs = job.state == UNKNOWN or (job.state == DEAD and not wording.failure(job).resubmit)
                tally = staff if staffs else counts
                word = wording.outcome_count_word(job, tallies.get(job.pk, ""))
                tally[word] = tally.get(word, 0) + 1
        parts = ", ".join(wording.count_words(n, word) for word, n in counts.items())
        with_staff = ", ".join(wording.count_words(n, word) for word, n in staff.items())
        head = "Finished" if not self.live else f"{self.done} of {self.total} done"
        text = f"{head}: {parts}" if not self.live and parts else ", ".join(filter(None, [head, parts]))
        return f"{text}; with staff: {with_staff}" if with_staff else text


def batch_status(*, tenant_id: int | None, batch: str) -> BatchStatus:
    """A batch's jobs in the order they were submitted. Unknown and foreign batches: the same 404."""
    jobs = list(Job.objects.for_scope(tenant_id).filter(batch=batch).exclude(batch="")
                .select_related("document").only(*LIST_FIELDS, "failure_code", "cancel_requested_at", "result")
                .order_by("id")[:500])
    if not jobs:
        raise Http404("no such batch")
    return BatchStatus(batch, jobs)


def job_json(status: JobStatus) -> dict[str, Any]:
    """The job as ``GET /jobs/<id>`` answers it in JSON (``schemas.Job``)."""
    return schemas.Job.of(status.job, status.events, status.duplicate,
                          work=work_of([status.job]).get(status.job.pk)).to_json()


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
            shown.update(kind_pages.of(name).revise(results))
        return ((job, shown.get(job.pk)) for job in group)

    group: list[Job] = []
    for job in jobs:
        group.append(job)
        if len(group) >= chunk:
            yield from revised(group)
            group = []
    if group:
        yield from revised(group)
