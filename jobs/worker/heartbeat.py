"""The heartbeat: keep the running claim's lease (and the prefetched ones'), or give it up in time."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db import DatabaseError, connection

from .. import forks, queue
from ..clock import Clock
from ..context import JobContext
from ..logs import Repeats, event

log = logging.getLogger("jobs.worker")
_errors = Repeats(log)  # an outage: one line per interval with the count, not one per try
INFO, WARNING = logging.INFO, logging.WARNING


class Beat:
    """The renewal policy for one claim: every lease/3, never past the deadline, then stop.

    The number of renewals is bounded by the job's budget: at most
    ``ceil((deadline - claimed) / (lease / 3))``. A rejected renewal means the claim is
    lost (recovered, superseded, or out of time); the handler is told to stop and the worker
    writes nothing more for this epoch.

    Self-fencing: when renewals fail (the database unreachable, a network cut) the worker
    cannot know whether its lease will be honoured, and past its end another host may run
    the job. So at two thirds of the lease since the last successful renewal the claim is
    given up: the handler is told to stop, an isolated one is killed when the lease ends,
    and the worker writes nothing more for this epoch. Giving up never waits for the
    renewal in flight: on a dead path that call returns only when the driver's timeouts
    say so, which can be after the lease has ended.
    """

    def __init__(self, claim: queue.Claim, ctx: JobContext, *, lease: timedelta, first_interval: timedelta,
                 claimed_at: datetime, expires: datetime | None = None) -> None:
        self.claim = claim
        self.ctx = ctx
        self.lease = lease
        self.interval = first_interval
        self.lock = threading.Lock()  # held by a renewal in flight, and by the worker to end it
        self._flags = threading.Lock()  # done / lost / fenced; never held across a database call
        self.done = False
        self.renewals = 0
        self.max_renewals = max(1, math.ceil(3 * (claim.deadline - claimed_at) / lease))
        self.lost = ""  # why the claim was lost, when it was
        self.budget_spent = False
        self.fenced = False
        self.cancel_requested = False
        self.renewing = False  # a renewal is waiting for the database
        self.failing = False  # the last renewal attempt failed (the database did not answer)
        self.expires = expires or claim.lease_expires_at
        self.due: datetime | None = None  # on the worker's clock; None: no more beats

    def beat(self, now: datetime, held: Sequence[Held] = ()) -> bool:
        """Renew once if the policy allows; return whether to keep beating.

        The worker's prefetched claims (``held``) are renewed in the same statement.
        """
        with self.lock:
            if self.done or self.lost:
                return False
            if now >= self.claim.deadline or self.renewals >= self.max_renewals:
                self.budget_spent = True
                self.ctx.stop.set()  # the job's budget is spent: ask the handler to stop
                return False
            if self.expires >= self.claim.deadline and not held:
                return True  # the lease already reaches the deadline; wake at the deadline
            self.renewing = True
            try:
                if held:
                    outcome = renew_together(held, now, running=(self.claim, self.lease))
                else:
                    outcome = queue.renew(job_id=self.claim.job_id, epoch=self.claim.epoch, now=now,
                                          lease=self.lease)
            except DatabaseError:
                self.failing = True
                raise
            finally:
                self.renewing = False
            self.failing = False
            if not outcome:
                self._give_up(outcome.reason or "renewal rejected", fenced=False)
                return False
            if self.lost:  # fenced while the renewal was in flight: the claim stays given up
                return False
            if outcome.reason == queue.CANCEL_REQUESTED and not self.cancel_requested:
                # Someone asked to cancel: tell the handler, and keep the lease while it settles.
                self.cancel_requested = True
                self.ctx.stop.set()
            self.renewals += 1
            self.expires = min(now + self.lease, self.claim.deadline)
            self.interval = self.lease / 3
            return True

    def cancel(self) -> bool:
        """Someone asked to cancel the job (heard at once, between renewals): tell the handler,
        and keep the lease while it settles. False if the claim had already ended or been lost."""
        with self._flags:
            if self.done or self.lost:
                return False
            self.cancel_requested = True
            self.ctx.stop.set()
            return True

    def fence_at(self) -> datetime | None:
        """When the claim is given up unless renewed first: two thirds into the lease (None:
        the lease already reaches the deadline, which ends the job instead)."""
        return self.expires - self.lease / 3 if self.expires < self.claim.deadline else None

    def fence_due(self, now: datetime) -> bool:
        """Two thirds of the lease have passed since it was last renewed."""
        at = self.fence_at()
        return at is not None and now >= at

    def fence(self, why: str) -> bool:
        """Give the claim up without a word from the database (see the class docstring);
        False if it had already ended or been lost."""
        return self._give_up(f"self-fenced: {why}", fenced=True)

    def _give_up(self, why: str, *, fenced: bool) -> bool:
        with self._flags:
            if self.done or self.lost:
                return False
            self.lost = why
            self.fenced = fenced
            self.ctx.stop.set()
            return True

    def end(self) -> None:
        """The handler returned: no renewal may run from here on.

        Waits for a renewal in flight, so none lands after the worker's own final write;
        except on a fenced claim, for which the worker writes nothing more and which must
        not wait on the call that hangs.
        """
        if self.fenced:
            with self._flags:
                self.done = True
            return
        with self.lock, self._flags:
            self.done = True


class Held:
    """A prefetched claim not started yet: its lease as last renewed, and what renewals said."""

    def __init__(self, claim: queue.Claim) -> None:
        self.claim = claim
        self.expires = claim.lease_expires_at
        self.lost = ""  # a renewal (or the start) was rejected: why
        self.cancel_requested = False
        self.started = False  # its start is recorded (queue.start_many), its attempt spent

    def renewed(self, outcome: queue.Outcome, now: datetime) -> None:
        if not outcome:
            self.lost = outcome.reason or "renewal rejected"
            return
        self.expires = min(now + self.claim.lease, self.claim.deadline)
        self.cancel_requested = self.cancel_requested or outcome.reason == queue.CANCEL_REQUESTED

    def needs_renewal(self, now: datetime) -> bool:
        """Less than five sixths of a lease left: renew before starting it, so its beats keep
        the usual margin before the fence time (``Beat.fence_at``)."""
        return not self.lost and self.expires - now < self.claim.lease * 5 / 6


def renew_together(held: Sequence[Held], now: datetime,
                   running: tuple[queue.Claim, timedelta] | None = None) -> queue.Outcome:
    """Renew the running claim (if any) and the held ones in one statement; the running
    claim's outcome is returned, the held ones' are kept on them."""
    leases = [(h.claim.job_id, h.claim.epoch, h.claim.lease) for h in held]
    if running is not None:
        leases.insert(0, (running[0].job_id, running[0].epoch, running[1]))
    outcomes = queue.renew_many(leases=leases, now=now)
    for h, outcome in zip(held, outcomes[len(outcomes) - len(held):], strict=True):
        h.renewed(outcome, now)
    return outcomes[0] if running is not None else queue.Outcome(True, queue.LEASED)


class Heartbeat:
    """Two long-lived threads that keep the current claim's lease, or give it up in time.

    One pair per worker, not one per job, and the worker never wakes them: they look at the
    current claim on their own schedule (every lease/3 when idle, at the claim's next due
    time otherwise), on the worker's clock (in production ``queue_clock``: the database's time
    carried forward on ``time.monotonic()``, so the fence time holds whatever this host's wall
    clock does). A job that finishes within a third of its lease costs two attribute writes
    here: no thread start, no context switch, no database write.

    The heartbeat thread renews. The fence thread gives the claim up at its fence time
    (``Beat.fence_at``) when a renewal is still waiting for the database, or the last one
    failed: a connect or a statement on a dead path waits for the driver's timeouts
    (``connect_timeout``, ``tcp_user_timeout``, ``lock_timeout``), which need not fit
    inside a short lease, and the handler must not run on past it meanwhile.
    Neither thread holds a database connection between beats, so a handler sandbox forked
    from the worker never inherits one.
    """

    FENCE_POLL = 0.05  # seconds between looks once the fence time has passed

    def __init__(self, clock: Clock, idle_wait: timedelta) -> None:
        self.clock = clock
        self.idle_wait = idle_wait.total_seconds()
        self._beat: Beat | None = None
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self._held: list[Held] = []  # prefetched claims, renewed with the running one
        self._held_lock = threading.Lock()

    def watch(self, beat: Beat) -> None:
        if not self._threads:
            for target, name in ((self._run, "heartbeat"), (self._watch_fence, "fence")):
                thread = threading.Thread(target=target, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)
        beat.due = self.clock.now() + beat.interval
        self._beat = beat

    @property
    def current(self) -> Beat | None:
        return self._beat

    def hold(self, claims: Sequence[queue.Claim]) -> None:
        with self._held_lock:
            self._held.extend(Held(c) for c in claims)

    def take(self) -> Held | None:
        """The next prefetched claim, now the worker's to run (no longer held)."""
        with self._held_lock:
            return self._held.pop(0) if self._held else None

    @property
    def holding(self) -> bool:
        """Whether any prefetched claim is held (a read of the list's length: no lock)."""
        return bool(self._held)

    def held(self) -> list[Held]:
        with self._held_lock:
            return list(self._held)

    def drop_held(self) -> list[Held]:
        """Every prefetched claim, no longer held: for giving them back or up."""
        with self._held_lock:
            dropped, self._held = self._held, []
        return dropped

    def release(self, beat: Beat) -> None:
        self._beat = None
        beat.end()  # waits for a renewal in flight; none starts after this

    def close(self) -> None:
        self._closed.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _run(self) -> None:
        while not self._closed.is_set():
            beat = self._beat
            if beat is None or beat.due is None:  # idle, or this claim needs no more beats
                self._closed.wait(self.idle_wait)
                continue
            now = self.clock.now()
            wait = (min(beat.due, beat.claim.deadline) - now).total_seconds()
            if wait > 0:
                self._closed.wait(min(wait, self.idle_wait))
                continue
            with forks.database_work():
                try:
                    keep_beating = beat.beat(now, self.held())
                    beat.due = now + beat.interval if keep_beating else None
                    _errors.settle()
                except DatabaseError as exc:  # try again shortly, while the lease has slack
                    _errors.event(WARNING, "renewal_error", job=beat.claim.job_id, epoch=beat.claim.epoch,
                                  error=type(exc).__name__, detail=str(exc)[:200])
                    now = self.clock.now()
                    if beat.fence_due(now):
                        self._fence(beat, f"lease not renewed since {beat.expires - beat.lease:%H:%M:%S} "
                                          f"({type(exc).__name__})")
                    beat.due = now + min(timedelta(seconds=1), beat.interval)
                finally:
                    connection.close()

    def _watch_fence(self) -> None:
        while not self._closed.is_set():
            beat = self._beat
            at = beat.fence_at() if beat is not None and not (beat.done or beat.lost) else None
            if at is None:
                self._closed.wait(self.idle_wait)
                continue
            wait = (at - self.clock.now()).total_seconds()
            if wait > 0:
                self._closed.wait(min(wait, self.idle_wait))
                continue
            if beat is not None and (beat.renewing or beat.failing):
                self._fence(beat, "lease not renewed in time: the database has not answered")
            self._closed.wait(self.FENCE_POLL)

    def _fence(self, beat: Beat, why: str) -> None:
        if beat.fence(why):
            event(log, WARNING, "self_fenced", job=beat.claim.job_id, epoch=beat.claim.epoch,
                  lease_expires=beat.expires.isoformat(), why=why)

