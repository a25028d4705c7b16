"""Each job's state in the submitter's words.

A job is *Waiting*, running (its kind's word: ``Words``), *Done*, *Failed* or *Needs
checking*; a finished one has an outcome ("OK", "1 to correct" from its kind's summary;
"failed — see why" and "needs checking" derived from the state), and a tone the pages colour
it by. The queue's own terms (leases, epochs, markers) stay on the staff side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from accounts.models import User
from documents.errors import DamagedDocument, DocumentTooComplex, DocumentUnpacksTooLarge, UnsupportedDocument
from jobs import kinds, queue
from jobs.errors import PayloadTooLarge
from jobs.kinds import FailureCause
from jobs.models import Job, JobEvent
from jobs.queue import FailureCode

from . import kind_pages
from .kind_pages import Words

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)


STATE_WORDS = {QUEUED: "Waiting", COMPLETED: "Done", DEAD: "Failed", UNKNOWN: "Needs checking", CANCELLED: "Cancelled"}
FAILED_WORDS = "failed — see why"
CHECKING_WORDS = "needs checking"
GENERIC = Words()


def words_of(kind: str) -> Words:
    """The words the kind's submitters call its work by (``KindPages.words``); generic ones
    for a kind that registered no pages."""
    return kind_pages.of(kind).words


def count_words(n: int, word: str) -> str:
    """ "1 needs checking", "2 need checking"; "3 OK"."""
    if word == CHECKING_WORDS and n != 1:
        word = "need checking"
    return f"{n} {word}"


def state_words(state: str, words: Words = GENERIC) -> str:
    """A state in the submitter's words; a running job's in its kind's (``words.running``)."""
    if state == LEASED:
        return words.running
    return STATE_WORDS.get(state, state.capitalize())


def state_choices() -> list[tuple[str, str]]:
    """(state, words) for the list's state filter. A running job is said in the words of the kinds
    that name their work, when they all say the same; generically otherwise."""
    named = {kind_pages.of(kind.name).words for kind in kinds.offered_kinds()} - {GENERIC}
    words = named.pop() if len(named) == 1 else GENERIC
    return [(state, state_words(state, words)) for state in Job.State.values if state in STATE_WORDS or state == LEASED]


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
    if job.state == CANCELLED:
        return "cancelled"
    return ""


def outcome_count_word(job: Job, tally: str = "") -> str:
    """How a batch counts a finished job: "OK", "to correct", "not found", "unreadable", "failed";
    ``tally``: the kind's word for a completed job's result (``KindPages.tally``)."""
    if job.state == COMPLETED and tally:
        return tally
    if job.state == COMPLETED:
        label = kind_pages.of(job.kind).outcomes.get(job.outcome)
        if label:
            return label if label.isupper() else label.lower()
        return job.outcome_text or "done"
    fixed = {DEAD: "failed", UNKNOWN: "needs checking"}
    return fixed.get(job.state) or state_words(job.state, words_of(job.kind)).lower()


def tone(job: Job) -> str:
    """good, attention, bad, checking or pending: what the pages colour a job by."""
    if job.state == COMPLETED:
        if job.outcome == "unreadable":
            return "bad"
        return "attention" if job.needs_action else "good"
    return {DEAD: "bad", UNKNOWN: "checking", CANCELLED: "neutral"}.get(job.state, "pending")


@dataclass(frozen=True)
class Failure:
    """Why a job failed, and what the submitter can do, in plain words."""

    why: str
    advice: str
    detail: str = ""  # the failing step's own words, when they were written for the submitter
    resubmit: bool = True  # whether to offer "Submit again" (not while staff will run it again)

    @property
    def staff_acts(self) -> bool:
        """Staff will run it again: the submitter waits for them rather than acting."""
        return not self.resubmit


# The queue's and the worker's failure codes by whose doing they are; a kind says the same of
# its own codes (``Kind.failures``). Document failures are the input's (jobs.errors'
# refusals and the sandbox's limits): the same document would fail the same way.
UNREADABLE_CODES = frozenset({DamagedDocument.code, UnsupportedDocument.code})
TOO_BIG_CODES = frozenset({
    PayloadTooLarge.code, DocumentTooComplex.code, DocumentUnpacksTooLarge.code,
    FailureCode.MEMORY_LIMIT, FailureCode.CPU_LIMIT, FailureCode.TOO_DEEP, FailureCode.TIME_LIMIT,
})
DOCUMENT_CODES = UNREADABLE_CODES | TOO_BIG_CODES
TIME_CODES = frozenset({FailureCode.DEADLINE, FailureCode.DEADLINE_PASSED, FailureCode.NO_TIME_LEFT})
# Our side: the run was lost or crashed, with no code of the kind's to say more ("": a row
# whose error named none).
SERVICE_CODES = frozenset({
    "", FailureCode.LEASE_EXPIRED, FailureCode.ATTEMPTS_SPENT, FailureCode.HANDLER_ERROR,
    FailureCode.HANDLER_CRASHED, FailureCode.STOPPED, FailureCode.SHUTDOWN, FailureCode.BAD_RESULT,
    FailureCode.UNKNOWN_KIND,
})


@dataclass(frozen=True)
class FailureWords:
    """One failure's words for everyone who reads of it: the submitter's page and email (``why``,
    ``advice``) and staff's page of the job (``staff``, which repeats what the submitter was
    told). ``{run}``, ``{service}`` and ``{unreadable}`` are the kind's words (``Words``)."""

    why: str
    advice: str
    staff: str
    resubmit: bool = True

    def said(self, words: Words) -> FailureWords:
        values = {"run": words.run, "service": words.service, "unreadable": words.unreadable}
        return FailureWords(self.why.format(**values), self.advice.format(**values),
                            self.staff.format(**values), self.resubmit)


# The one table of words per failure: by its code first (``FAILURE_WORDS``), else by whose doing
# it was (``CAUSE_WORDS``).
UNREADABLE = FailureWords(
    "the document could not be read", "{unreadable}",
    "Its document could not be read (the last error says why): Retry would fail the same way. Its submitter "
    "was told to send a readable copy.")
TOO_BIG = FailureWords(
    "the document is longer or more complex than the {service} can read",
    "send it in parts (one invoice per file), or a simpler copy: a PDF with selectable text rather than a scan",
    "Its document is beyond what the {service} reads (the last error says which limit): Retry would fail the "
    "same way. Its submitter was told to send it in parts or a simpler copy.")
FAILURE_WORDS: dict[str, FailureWords] = {
    **dict.fromkeys(UNREADABLE_CODES, UNREADABLE),
    **dict.fromkeys(TOO_BIG_CODES, TOO_BIG),
    FailureCode.DISCARDED: FailureWords(
        "staff closed it: the {service} could not finish it", "submit it again",
        "Staff discarded it when its outcome was unknown (the timeline says who and why): Retry runs it again. Its "
        "submitter was told to submit it again."),
}
CAUSE_WORDS: dict[FailureCause, FailureWords] = {
    FailureCause.DOCUMENT: UNREADABLE,
    FailureCause.TIME: FailureWords(
        "the {run} ran out of time", "submit it again; if it happens again, tell your staff",
        "It ran out of time before its deadline: Retry queues it with fresh attempts and a new deadline, worth it "
        "once the workers can take it in time. Its submitter was told to submit it again."),
    FailureCause.SERVICE: FailureWords(
        "our {service} had a problem", "you need not do anything: staff have been told and will run it again",
        "It failed on our side (a lost worker, a crash, a provider): Retry once the cause has passed. Its "
        "submitter was told that staff will run it again, and was not offered to submit it again.",
        resubmit=False),
    FailureCause.CHECK: FailureWords(
        "the {run} stopped at one of its safety checks", "submit it again; staff have been shown it",
        "It stopped at one of its kind's checks (the last error says which). Its submitter was told to submit it "
        "again."),
}


def failure_cause(kind: str, code: str) -> FailureCause:
    """Whose doing a failure with ``code`` was: the kind's word on its own codes first."""
    kind_spec = kinds.get(kind)
    declared = kind_spec.failures.get(code) if kind_spec else None
    if declared is not None:
        return declared
    if code in DOCUMENT_CODES:
        return FailureCause.DOCUMENT
    if code in TIME_CODES:
        return FailureCause.TIME
    if code in SERVICE_CODES:
        return FailureCause.SERVICE
    return FailureCause.CHECK


def failure_words(kind: str, code: str, words: Words | None = None) -> FailureWords:
    """The words of a failure with ``code`` (``FAILURE_WORDS``, else by its cause), in the kind's words."""
    kind_spec = kinds.get(kind)
    declared = kind_spec.failures.get(code) if kind_spec else None
    chosen = FAILURE_WORDS.get(code) if declared is None else None
    return (chosen or CAUSE_WORDS[failure_cause(kind, code)]).said(words or words_of(kind))


def staff_lines(words: Words, codes: Iterable[str] = ()) -> dict[str, str]:
    """What staff's page of a dead job says by its code (``KindTriage.guidance["dead"]``): the
    table's lines for the document codes and ``codes`` (a kind's own), in the kind's words."""
    lines = {code: FAILURE_WORDS[code].said(words).staff for code in DOCUMENT_CODES}
    lines.update({code: CAUSE_WORDS[FailureCause.SERVICE].said(words).staff for code in codes})
    return lines


def failure(job: Job) -> Failure:
    """A dead job's reason and what to do, chosen by its ``failure_code`` (``failure_words``), in
    its kind's words; a document failure adds the failing step's message (``last_error`` after its
    code), written for the submitter."""
    code = job.failure_code
    said = failure_words(job.kind, code)
    detail = ""
    if code != FailureCode.DISCARDED and failure_cause(job.kind, code) == FailureCause.DOCUMENT:
        detail = sentence((job.last_error or "").strip().removeprefix(f"{code}: "))
    return Failure(said.why, said.advice, detail, resubmit=said.resubmit)


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


def delay_words(wait: queue.Wait, now: datetime, words: Words = GENERIC) -> str:
    """The queue is late, as the submitter is told it: for how long nothing was taken up, that staff
    know, and that her documents are kept ("" when it is on time)."""
    if not wait.delayed:
        return ""
    minutes = max(1, int(wait.waited(now).total_seconds() // 60))
    return (f"{words.run.capitalize()}s are taking longer than usual: the oldest waiting document has waited "
            f"{minutes} minute{'s' if minutes != 1 else ''}. Staff have been told. Your documents are kept, and "
            "this page updates when they start.")


def headline(job: Job, progress: str | None = None, delayed: bool = False) -> Headline:
    """``delayed``: the queue is late (``jobs.queue.lateness``), so a waiting job does not just wait its turn."""
    words = words_of(job.kind)
    if job.state == QUEUED:
        if delayed:
            return Headline("Waiting", f"delayed: {words.run}s are taking longer than usual", "attention")
        detail = "trying again shortly: the last try was interrupted" if job.attempts else words.waiting
        return Headline("Waiting", detail, "pending")
    if job.state == LEASED:
        return Headline(words.running, progress or "", "pending")
    if job.state == COMPLETED:
        return Headline("Done", job.outcome_text or "", tone(job))
    if job.state == DEAD:
        return Headline("Failed", "", "bad", failure(job))
    if job.state == UNKNOWN:
        return Headline("Needs checking", f"staff are confirming whether the {words.service} finished; "
                        "this page updates when they have", "checking")
    return Headline(state_words(job.state, words), "", tone(job))


def progress_words(job: Job) -> str | None:
    """Where a running job is, as its kind says it (from its checkpoint); None for other states."""
    if job.state != LEASED:
        return None
    return kind_pages.of(job.kind).progress_text(job.pk)


@dataclass(frozen=True)
class Moment:
    """One line of the submitter's timeline."""

    at: datetime
    words: str
    tone: str = ""


# A claim that ended with one of these was never started: a worker held it (prefetched) and
# died or stopped before it began (jobs.queue.recover, give_back_unstarted).
UNSTARTED_REASONS = ("returned unstarted", "handed back unstarted")
# A deferral's reason (``jobs.queue.defer``); the handler's own words follow it.
DEFERRED = "deferred: "
# Whose "not now" a deferral was, by words of its reason (the agent's model and planner calls,
# and the provider slots every host shares: ``providers.budget``).
PROVIDER_WORDS = ("provider", "planner", "(429)")


def timeline(events: Iterable[JobEvent], viewer_id: int | None = None, words: Words = GENERIC) -> list[Moment]:
    """The events in the submitter's words (the kind's: ``words``). Rejected writes and notes
    (to_state empty), epochs and markers are staff matters and are left out, and so is a claim
    that was never started (the job only waited in a worker's hand): it was no try, and nothing
    was interrupted. A teammate's cancel or resubmission is said with their name ("you" for the
    viewer).

    A try is a claim whose attempt was spent: the external-call marker and its settling are
    notes on the running try, never tries. A deferral (the model provider said "not now", or
    the worker shut down before it began) gives the attempt back: it reads as a wait, the
    claims and deferrals that follow it until the job goes on read as one wait, and the claim
    that goes on reads "Run resumed" (in the kind's words), not as another try."""
    events = list(events)
    told = _Timeline(words, member_names(events, viewer_id), unstarted_epochs(events))
    for event in events:
        told.add(event)
    return told.end()


def unstarted_epochs(events: list[JobEvent]) -> set[int]:
    """The claims (by epoch) handed back before they began."""
    return {e.epoch for e in events
            if e.from_state == LEASED and e.to_state == QUEUED and e.reason.startswith(UNSTARTED_REASONS)}


@dataclass
class _Timeline:
    """The timeline as it is told, one event at a time."""

    words: Words
    who: dict[str, str]  # the members said by name, by actor
    unstarted: set[int]
    moments: list[Moment] = field(default_factory=list)
    tries: int = 0
    waiting: bool = False  # the last line shown is a deferral: claims and deferrals only continue it
    resumed: datetime | None = None  # a claim after a deferral, said once the job goes on

    def add(self, event: JobEvent) -> None:
        by_staff = event.actor.startswith("staff:")
        hidden = event.epoch in self.unstarted and LEASED in (event.to_state, event.from_state) and not by_staff
        if self.waiting and event.to_state and not hidden and self.still_waiting(event):
            return
        if not event.to_state:
            self.note(event)
        elif not hidden:
            moment = self.moment(event, by_staff)
            if moment is not None:
                self.moments.append(moment)

    def still_waiting(self, event: JobEvent) -> bool:
        """Whether ``event`` only continues the wait a deferral began; once it does not, the
        claim that ended the wait is said."""
        to, before = event.to_state, event.from_state
        if to == QUEUED and before == LEASED and event.reason.startswith(DEFERRED):
            self.resumed = None  # another "not now": still the same wait
            return True
        if to == LEASED and before == QUEUED:
            self.resumed = event.at
            return True
        if to == LEASED and before == LEASED and not event.reason.startswith(queue.CANCEL_REQUESTED):
            return True  # the worker's notes (the external-call marker): shown to nobody, they end no wait
        self.say_resumed()
        self.waiting = False
        return False

    def say_resumed(self) -> None:
        if self.resumed is not None:
            self.moments.append(Moment(self.resumed, f"{self.words.run.capitalize()} resumed"))
            self.resumed = None

    def note(self, event: JobEvent) -> None:
        """A note on the job: only a member's resubmission is the submitter's."""
        member = self.who.get(event.actor)
        if member and event.reason.startswith(queue.RESUBMITTED_AS):
            new_job = event.reason.removeprefix(queue.RESUBMITTED_AS)
            self.moments.append(Moment(event.at, f"Submitted again by {member}, as job {new_job}"))

    def moment(self, event: JobEvent, by_staff: bool) -> Moment | None:
        to, before = event.to_state, event.from_state
        if not before:
            return Moment(event.at, "Received")
        if to == LEASED and before == LEASED:  # a note on a running job: a cancel request is the submitter's
            member = self.who.get(event.actor)
            if member and event.reason.startswith(queue.CANCEL_REQUESTED):
                return Moment(event.at, f"Cancel asked for by {member}: the {self.words.run} stops shortly")
            return None
        if to == LEASED:
            self.tries += 1
            run = self.words.run.capitalize()
            return Moment(event.at, f"{run} started" if self.tries == 1 else f"{run} started again (try {self.tries})")
        if to == QUEUED:
            return self.queued(event, by_staff)
        return self.finished(event, by_staff)

    def queued(self, event: JobEvent, by_staff: bool) -> Moment:
        if by_staff:
            return Moment(event.at, f"Staff sent it back {self.words.again}")
        if event.reason.startswith(DEFERRED):
            self.waiting = True
            return Moment(event.at, wait_words(event.reason, self.words))
        return Moment(event.at, "Interrupted: it will be tried again shortly", "attention")

    def finished(self, event: JobEvent, by_staff: bool) -> Moment:
        to = event.to_state
        if to == COMPLETED:
            return Moment(event.at, "Confirmed done by staff" if by_staff else "Done", "good")
        if to == DEAD:
            return Moment(event.at, "Closed by staff" if by_staff else "Failed", "bad")
        if to == UNKNOWN:
            return Moment(event.at, f"Paused: staff are checking whether the {self.words.service} finished",
                          "checking")
        if to == CANCELLED:
            by = self.who.get(event.actor) or ("staff" if by_staff else "")
            return Moment(event.at, f"Cancelled by {by}" if by else "Cancelled")
        return Moment(event.at, state_words(to, self.words))

    def end(self) -> list[Moment]:
        self.say_resumed()  # running again after the wait
        return self.moments


def wait_words(reason: str, words: Words = GENERIC) -> str:
    """A deferral in the submitter's words: who asked to wait; no try was spent."""
    if any(word in reason for word in PROVIDER_WORDS):
        return f"Waiting for the model provider, which asked us to slow down: the {words.run} goes on shortly"
    return f"Paused: the {words.run} goes on shortly"


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
