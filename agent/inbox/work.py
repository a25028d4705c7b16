"""A document's work state, apart from its job's state: where the tenant's members are with it.

The review says what is wrong with an invoice; the members then act on it: they ask the supplier
(*waiting for the supplier*), settle it (*handled*) or decide it needs nothing (*ignored*), and
say who takes it (an assignee among the tenant's members) with a short note. A document whose
outcome needs action starts *to do*, for nobody in particular; one that needs none has no work
state until a member gives it one.

``change`` is the one writer: a conditional write that only touches the tenant's own job, only
assigns a member of that tenant, and only applies over the version it read (a guarded
``UPDATE``, on SQLite too), with the history line in the same transaction.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q, QuerySet

from accounts.models import User
from agent.models import DocumentWork, DocumentWorkChange
from agent.reading import fields, findings
from jobs import queue
from jobs.models import Job
from web import status, wording
from web.kind_pages import Refused, Work

from . import acceptances, corrections, register

State = DocumentWork.State
STATES: dict[str, str] = {state.value: str(state.label) for state in State}
NOTE_MAX = 200
# The states a document takes once its review has finished: before, nothing is known to act on.
AFTER_REVIEW = frozenset({State.WAITING.value, State.HANDLED.value})
NOTHING_TO_DO = "No action needed"
# A document with no work state whose review has not finished: nothing is known yet, to do or not.
NOT_REVIEWED = "Not reviewed yet"
# The findings a refusal names (the page lists them all).
NAMED = 3
# Tries of the guarded write when another member changed the same document meanwhile.
TRIES = 3


class KEEP:
    """``change``'s default for what the caller leaves as it is."""


class WorkRefused(Exception):
    """A change refused, in the member's words; ``code`` for API clients."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class FindingsStand(WorkRefused):
    """Marked handled or approved while blocking findings stand: they are named, and the member
    is asked again, for a reason that accepts them (``reason``)."""

    def __init__(self, standing: list[dict[str, Any]], *, verb: str = "marked handled") -> None:
        named = "; ".join(f["words"] for f in standing[:NAMED]) + ("; …" if len(standing) > NAMED else "")
        super().__init__("finding_stands", f"{len(standing)} finding{'s' if len(standing) != 1 else ''} "
                         f"stand{'s' if len(standing) == 1 else ''} on this document ({named}): it can be {verb} "
                         "only once you accept them, with a reason")
        self.findings = standing


class NoSuchJob(WorkRefused):
    """Unknown, or another tenant's: the same refusal, so a job id says nothing about other tenants."""

    def __init__(self) -> None:
        super().__init__("not_found", "no such job")


@dataclass(frozen=True)
class Change:
    job_id: int
    from_state: str
    to_state: str
    from_assignee_id: int | None
    to_assignee_id: int | None
    note: str


def default_state(job: Job) -> str:
    """To do when the document's outcome needs action (a failure, fields to correct); else none."""
    return State.TODO.value if wording.needs_submitter(job) else ""


def change(*, tenant_id: int | None, job_id: int, by_id: int, now: datetime, state: str | type[KEEP] = KEEP,
           assignee_id: int | type[KEEP] | None = KEEP, note: str | type[KEEP] = KEEP,
           reason: str | None = None) -> Change | None:
    """Set the document's work state, assignee (None: nobody) and note; what is left as ``KEEP``
    stays. Returns the change written, None when nothing changed. Raises ``NoSuchJob`` for
    another tenant's job (the same as for an unknown one), ``WorkRefused`` for a state that is
    not one, an assignee who is not a member of the job's tenant, or a note too long.

    Marking it handled while blocking findings stand (``agent.reading.findings``: a changed IBAN, a
    disagreement, a duplicate...) raises ``FindingsStand`` naming them, unless ``reason`` is
    given: then they are accepted with it, by this member, in the same transaction."""
    if state is not KEEP and state not in STATES:
        raise WorkRefused("bad_state", f"the work state must be one of: {', '.join(STATES)}")
    if isinstance(note, str):
        note = " ".join(note.split())
        if len(note) > NOTE_MAX:
            raise WorkRefused("note_too_long", f"the note must be at most {NOTE_MAX} characters")
    if tenant_id is None:
        raise NoSuchJob()
    with transaction.atomic():
        job = Job.objects.filter(pk=job_id, scope_id=tenant_id).only("id", "state", "needs_action").first()
        if job is None:
            raise NoSuchJob()
        if isinstance(assignee_id, int) and not User.objects.filter(
                pk=assignee_id, tenant_id=tenant_id, is_active=True).exists():
            raise WorkRefused("not_a_member", "a document can only be assigned to a member of your team")
        if state in AFTER_REVIEW and not job.is_terminal and _state_of(job) != state:
            raise WorkRefused("not_reviewed", "a document is sent to the supplier or marked handled once its "
                                              "review has finished")
        if state == State.HANDLED.value and _state_of(job) != State.HANDLED.value:
            _accept_standing(job, tenant_id=tenant_id, by_id=by_id, reason=reason, now=now)
        for _ in range(TRIES):
            written, done = _write(job, tenant_id=tenant_id, by_id=by_id, now=now, state=state,
                                   assignee_id=assignee_id, note=note)
            if written:
                if done is not None and done.to_state == State.HANDLED and done.from_state != State.HANDLED:
                    try:  # what the review read goes into the supplier register, in this transaction
                        register.remember(job_id=job_id, tenant_id=tenant_id, by_id=by_id, now=now)
                    except register.RegisterRefused as exc:
                        raise WorkRefused("busy", exc.message) from None
                return done
    raise WorkRefused("busy", "someone changed this document at the same moment: look again, then try again")


def _write(job: Job, *, tenant_id: int, by_id: int, now: datetime, state: Any, assignee_id: Any,
           note: Any) -> tuple[bool, Change | None]:
    """One try: (True, the change written or None when there was none), or (False, None) when
    another member's write came between the read and the guarded update."""
    current = _current(job.pk)
    before = (current.state, current.assignee_id, current.note) if current else (default_state(job), None, "")
    after = (before[0] if state is KEEP else state, before[1] if assignee_id is KEEP else assignee_id,
             before[2] if note is KEEP else note)
    if after == before:
        return True, None
    values = {"state": after[0], "assignee_id": after[1], "note": after[2], "updated_at": now, "updated_by_id": by_id}
    if current is None:
        try:
            with transaction.atomic():  # a savepoint: a row another member made meanwhile is no error
                DocumentWork.objects.create(job_id=job.pk, tenant_id=tenant_id, version=1, **values)
        except IntegrityError:
            return False, None
    elif not DocumentWork.objects.filter(job_id=job.pk, tenant_id=tenant_id, version=current.version).update(
            version=F("version") + 1, **values):
        return False, None
    DocumentWorkChange.objects.create(job_id=job.pk, by_id=by_id, at=now, from_state=before[0], to_state=after[0],
                                      from_assignee_id=before[1], to_assignee_id=after[1],
                                      note=after[2] if after[2] != before[2] else "")
    return True, Change(job.pk, before[0], after[0], before[1], after[1], after[2])


def _state_of(job: Job) -> str:
    current = _current(job.pk)
    return current.state if current else default_state(job)


def _accept_standing(job: Job, *, tenant_id: int, by_id: int, reason: str | None, now: datetime,
                     verb: str = "marked handled") -> None:
    """Nothing when no blocking finding stands on the job; else accept them with ``reason`` (inside
    the caller's transaction), or raise ``FindingsStand`` without one."""
    if job.state != Job.State.COMPLETED:
        return
    result = Job.objects.filter(pk=job.pk).values_list("result", flat=True).first()
    standing = acceptances.standing(job.pk, result)
    if not standing:
        return
    if not (reason or "").strip():
        raise FindingsStand(standing, verb=verb)
    user = User.objects.get(pk=by_id)
    try:
        acceptances.accept(job_id=job.pk, tenant_id=tenant_id, user=user, reason=reason, now=now)
    except Refused as exc:
        raise WorkRefused(exc.code, exc.message) from None


@dataclass(frozen=True)
class Approval:
    job_id: int
    confirmed: list[str]  # the fields confirmed by this approval
    accepted: list[dict[str, Any]]  # the findings accepted by it


def approve(*, tenant_id: int | None, job_id: int, by_id: int, now: datetime, reason: str | None = None) -> Approval:
    """Approve a reviewed document: confirm every required field whose check passes, and mark it
    handled; the confirmed values are what the result, the note and the export then carry.

    Refused (``WorkRefused``, nothing written) for a job that is not a finished review, or with a
    field still to check, correct or find (``fields_open``: correct or confirm it first); while
    blocking findings stand, ``FindingsStand`` names them unless ``reason`` accepts them."""
    if tenant_id is None:
        raise NoSuchJob()
    user = User.objects.filter(pk=by_id).first()
    if user is None:
        raise NoSuchJob()
    with transaction.atomic():
        job = Job.objects.filter(pk=job_id, scope_id=tenant_id).only("id", "state", "needs_action").first()
        if job is None:
            raise NoSuchJob()
        if job.state != Job.State.COMPLETED:
            raise WorkRefused("not_reviewed", "only a finished review can be approved")
        try:
            with queue.amending(job_id=job_id, scope_id=tenant_id, actor=f"user:{by_id}", reason="approved",
                                now=now) as amendment:
                shown = acceptances.shown(job_id, amendment.job.result)
                found = shown.get("fields") if isinstance(shown, dict) else None
                if not isinstance(found, dict):
                    raise WorkRefused("not_reviewed", "this result has no fields to approve")
                open_ = [fields.LABELS[name] for name in findings.open_fields(shown)]
                if open_:
                    raise WorkRefused("fields_open", f"{', '.join(open_)} {'is' if len(open_) == 1 else 'are'} still "
                                      "to check, correct or find: correct or confirm "
                                      f"{'it' if len(open_) == 1 else 'them'} first")
                standing = findings.standing(shown.get("findings"))
                if standing and not (reason or "").strip():
                    raise FindingsStand(standing, verb="approved")
                accepted = (acceptances.accept_in(amendment, user=user, now=now,
                                                  reason=acceptances.checked_reason(reason)) if standing else [])
                confirmed = corrections.confirm_passing(amendment, user=user, now=now)
                amendment.restate(acceptances.shown(job_id, amendment.job.result))
        except queue.NotAmendable:
            raise NoSuchJob() from None
        except Refused as exc:
            raise WorkRefused(exc.code, exc.message) from None
        change(tenant_id=tenant_id, job_id=job_id, by_id=by_id, now=now, state=State.HANDLED.value)
    return Approval(job_id, confirmed, accepted)


def _current(job_id: int) -> DocumentWork | None:
    return DocumentWork.objects.filter(job_id=job_id).first()


# --- Read by the pages (web.kind_pages.KindPages) -------------------------------------------------


def of_jobs(jobs: list[Any]) -> dict[int, Work]:
    """Each job's work state (one query): its row's, else its default."""
    rows = {row.job_id: row for row in DocumentWork.objects.filter(job_id__in=[job.pk for job in jobs])
            .select_related("assignee").only("job_id", "state", "note", "assignee__username")}
    found: dict[int, Work] = {}
    for job in jobs:
        row = rows.get(job.pk)
        code = row.state if row else default_state(job)
        found[job.pk] = Work(state=code, words=STATES.get(code) or (NOTHING_TO_DO if job.is_terminal else NOT_REVIEWED),
                             assignee_id=row.assignee_id if row else None,
                             assignee=row.assignee.username if row and row.assignee else "",
                             note=row.note if row else "")
    return found


@functools.cache
def version_sql(job: str) -> tuple[str, ...]:
    """What changes the job's work state as the pages show it, as SQL beside the job's row
    (``job``: its id column): the row's version, raised by every ``change``, and the assignee's
    name (renamed, the answer reads otherwise). With no row the state's default is the job's own."""
    q = connection.ops.quote_name
    work, user = q(DocumentWork._meta.db_table), q(User._meta.db_table)
    row = f"FROM {work} w WHERE w.{q('job_id')} = {job}"
    return (f"(SELECT w.{q('version')} {row})",
            f"(SELECT u.{q('username')} FROM {work} w JOIN {user} u ON u.{q('id')} = w.{q('assignee_id')} "  # noqa: S608
            f"WHERE w.{q('job_id')} = {job})")  # (names, quoted)


def elsewhere(tenant_id: int | None, user_id: int | None) -> QuerySet[Any, Any]:
    """The ids of the tenant's jobs off ``user_id``'s "Needs my action": not to do any more, or
    assigned to another member (a subquery; none without a tenant)."""
    rows = DocumentWork.objects.filter(tenant_id=tenant_id) if tenant_id is not None else DocumentWork.objects.none()
    other = Q(assignee__isnull=False) & ~Q(assignee_id=user_id) if user_id is not None else Q(assignee__isnull=False)
    return rows.filter(~Q(state=State.TODO) | other).values("job_id")


def assigned(tenant_id: int | None, user_id: int) -> QuerySet[Any, Any]:
    """The ids of the tenant's jobs assigned to ``user_id`` (a subquery; none without a tenant)."""
    rows = DocumentWork.objects.filter(tenant_id=tenant_id) if tenant_id is not None else DocumentWork.objects.none()
    return rows.filter(assignee_id=user_id).values("job_id")


def history(job_id: int) -> list[tuple[datetime, str]]:
    """The document's work changes, oldest first: "alice: To do → Handled; assigned to carol. Note: “paid”"."""
    lines = []
    for c in (DocumentWorkChange.objects.filter(job_id=job_id).select_related("by", "to_assignee")
              .order_by("id")[:status.MAX_EVENTS]):
        parts = []
        if c.from_state != c.to_state:
            parts.append(f"{STATES.get(c.from_state, NOTHING_TO_DO)} → {STATES.get(c.to_state, NOTHING_TO_DO)}")
        if c.from_assignee_id != c.to_assignee_id:
            parts.append(f"assigned to {c.to_assignee.username}" if c.to_assignee else "unassigned")
        if c.note:
            parts.append(f"note: “{c.note}”")
        who = c.by.username if c.by else "a former member"
        lines.append((c.at, f"{who}: {'; '.join(parts) or 'note cleared'}"))
    return lines
