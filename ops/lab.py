"""The lease lab: what a lease's length and a worker's crash do to one job.

It runs the real queue operations on a throwaway database. A lease (5-30 logical seconds)
and a crash position (none, before the external effect, after the external-start marker)
go in; a timeline comes out: accept, claim, execute, recover, complete, inspect, with the
owner, input, durable output and possible failure at each step. The experiment runs in a
child process (``manage.py leaselab``) whose ``DATABASE_URL`` is a fresh SQLite file in a
temporary directory, so it can never write to the live store, whatever that is. Time is a
``LogicalClock``: nothing sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from .throwaway import create_tables

if TYPE_CHECKING:
    from jobs.clock import LogicalClock
    from jobs.queue import Claim

LEASES = range(5, 31)
DEFAULT_LEASE = 10  # seconds: the lab's baseline, against which a longer or shorter lease is described
CRASHES = ("none", "before-effect", "after-marker")
KIND = "diagnostic.sleep"  # the project's own kind: sleeps (on the lab's clock), may mark an external start
WORK_SECONDS = 3  # logical seconds the handler works: shorter than the shortest lease
THROWAWAY_ENV = "LEASELAB_DATABASE"  # the child refuses to run unless its database is this new file
MANAGE = str(Path(settings.BASE_DIR) / "manage.py")

# What each case should show, printed beside what the run observed so that a difference
# stands out: a healthy run completes once; a crash before any outside effect is redelivered
# when the lease expires and the first worker's late write is refused; a crash after the
# external-start marker leaves the job unknown, for staff, and no worker tries it again.
CASES = {
    "none": ("Healthy", "Completed; no replacement attempt"),
    "before-effect": ("Recoverable crash", "Earliest replacement at the lease; pure work redelivers; "
                      "stale completion rejected"),
    "after-marker": ("Ambiguous call", "Unknown; no new worker attempt authorised automatically"),
}


class LabError(ValueError):
    """The experiment was asked for something it does not do, or could not run."""


def check(lease: int, crash: str) -> None:
    if lease not in LEASES:
        raise LabError(f"the lease must be a whole number of seconds from {LEASES[0]} to {LEASES[-1]}, not {lease}")
    if crash not in CRASHES:
        raise LabError(f"the crash position must be one of {', '.join(CRASHES)}, not {crash!r}")


# --- In the parent: start the child on a fresh file -----------------------------------------


def run(*, lease: int, crash: str, timeout: float = 60) -> dict[str, Any]:
    """Run the experiment in a child process on a new SQLite file; return its timeline."""
    check(lease, crash)
    with tempfile.TemporaryDirectory(prefix="leaselab-") as tmp:
        db = Path(tmp) / "lab.sqlite3"
        env = dict(
            os.environ, DATABASE_URL=f"sqlite:///{db}", **{THROWAWAY_ENV: str(db)},
            MEDIA_ROOT=str(Path(tmp) / "documents"), JOBSITE_VAR_DIR=tmp, JOBS_LOG_LEVEL="WARNING",
            SQLITE_SYNCHRONOUS="NORMAL",  # a file deleted a second later needs no power-loss safety
        )
        # The parent ran the system checks; its child runs on the same settings and code.
        cmd = [sys.executable, MANAGE, "leaselab", "--skip-checks", "--lease", str(lease), "--crash", crash, "--json",
               "--in-throwaway-database"]
        try:
            proc = subprocess.run(cmd, check=False, env=env, cwd=settings.BASE_DIR, capture_output=True, text=True,  # noqa: S603  our argv: this Python, manage.py, checked options
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LabError(f"the lab did not finish within {timeout:g} s") from None
    if proc.returncode != 0:
        raise LabError(f"the lab failed: {proc.stderr.strip()[-1000:]}")
    figures: dict[str, Any] = json.loads(proc.stdout)
    return figures


# --- In the child: the experiment itself ------------------------------------------------------


@dataclass
class Step:
    t: float  # logical seconds since acceptance
    step: str  # accept, claim, execute, recover, complete, inspect
    owner: str
    input: str
    output: str
    failure: str
    state: str
    epoch: int
    applied: bool | None = None


@dataclass
class Timeline:
    lease: int
    crash: str
    case: str
    expected: str
    steps: list[Step] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    final_state: str = ""
    earliest_replacement: float | None = None
    stale_completion_rejected: bool | None = None
    automatic_new_attempt: bool = False
    claims: int = 0
    verdict: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class WorkerCrashed(Exception):
    """The lab's worker stops here, at logical time zero."""


class LabTime(threading.Event):
    """Stands in for the handler's stop event: its wait passes logical time, or the worker dies.

    ``diagnostic.sleep`` waits on ``ctx.stop`` for its work; here that advances the lab's
    clock instead of sleeping, or raises ``WorkerCrashed`` where the experiment crashes.
    """

    def __init__(self, clock: LogicalClock, *, crash: bool) -> None:
        super().__init__()
        self.clock, self.crash = clock, crash

    def wait(self, seconds: float | None = None) -> bool:
        if self.crash:
            raise WorkerCrashed
        self.clock.advance(seconds or 0)
        return False

    def is_set(self) -> bool:
        return False

    def set(self) -> None:
        pass


def experiment(*, lease: int, crash: str) -> Timeline:
    """Accept, claim, execute (maybe crash), recover, complete, inspect — on the lab's clock."""
    check(lease, crash)
    _refuse_unless_throwaway()
    create_tables()
    return _Lab(lease, crash).run()


def _refuse_unless_throwaway() -> None:
    """Run only on the new file the parent named: never on a live or existing database."""
    from django.db import connections

    expected = os.environ.get(THROWAWAY_ENV, "")
    conn = connections["default"]
    name = str(conn.settings_dict.get("NAME") or "")
    if not expected or conn.vendor != "sqlite" or name != expected or (
        Path(name).exists() and Path(name).stat().st_size > 0
    ):
        raise LabError("the lease lab runs only on its own new throwaway SQLite file; use `manage.py leaselab` "
                       "without --in-throwaway-database")


class _Lab:
    def __init__(self, lease: int, crash: str) -> None:
        from jobs.clock import LogicalClock

        self.clock = LogicalClock()
        self.start = self.clock.now()
        self.lease = timedelta(seconds=lease)
        case, expected = CASES[crash]
        if crash == "before-effect" and lease != DEFAULT_LEASE:
            case = "Longer lease" if lease > DEFAULT_LEASE else "Shorter lease"
            expected = f"Earliest replacement at {lease} s; " + (
                "slower failure recovery" if lease > DEFAULT_LEASE
                else "faster recovery, more false takeovers during pauses")
        self.timeline = Timeline(lease=lease, crash=crash, case=case, expected=expected)

    def t(self, at: datetime | None = None) -> float:
        return ((at or self.clock.now()) - self.start).total_seconds()

    def add(self, step: str, owner: str, input: str, output: str, failure: str, *,
            applied: bool | None = None) -> None:
        from jobs.models import Job

        row = Job.objects.values("state", "epoch").get(pk=self.job_id)
        self.timeline.steps.append(Step(self.t(), step, owner, input, output, failure, row["state"], row["epoch"],
                                        applied))

    def run(self) -> Timeline:
        crash = self.timeline.crash
        self.accept(external=crash == "after-marker")
        first = self.claim("w1")
        if first is None:  # the lab's database holds only the job just accepted
            raise RuntimeError("the lab's job was not claimed")
        result = self.execute(first, crash=crash != "none")
        if result is not None:
            self.complete(first, result)
        replacement = self.recover_and_probe()
        if replacement is not None:
            redone = self.execute(replacement, crash=False)
            self.complete(first, {"late": True}, stale=True)
            if redone is not None:  # always: only a crash leaves no result
                self.complete(replacement, redone)
        elif crash == "after-marker":
            self.complete(first, {"late": True}, stale=True)
        self.inspect()
        return self.timeline

    # --- the six steps -------------------------------------------------------------------

    def accept(self, *, external: bool) -> None:
        from accounts.models import Tenant, User
        from jobs import queue

        tenant = Tenant.objects.create(slug="lab", name="Lease lab")
        user = User.objects.create(username="lab", tenant=tenant)
        self.payload = {"seconds": WORK_SECONDS, **({"external": True} if external else {})}
        job = queue.accept(scope_id=tenant.pk, user_id=user.pk, kind=KIND, payload=self.payload,
                           operation_key="lab-1", now=self.clock.now(), offered_only=False).job
        self.job_id = job.pk
        self.add("accept", "API: trusted tenant and user, operation key lab-1",
                 f"kind {KIND}, payload {json.dumps(self.payload, sort_keys=True)}",
                 f"job {job.pk} committed as queued (deadline in {self._seconds(job.deadline)} s); 202 with its id",
                 "store unavailable: no 202, nothing accepted; a retry with the same key finds the same job")

    def claim(self, worker: str) -> Claim | None:
        from jobs import queue

        c = queue.claim(now=self.clock.now(), worker=worker, lease=self.lease)
        if c is not None:
            self.timeline.claims += 1
            self.add("claim", f"worker {worker} asks the queue for eligible work", "the oldest eligible queued job",
                     f"epoch {c.epoch}, attempt {c.attempt}, lease until t={self.t(c.lease_expires_at):g} s, "
                     f"committed", "a racing worker gets no duplicate claim: the conditional UPDATE matches once")
        return c

    def execute(self, claim: Claim, *, crash: bool) -> dict[str, Any] | None:
        """Run the kind's real handler; the lab's ``LabTime`` makes its work pass logical time."""
        from jobs import kinds
        from jobs.context import JobContext

        ctx = JobContext(claim, clock=self.clock, stop=LabTime(self.clock, crash=crash))
        owner = f"worker {claim.worker} (epoch {claim.epoch})"
        budget = (f"immutable payload, budget {self._seconds(claim.deadline)} s to the deadline, "
                  f"lease {self.timeline.lease} s")
        kind = kinds.get(KIND)
        if kind is None:  # registered by the jobs app, which the lab's process loads
            raise RuntimeError(f"the kind {KIND} is not registered")
        try:
            result = kind.handler(ctx)
        except WorkerCrashed:
            if self.payload.get("external"):
                self.add("execute", owner, budget,
                         "external-start marker committed, then the worker stopped at t=0 during the outside call",
                         "crash after the marker: nobody knows whether the outside effect happened", applied=False)
            else:
                self.add("execute", owner, budget, "nothing durable: the worker stopped at t=0 before any effect",
                         "crash before the effect: the pure work is lost, and can be redone", applied=False)
            return None
        self.add("execute", owner, budget,
                 f"result in the worker's memory after {WORK_SECONDS} s: {json.dumps(result, sort_keys=True)}; "
                 "not durable until completion",
                 "a pause longer than the lease lets another worker take the job", applied=True)
        return result

    def recover_and_probe(self) -> Claim | None:
        """Each logical second: the recovery sweep, then a second worker's claim.

        The first second at which w2's claim succeeds is the earliest replacement; for the
        after-marker case the probe runs on to twice the lease and finds nothing.
        """
        from jobs import queue

        quiet_since = self.t()
        limit = 2 * self.timeline.lease
        while self.t() < limit:
            self.clock.advance(seconds=1)
            swept = queue.recover(now=self.clock.now())
            if swept.total:
                what = ("requeued (no external-start marker: pure work may redeliver)" if swept.requeued else
                        "made unknown (the external-start marker is set)" if swept.unknown else "made dead")
                self.add("recover", "queue: the recovery sweep",
                         f"expired leases and external-start markers at t={self.t():g} s",
                         f"lease expired at t={self.timeline.lease} s: job {what}"
                         + (f"; quiet from t={quiet_since:g} to {self.t() - 1:g} s while the lease held"
                            if self.t() - 1 > quiet_since else ""),
                         "a worker that merely paused past its lease loses the job (a false takeover); the epoch "
                         "fences its writes" if swept.requeued else
                         "nobody may repeat the outside call automatically: staff reconcile the job", applied=True)
                quiet_since = self.t()
            replacement = self.claim("w2")
            if replacement is not None:
                self.timeline.earliest_replacement = self.t()
                return replacement
        crash = self.timeline.crash
        self.add("recover", "queue: the recovery sweep, then worker w2's claim, every second",
                 f"t={quiet_since + 1:g} to {self.t():g} s",
                 "nothing expired and nothing eligible: no replacement attempt" if crash == "none" else
                 "no eligible work: no new attempt is authorised automatically; staff reconcile it",
                 "none: the job is terminal for the workers")
        return None

    def complete(self, claim: Claim, result: dict[str, Any], *, stale: bool = False) -> None:
        from jobs import queue

        outcome = queue.complete(job_id=claim.job_id, epoch=claim.epoch, result=result, now=self.clock.now())
        if stale:
            self.timeline.stale_completion_rejected = not outcome.applied
        owner = f"worker {claim.worker} (epoch {claim.epoch})" + (", back from its pause" if stale else "")
        self.add("complete", owner, f"its result with epoch {claim.epoch}",
                 "completed: result committed" if outcome else f"rejected, nothing written: {outcome.reason}",
                 "stale or expired authority is rejected and recorded" if outcome else
                 "this worker's epoch no longer owns the job: its write changes nothing", applied=outcome.applied)

    def inspect(self) -> None:
        from jobs.models import Job, JobEvent
        from web import status

        job = Job.objects.get(pk=self.job_id)
        found = status.job_status(tenant_id=job.scope_id, job_id=job.pk)
        shown = status.job_json(found)
        saved = f"saved output {json.dumps(shown.get('result'), sort_keys=True)}" if shown.get("result") else \
            f"explicit state {shown['state']}" + (f" ({job.last_error})" if job.last_error else "")
        self.add("inspect", "API: the tenant's status read", f"job {job.pk}, scoped to tenant lab",
                 f"{shown['state']}, attempt {job.attempts}, epoch {job.epoch}: {saved}",
                 "another tenant asking gets the same 404 as for a job that does not exist")
        tl = self.timeline
        tl.final_state = job.state
        tl.automatic_new_attempt = tl.claims > 1
        tl.events = [
            {"t": self.t(e.at), "from": e.from_state, "to": e.to_state or "rejected", "epoch": e.epoch,
             "actor": e.actor, "reason": e.reason}
            for e in JobEvent.objects.filter(job_id=job.pk).order_by("id")
        ]
        tl.verdict = verdict(tl)

    def _seconds(self, at: datetime) -> int:
        return round((at - self.clock.now()).total_seconds())


def verdict(tl: Timeline) -> str:
    """The observed outcome, worded like ``CASES`` so the two read side by side."""
    if tl.final_state == "completed" and tl.earliest_replacement is None:
        return "Completed; no replacement attempt."
    if tl.final_state == "completed":
        return (f"Completed by the replacement; earliest replacement at {tl.earliest_replacement:g} s; pure work "
                f"redelivered; stale completion {'rejected' if tl.stale_completion_rejected else 'ACCEPTED'}.")
    if tl.final_state == "unknown":
        return "Unknown; no new worker attempt authorised automatically" + (
            "." if not tl.automatic_new_attempt else " — BUT a new attempt was made.")
    return f"Ended {tl.final_state}."


def as_text(tl: dict[str, Any]) -> str:
    """The timeline as the command prints it."""
    lines = [f"Lease lab: lease {tl['lease']} s, crash {tl['crash']} — {tl['case']}",
             f"Expected: {tl['expected']}", ""]
    for n, s in enumerate(tl["steps"], 1):
        lines += [f"{n:>2}. t={s['t']:>4g} s  {s['step'].upper():<9} state {s['state']}, epoch {s['epoch']}",
                  f"      owner:   {s['owner']}",
                  f"      input:   {s['input']}",
                  f"      output:  {s['output']}",
                  f"      failure: {s['failure']}"]
    lines += ["", "Events (the job's timeline):"]
    for e in tl["events"]:
        lines.append(f"  t={e['t']:>4g} s  {e['from'] or '-':>8} -> {e['to']:<9} epoch {e['epoch']}  "
                     f"{e['actor']}: {e['reason']}")
    replacement = "none" if tl["earliest_replacement"] is None else f"{tl['earliest_replacement']:g} s"
    lines += ["", f"Final state: {tl['final_state']}   earliest replacement: {replacement}   "
                  f"claims: {tl['claims']}", f"Verdict: {tl['verdict']}"]
    return "\n".join(lines)
