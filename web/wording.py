"""Each job's state in the submitter's words.

A job is *Waiting*, running (its kind's word: ``kinds.Words``), *Done*, *Failed* or *Needs
checking*; a finished one has an outcome ("OK", "1 to correct" from its kind's summary;
"failed — see why" and "needs checking" derived from the state), and a tone the pages colour
it by. The queue's own terms (leases, epochs, markers) stay on the staff side.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from jobs import kinds, queue
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

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)


STATE_WORDS = {QUEUED: "Waiting", LEASED: "Reviewing", COMPLETED: "Done", DEAD: "Failed",
               UNKNOWN: "Needs checking", "cancelled": "Cancelled"}
STATE_CHOICES = [(state, STATE_WORDS[state]) for state in Job.State.values if state in STATE_WORDS]
FAILED_WORDS = "failed — see why"
CHECKING_WORDS = "needs checking"


def count_words(n: int, word: str) -> str:
    """ "1 needs checking", "2 need checking"; "3 OK"."""
    if word == CHECKING_WORDS and n != 1:
        word = "need checking"
    return f"{n} {word}"


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
