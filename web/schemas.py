"""The JSON shapes of the job API, each defined once.

Views build their JSON answers from these models (``Body.to_json``) and read JSON and form
submissions through them; ``web.openapi`` generates ``/openapi.json`` from their JSON
Schemas. A field added here is in the answer and in the document at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar
from urllib.parse import urlencode
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.urls import reverse
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_serializer,
)
from pydantic.json_schema import SkipJsonSchema

from documents.models import original_name
from jobs import models
from jobs.queue import MAX_OPERATION_KEY, resubmission

from .kind_pages import Correction, Duplicate, Work

State = models.Job.State

# Times are written as Python's isoformat() has always written them here ("+00:00", not "Z").
Time = Annotated[
    datetime,
    PlainSerializer(lambda value: value.isoformat(), return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
Kind = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1),
    Field(description="One of the offered job kinds", examples=["document_review"]),
]


def status_url(job_id: int) -> str:
    return reverse("job_detail", args=[job_id])


# --- Answers ---------------------------------------------------------------------------------


class Body(BaseModel):
    """A JSON answer. A field that was not given is not sent (``result`` until completion)."""

    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class Error(Body):
    """Every error answer: a stable code, a human text, and for a 400 the input at fault."""

    error: str = Field(description="A stable code, e.g. operation_key_conflict")
    detail: str = Field(description="A human explanation")
    field: str | SkipJsonSchema[None] = Field(default=None, description="The input at fault, for 400s")
    state: State | SkipJsonSchema[None] = Field(
        default=None, description="The job's state, when the answer is about what it cannot do now (409)")

    @classmethod
    def of(cls, code: str, detail: str, field: str | None = None, *, state: str | None = None) -> Error:
        extra: dict[str, Any] = {"field": field} if field else {}
        if state:
            extra["state"] = state
        return cls(error=code, detail=detail, **extra)


class Accepted(Body):
    id: int
    state: State
    status_url: str

    @classmethod
    def of(cls, job: models.Job) -> Accepted:
        return cls(id=job.pk, state=State(job.state), status_url=status_url(job.pk))


class Event(Body):
    from_: str | None = Field(alias="from", description="null for acceptance")
    to: str | None = Field(description="null for a rejected write")
    epoch: int
    at: Time
    reason: str

    @classmethod
    def of(cls, event: models.JobEvent) -> Event:
        return cls(**{"from": event.from_state or None}, to=event.to_state or None, epoch=event.epoch,
                   at=event.at, reason=event.reason)


class DuplicateOf(Body):
    """An earlier job of the same tenant whose document this one possibly repeats."""

    id: int
    sent_at: Time = Field(description="When that job was submitted")
    by: str = Field(description="Who submitted it (username)")
    match: str = Field(description='How they match (document_review: "same file", "same supplier and invoice '
                                   'number" (the same VAT id, else supplier name), "same supplier name and invoice '
                                   'number", "same registered supplier and invoice number" or "same invoice number, '
                                   'total and date")')
    status_url: str

    @classmethod
    def of(cls, duplicate: Duplicate) -> DuplicateOf:
        return cls(id=duplicate.job_id, sent_at=duplicate.sent_at, by=duplicate.by, match=duplicate.match,
                   status_url=status_url(duplicate.job_id))


class WorkState(Body):
    """Where the tenant's members are with the job's document, apart from the job's state."""

    state: str | None = Field(description="The kind's work state code (document_review: todo, waiting, handled, "
                                          "ignored); null when there is nothing to do and no member set one")
    state_text: str = Field(description='The work state in words ("To do", "No action needed")')
    assignee: str | None = Field(description="The member it is assigned to (username); null for nobody")
    note: str = Field(description="The members' short note about it; empty if none")

    @classmethod
    def of(cls, work: Work) -> WorkState:
        return cls(state=work.state or None, state_text=work.words, assignee=work.assignee or None, note=work.note)


def _summary(job: models.Job, duplicate: Duplicate | None = None,
             work: Work | None = None) -> dict[str, Any]:
    """The kind's reading of a completed result, what the job was submitted as, the earlier
    job it possibly repeats, and the members' work state of it."""
    summarized = job.state == State.COMPLETED and bool(job.outcome)
    return {
        "document_name": original_name(job) or None,
        "batch": job.batch or None,
        "outcome": job.outcome if summarized else None,
        "outcome_text": job.outcome_text if summarized else None,
        "needs_action": job.state == State.DEAD or (job.state == State.COMPLETED and job.needs_action),
        "reference": job.reference or None,
        "duplicate_of": DuplicateOf.of(duplicate) if duplicate else None,
        "work": WorkState.of(work) if work else None,
    }


class Summarized(Body):
    """Fields every job answer carries besides its state: what it was, and how it turned out.

    Serialized after the answer's own fields, where they were added: an answer reads as it
    always did, with these at its end (and after them a subclass's ``added_later``, then the
    ones added to every answer since: ``added_last``).
    """

    added_later: ClassVar[tuple[str, ...]] = ()
    added_last: ClassVar[tuple[str, ...]] = ("work",)

    # No return annotation: pydantic would take it for the serialized JSON Schema, which stays the model's.
    @model_serializer(mode="wrap")
    def _added_fields_last(self, handler: Any):  # type: ignore[no-untyped-def]  # see above
        data = handler(self)
        summarized = [name for name in Summarized.model_fields if name not in self.added_last]
        added = [*summarized, *self.added_later, *self.added_last]
        return {**{k: v for k, v in data.items() if k not in added}, **{k: data[k] for k in added if k in data}}

    document_name: str | None = Field(description="The uploaded document's file name; null for pasted text")
    batch: str | None = Field(description="The batch it was submitted in, with other documents; null if alone")
    outcome: str | None = Field(description="The kind's outcome code once completed (document_review: ok, "
                                            "to_correct, unreadable); null before")
    outcome_text: str | None = Field(description='The outcome in words ("OK", "1 to correct"); null before')
    needs_action: bool = Field(description="The submitter has something to do: completed with something to "
                                           "correct or unreadable, or dead")
    reference: str | None = Field(description="Words to find it by (supplier, invoice number); null if none")
    duplicate_of: DuplicateOf | None = Field(
        description="Once completed: the earliest earlier job of the same tenant whose document this one possibly "
                    "repeats (the same file, or the same supplier and invoice number); null if none")
    work: WorkState | None = Field(
        description="The document's work state, assignee and note, as the tenant's members set them; null for "
                    "kinds without work states")


class Job(Summarized):
    id: int
    kind: str
    state: State
    attempts: int = Field(ge=0)
    max_attempts: int = Field(ge=1)
    created_at: Time
    updated_at: Time
    finished_at: Time | None
    deadline: Time
    status_url: str
    events: list[Event]
    result: Any = Field(default=None, description="Only when state is completed; its shape depends on the kind")
    added_later = ("resubmitted_as", "resubmitted_from")
    resubmitted_as: int | None = Field(default=None, description="A failed job submitted again: the new job's id "
                                                                 "(the newest, if more than once); null otherwise")
    resubmitted_from: int | None = Field(default=None, description="A job submitted again from a failed one: "
                                                                   "that job's id; null otherwise")

    @classmethod
    def of(cls, job: models.Job, events: Iterable[models.JobEvent], duplicate: Duplicate | None = None,
           *, result: Any = None, work: Work | None = None) -> Job:
        """``result``: the result as the submitters see it (``status.shown_result``), else the job's own."""
        shown = job.result if result is None else result
        completed: dict[str, Any] = {"result": shown} if job.state == State.COMPLETED else {}
        events = list(events)
        again = resubmission(events)
        return cls(
            id=job.pk, kind=job.kind, state=State(job.state), attempts=job.attempts, max_attempts=job.max_attempts,
            created_at=job.created_at, updated_at=job.updated_at, finished_at=job.finished_at,
            deadline=job.deadline, status_url=status_url(job.pk), events=[Event.of(e) for e in events],
            resubmitted_as=again.as_job, resubmitted_from=again.from_job, **_summary(job, duplicate, work),
            **completed,
        )


class JobSummary(Summarized):
    id: int
    kind: str
    state: State
    attempts: int = Field(ge=0)
    created_at: Time
    updated_at: Time
    finished_at: Time | None
    status_url: str

    @classmethod
    def of(cls, job: models.Job, duplicate: Duplicate | None = None,
           work: Work | None = None) -> JobSummary:
        return cls(id=job.pk, kind=job.kind, state=State(job.state), attempts=job.attempts, created_at=job.created_at,
                   updated_at=job.updated_at, finished_at=job.finished_at, status_url=status_url(job.pk),
                   **_summary(job, duplicate, work))


class JobList(Body):
    jobs: list[JobSummary]
    page: int
    pages: int
    next: str | None
    previous: str | None

    @classmethod
    def of(cls, page: Any, params: dict[str, str] | str | None,
           duplicates: Mapping[int, Duplicate] | None = None,
           works: Mapping[int, Work] | None = None) -> JobList:
        """One ``django.core.paginator.Page`` of jobs, linking to its neighbours with the same filters
        (``params``: the query's non-empty values but the page; a bare string is a state), with
        the earlier jobs they possibly repeat (``duplicates``, by job id) and their work states
        (``works``, by job id)."""
        duplicates, works = duplicates or {}, works or {}
        if not isinstance(params, dict):
            params = {"state": params} if params else {}

        def link(number: int) -> str:
            return reverse("jobs") + "?" + urlencode({"page": number, **params})

        return cls(
            jobs=[JobSummary.of(job, duplicates.get(job.pk), works.get(job.pk)) for job in page.object_list],
            page=page.number,
            pages=page.paginator.num_pages,
            next=link(page.next_page_number()) if page.has_next() else None,
            previous=link(page.previous_page_number()) if page.has_previous() else None,
        )


class FieldCorrection(Body):
    """A field of a completed result as a member corrected (or confirmed) it."""

    job: int
    field: str
    label: str = Field(description="The field in words")
    value: str | None = Field(description="The value now, as the field's check keeps it")
    status: str = Field(description="The field's check on it (document_review: present, malformed, missing)")
    detail: str = Field(description="The check's words about the value")
    confirmed: bool = Field(description="Confirmed as it was, rather than corrected to another value")
    previous_value: str | None = Field(description="The value before this correction")
    review_value: str | None = Field(description="The value the review itself read, kept for the audit")
    review_status: str = Field(description="The review's own check of the field")
    by: str = Field(description="The member who corrected it")
    at: Time
    outcome: str | None = Field(description="The job's outcome code now")
    outcome_text: str | None = Field(description='The job\'s outcome in words now ("OK", "1 to correct")')
    needs_action: bool = Field(description="The submitter still has something to do about the job")
    status_url: str

    @classmethod
    def of(cls, job_id: int, correction: Correction) -> FieldCorrection:
        summary = correction.summary
        return cls(job=job_id, field=correction.field, label=correction.label, value=correction.value,
                   status=correction.status, detail=correction.detail, confirmed=correction.confirmed,
                   previous_value=correction.previous_value, review_value=correction.original_value,
                   review_status=correction.original_status, by=correction.by, at=correction.at,
                   outcome=summary.outcome if summary else None, outcome_text=summary.text if summary else None,
                   needs_action=summary.needs_action if summary else False, status_url=status_url(job_id))


# --- Requests --------------------------------------------------------------------------------


class JobRequest(BaseModel):
    """The JSON body of POST /jobs. Other fields (an owner, a tenant) are ignored: identity decides."""

    kind: Kind
    payload: Annotated[dict[str, Any], BeforeValidator(lambda value: {} if value is None else value)] = Field(
        default_factory=dict, description="Checked against the kind's JSON Schema")


class JobForm(BaseModel):
    """The multipart form of POST /jobs (the browser's submit form posts it too)."""

    kind: Kind
    text: str = Field(default="", description="Becomes payload.text")
    payload: str = Field(default="", description="A JSON object (optional)")
    idempotency_key: str = Field(default="", json_schema_extra={"maxLength": MAX_OPERATION_KEY},
                                 description="The operation key, when the Idempotency-Key header is not sent")
    document: Annotated[Any, WithJsonSchema({"type": "string", "contentMediaType": "application/octet-stream"})] = (
        Field(default=None, description="The document (an uploaded file)"))
    photo: Annotated[Any, WithJsonSchema({"type": "array", "items": {"type": "string",
                                                                     "contentMediaType": "image/jpeg"}})] = (
        Field(default=None, description="Instead of a document: photos (JPEG or PNG) of one document's pages, "
                                        "in order; they become one PDF, a page each"))


class CorrectionRequest(BaseModel):
    """The JSON body of PATCH /jobs/{id}/fields/{field}: the right value, or a confirmation of the
    value there is. Other fields are ignored."""

    value: str | SkipJsonSchema[None] = Field(default=None, description="The field's right value, as printed")
    confirm: bool = Field(default=False, description="true: the value there is was checked and is right")


class Scope(StrEnum):
    MINE = "mine"
    TEAM = "team"


class Sort(StrEnum):
    """The list's orders: a key, descending with a leading "-" (newest submitted first by default)."""

    NEWEST = "-submitted"
    OLDEST = "submitted"
    INVOICE_DATE = "invoice_date"
    INVOICE_DATE_DESC = "-invoice_date"
    TOTAL = "total"
    TOTAL_DESC = "-total"
    SUPPLIER = "supplier"
    SUPPLIER_DESC = "-supplier"


def _empty_is_none(value: Any) -> Any:
    return value or None


def _empty_is_false(value: Any) -> Any:
    return False if value == "" else value


# The days a list filter can name: any a job can have been submitted on, and none whose
# midnight in some zone falls outside what a datetime holds.
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(9998, 12, 31)


class JobListQuery(BaseModel):
    """The query of GET /jobs (and of its CSV export). An empty value (the page's "all") filters nothing."""

    state: Annotated[State | SkipJsonSchema[None], BeforeValidator(_empty_is_none)] = None
    page: int = Field(default=1, ge=1)
    scope: Annotated[Scope | SkipJsonSchema[None], BeforeValidator(_empty_is_none)] = Field(
        default=None, description="mine: the caller's own jobs; team: the tenant's. "
                                  "Default: team in JSON, mine on the page")
    q: str = Field(default="", max_length=100,
                   description="Words in the document's name or reference (supplier, invoice number), or a job id")
    outcome: str = Field(default="", max_length=32,
                         description="A kind's outcome code, e.g. ok, to_correct, unreadable")
    needs_action: Annotated[bool, BeforeValidator(_empty_is_false)] = Field(
        default=False, description="Only jobs the submitter has something to do about (see needs_action)")
    duplicates: Annotated[bool, BeforeValidator(_empty_is_false)] = Field(
        default=False, description="Only jobs flagged as possible duplicates of earlier ones (see duplicate_of)")
    since: Annotated[date | SkipJsonSchema[None], BeforeValidator(_empty_is_none)] = Field(
        default=None, description="Submitted on or after this day (in tz)")
    until: Annotated[date | SkipJsonSchema[None], BeforeValidator(_empty_is_none)] = Field(
        default=None, description="Submitted on or before this day (in tz)")
    tz: str = Field(default="", max_length=64, description="The IANA time zone of since and until (default UTC)")
    sort: Annotated[Sort | SkipJsonSchema[None], BeforeValidator(_empty_is_none)] = Field(
        default=None, description="The order: -submitted (default), submitted, invoice_date, total, supplier; "
                                  "a leading - for descending. Documents without the value come last")

    @field_validator("since", "until")
    @classmethod
    def _plausible_day(cls, value: date | None) -> date | None:
        # A day at the ends of the calendar overflows once it is a moment in a zone (9999-12-31 + 1 day).
        if value is not None and not FIRST_DAY <= value <= LAST_DAY:
            raise ValueError(f"not a day between {FIRST_DAY} and {LAST_DAY}")
        return value

    @field_validator("q", "outcome")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\x00" in value:  # PostgreSQL refuses a NUL in any text it compares
            raise ValueError("contains a NUL character")
        return value

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            value and ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("not a known IANA time zone, e.g. Europe/Berlin") from None
        return value

    def params(self) -> dict[str, str]:
        """The filters as a query string keeps them: the non-empty values, without the page."""
        values = self.model_dump(mode="json", exclude={"page"})
        if not (self.since or self.until):
            values.pop("tz")  # a zone only matters for days
        return {name: ("1" if value is True else str(value)) for name, value in values.items()
                if value not in (None, "", False)}
