"""One worker: recover, claim, run the handler under its budgets, finish with its own epoch.

The loop knows nothing of argparse or signals (``jobs.supervisor`` and the ``runworkers``
command wire those to ``Worker.stop``), so tests drive it directly: ``run_one()`` does at
most one job, ``run()`` loops until stopped.

The hot path is the claim and the completion plus what the handler itself does. A worker
may claim several jobs in one transaction (prefetch: ``Worker.prefetch``, as many as its
recent jobs suggest it finishes within ``PREFETCH_WINDOW_SECONDS``) and commits finished
jobs in batches (``Completer``), so fast jobs share their fsyncs. The recovery sweep runs
at a bounded rate, and the heartbeat is a pair of long-lived threads that write only for
jobs that outlive a third of their lease (renewing the prefetched claims with them).
Kinds that read what users send run their handler in a child process under hard limits
(``jobs.sandbox``); cheap kinds run in the worker itself.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Sequence

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection

from . import kinds, queue
from .clock import Clock, queue_clock
from .context import JobContext
from .logs import event
from .models import Job
from .sandbox import Sandbox
from .verdicts import Cancelled, Completed, Deferred, Failed, Lost, Verdict, judge

log = logging.getLogger("jobs.worker")
INFO, WARNING = logging.INFO, logging.WARNING

NOTIFY_CHANNEL = "jobs_accepted"  # queue.accept sends NOTIFY jobs_accepted on PostgreSQL

# Tests (settings.JOBS["FREEZE_AT"]): where a worker may stop itself, as a paused VM would.
FREEZE_POINTS = {
    "claim": "before a claim of several jobs is sent",
    "claimed": "after a claim of several jobs returned, before any of them starts",
    "handler": "as a handler starts, with prefetched jobs held",
    "complete": "before a completion batch of several jobs is sent",
}


def freeze_point(point: str, jobs: int) -> None:
    """Tests: SIGSTOP this process at ``point`` if settings name it, the first time it
    handles more than one job there (a claim or batch of several, or jobs held beside one).
    Logged first, so a test can see which point it stopped at."""
    if jobs < 2 or settings.JOBS["FREEZE_AT"] != point:
        return
    settings.JOBS["FREEZE_AT"] = ""  # once: after SIGCONT the worker goes on as usual
    event(log, WARNING, "freezing", point=point, jobs=jobs, pid=os.getpid())
    os.kill(os.getpid(), signal.SIGSTOP)


def default_name() -> str:
    """``host:pid``: an operator (or the kill test) can find the process that holds a lease."""
    return f"{socket.gethostname()[:80]}:{os.getpid()}"


@dataclass
class WorkerStats:
    """What one worker did; logged when it stops, read by tests."""

    claimed: int = 0
    completed: int = 0
    failed: int = 0
    deferred: int = 0
    given_back: int = 0
    left_to_lease: int = 0
    cancelled: int = 0
    rejected: int = 0  # stale or expired authority: a fenced write that changed nothing
    recovered: int = 0
    empty_polls: int = 0
    errors: int = 0


class IdleBackoff:
    """Exponential backoff for an idle worker: start small, double, stop at the cap."""

    def __init__(self, cap: float, start: float = 0.05) -> None:
        self.cap = cap
        self.start = min(start, cap)
        self._next = self.start

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        self._next = self.start


# --- Heartbeat ----------------------------------------------------------------------------


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
            try:
                keep_beating = beat.beat(now, self.held())
                beat.due = now + beat.interval if keep_beating else None
            except DatabaseError as exc:  # try again shortly, while the lease has slack
                event(log, WARNING, "renewal_error", job=beat.claim.job_id, epoch=beat.claim.epoch,
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


# --- Batched completion ---------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    """A job whose handler completed, waiting for its batch to commit."""

    claim: queue.Claim
    result: dict[str, Any]
    summary: kinds.Summary | None
    fields: dict[str, object]
    started: float  # monotonic: when the worker started the job
    handed_in: float  # monotonic: when the handler's result reached the completer


class Completer:
    """Commits finished jobs in batches: up to ``batch`` a transaction, none held back long.

    Each row of a batch is fenced on its own (``queue.complete_many``). Nothing about a job
    is reported (``done``: the worker's counts and its log line) before the batch holding it
    commits, and a job whose batch never commits (the worker died) is redelivered when its
    lease runs out, like any job whose worker died before its completion. The worker flushes
    the batch itself when it is full, before it claims again, and between jobs once the
    oldest has waited ``interval`` seconds; a thread flushes a batch that waited that long
    while the worker is busy in a longer handler. With a batch of one, every completion is
    committed at once, in the worker's thread.
    """

    # After a failed commit (the database is away) the batch waits before it is tried again:
    # 25 ms, doubling, at most 2 s; the first commit that works resets it.
    RETRY_START, RETRY_CAP = 0.025, 2.0

    def __init__(self, *, batch: int, interval: float, clock: Clock,
                 done: Callable[[Finished, queue.Outcome], None], pause: float = 0.0) -> None:
        self.batch = max(1, batch)
        self.interval = interval
        self.retry = IdleBackoff(cap=self.RETRY_CAP, start=self.RETRY_START)
        self._retry_at = 0.0  # monotonic: no flush that is only due is tried before then
        self.clock = clock
        self._done = done
        self._pause = pause  # tests: wait this long before each commit
        self._pending: list[Finished] = []
        self._lock = threading.Lock()  # guards the pending list; held for a flush, one at a time
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    def submit(self, finished: Finished) -> None:
        """Add a finished job; commit the batch if it is full."""
        with self._lock:
            self._pending.append(finished)
            if len(self._pending) >= self.batch:
                self._flush()
                return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="completer", daemon=True)
            self._thread.start()
        self._wake.set()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def flush_if_due(self) -> None:
        with self._lock:
            if self._pending and time.monotonic() >= self._due(self._pending[0]):
                self._flush()

    def _due(self, oldest: Finished) -> float:
        """When the batch whose oldest job is ``oldest`` should be committed: that job's
        interval, or later while a failed commit backs off."""
        return max(oldest.handed_in + self.interval, self._retry_at)

    def _flush(self) -> None:
        """Commit what is pending (the lock is held); on a database error it stays pending."""
        if not self._pending:
            return
        if self._pause:
            for f in self._pending:
                event(log, INFO, "completion_pending", job=f.claim.job_id, epoch=f.claim.epoch,
                      pause_s=self._pause)
            time.sleep(self._pause)
        batch = list(self._pending)
        freeze_point("complete", len(batch))
        try:
            outcomes = queue.complete_many(
                completions=[queue.Completion(f.claim.job_id, f.claim.epoch, f.result, f.summary) for f in batch],
                now=self.clock.now())
        except DatabaseError:
            self._retry_at = time.monotonic() + self.retry.next_delay()
            raise
        self.retry.reset()
        self._retry_at = 0.0
        del self._pending[:len(batch)]
        for finished, outcome in zip(batch, outcomes, strict=True):
            self._done(finished, outcome)

    def _run(self) -> None:
        """Flush a batch whose oldest job waited ``interval`` while the worker was busy."""
        while not self._closed.is_set():
            self._wake.clear()
            oldest = self._pending[:1]  # a copy: the worker may flush the list meanwhile
            if not oldest:
                self._wake.wait(1.0)
                continue
            wait = self._due(oldest[0]) - time.monotonic()
            if wait > 0:
                self._closed.wait(wait)
                continue
            try:
                self.flush_if_due()
            except DatabaseError as exc:  # tried again after the backoff (or by the worker's next flush)
                event(log, WARNING, "completion_error", error=type(exc).__name__, detail=str(exc)[:200],
                      retry_in_s=round(max(self._retry_at - time.monotonic(), 0), 3))
            finally:
                connection.close()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


# --- PostgreSQL wake-ups --------------------------------------------------------------------


class Listener:
    """LISTEN jobs_accepted on a connection of its own; each notification wakes the worker.

    It also listens for cancel requests (``queue.CANCEL_CHANNEL``, "job:epoch") and hands each
    to ``cancelled``, so a running handler hears of one at once rather than at its next renewal
    (one sent while the connection was lost is heard at that renewal, as without a listener).

    Django's connection cannot wait for notifications while it runs transactions, so a
    small thread owns a second, autocommit connection for the worker's lifetime. When that
    connection is lost (the database restarted, the network failed), or cannot be opened at
    all (the worker started before the database), the thread connects again with backoff
    and listens, waking the worker once so it polls for anything it missed meanwhile.
    """

    BACKOFF = (0.5, 1.0, 2.0, 5.0)

    def __init__(self, wake: threading.Event, *, worker: str = "",
                 cancelled: Callable[[int, int], None] | None = None) -> None:
        self._wake = wake
        self._cancelled = cancelled
        self._closed = threading.Event()
        self._conn: Any = None
        try:
            self._conn = self._connect()
        except Exception as exc:  # noqa: BLE001  not up yet: the thread keeps trying
            event(log, WARNING, "listen_failed", worker=worker, error=type(exc).__name__, detail=str(exc)[:200],
                  retrying=True)
        self.reconnects = 0
        self._thread = threading.Thread(target=self._run, name="listener", daemon=True)
        self._thread.start()

    def _connect(self) -> Any:
        conn = connection.get_new_connection(connection.get_connection_params())
        conn.autocommit = True
        conn.execute(f"LISTEN {queue.CANCEL_CHANNEL}")
        conn.execute(f"LISTEN {NOTIFY_CHANNEL}")  # last: what pg_stat_activity shows of the session
        return conn

    def _run(self) -> None:
        failures = 0
        while not self._closed.is_set():
            if self._conn is None:
                try:
                    self._conn = self._connect()
                except Exception:  # noqa: BLE001  still away: try again later
                    self._closed.wait(self.BACKOFF[min(failures, len(self.BACKOFF) - 1)])
                    failures += 1
                    continue
                failures = 0
                self.reconnects += 1
                event(log, INFO, "listener_reconnected", reconnects=self.reconnects)
                self._wake.set()
            try:
                for notice in self._conn.notifies(timeout=0.5):
                    if notice.channel == queue.CANCEL_CHANNEL:
                        self._cancel(notice.payload)
                    else:
                        self._wake.set()
            except Exception as exc:  # noqa: BLE001  polling still finds the work meanwhile
                if self._closed.is_set():
                    return
                event(log, WARNING, "listener_lost", error=type(exc).__name__, detail=str(exc)[:200])
                self._discard()

    def _cancel(self, payload: str) -> None:
        if self._cancelled is None:
            return
        try:
            job_id, epoch = (int(part) for part in payload.split(":"))
        except ValueError:
            return
        self._cancelled(job_id, epoch)

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()
        except Exception:  # noqa: BLE001, S110  already broken: nothing to close
            pass

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=2)
        self._discard()


class CancelWatch:
    """Without a listener (SQLite, or burst mode): look every ``EVERY`` seconds whether someone
    asked to cancel a job this worker holds, and hand each request to ``cancelled``.

    One primary-key lookup of the held jobs, only while the worker holds some; the thread's
    connection is closed after each look, so a handler sandbox forked meanwhile inherits none.
    """

    EVERY = 0.5

    def __init__(self, held: Callable[[], list[tuple[int, int]]], cancelled: Callable[[int, int], None]) -> None:
        self._held = held
        self._cancelled = cancelled
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cancel-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(self.EVERY):
            claims = self._held()
            if not claims:
                continue
            try:
                for job_id, epoch in queue.cancels_requested(claims=claims):
                    self._cancelled(job_id, epoch)
            except DatabaseError as exc:  # the renewal tells the worker all the same
                event(log, WARNING, "cancel_check_error", error=type(exc).__name__, detail=str(exc)[:200])
            finally:
                connection.close()

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=2)


# --- The worker -----------------------------------------------------------------------------


class Worker:
    """Claims and runs jobs until stopped (or, in burst mode, until nothing is eligible)."""

    def __init__(
        self,
        *,
        name: str | None = None,
        lease: timedelta | None = None,
        poll_interval: float = 1.0,
        recover_every: timedelta | None = None,
        grace: float = 20.0,
        burst: bool = False,
        clock: Clock = queue_clock,
        listen: bool | None = None,
        isolate: bool | None = None,
        prefetch: int = 1,
        completion_batch: int = 1,
    ) -> None:
        self.name = name or default_name()
        self.lease = lease or timedelta(seconds=settings.JOBS["DEFAULT_LEASE_SECONDS"])
        # Sweeping is a write transaction: at most every lease/3 per worker (a dead worker's
        # job waits at most lease + lease/3), and not more often than 4 times a second.
        self.recover_every = recover_every or max(self.lease / 3, timedelta(seconds=0.25))
        self.grace = grace
        self.burst = burst
        self.clock = clock
        self.listen = listen
        # Isolated kinds run in a child process unless this is off (tests that drive a
        # worker in-process on a logical clock turn it off).
        self.isolate = settings.JOBS["ISOLATE_HANDLERS"] if isolate is None else isolate
        self.sandbox = Sandbox()
        self.stats = WorkerStats()
        self.idle = IdleBackoff(cap=poll_interval)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._next_sweep: datetime | None = None
        self._heartbeat = Heartbeat(clock, idle_wait=self.lease / 3)
        self._current: JobContext | None = None
        self._starting: Held | None = None  # the claim being started, no longer held, not yet watched
        self._giving_back = False
        self._grace_timer: threading.Timer | None = None
        # Prefetch: up to this many claims a transaction, as many as the recent handler
        # time (a moving average, seconds) says finish within the window.
        self.prefetch = max(1, prefetch)
        self.prefetch_window = settings.JOBS["PREFETCH_WINDOW_SECONDS"]
        # The start of each job is recorded before its handler runs; the next jobs that
        # recent handler times say finish within this window are recorded with it.
        self.start_window = settings.JOBS["START_WINDOW_SECONDS"]
        self._job_seconds: float | None = None
        self.completer = Completer(batch=completion_batch, interval=settings.JOBS["COMPLETION_FLUSH_MS"] / 1000,
                                   clock=clock, done=self._completed,
                                   pause=settings.JOBS["COMPLETER_PAUSE_SECONDS"])

    # -- control ------------------------------------------------------------------------

    def stop(self, grace: float | None = None) -> None:
        """Stop claiming; the running job gets ``grace`` seconds, then is asked to stop.

        Safe to call from a signal handler: it only sets events and starts a timer.
        """
        if self._stop.is_set():
            return
        self._stop.set()
        self._wake.set()
        grace = self.grace if grace is None else grace
        self._grace_timer = threading.Timer(grace, self._give_back_current)
        self._grace_timer.daemon = True
        self._grace_timer.start()
        if self._heartbeat.held():  # unstarted prefetched jobs go back now, not after the running one
            threading.Thread(target=self._give_back_held, kwargs={"own_connection": True}, name="give-back",
                             daemon=True).start()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _give_back_current(self) -> None:
        """The grace period is over: the running job is asked to stop and will be handed back.

        The flag goes up before ``_current`` is read, and ``_execute`` reads the flag after
        setting ``_current``, so a job starting at this moment is seen by one side or the other.
        """
        self._giving_back = True
        ctx = self._current
        if ctx is not None:
            ctx.stop.set()

    # -- the loop -----------------------------------------------------------------------

    def run(self) -> WorkerStats:
        """Loop until stopped; in burst mode, until no job is eligible. Returns the counts."""
        listener = self._open_listener()
        watch = CancelWatch(self._holding, self._cancel_heard) if listener is None else None
        event(log, INFO, "worker_started", worker=self.name, lease_s=self.lease.total_seconds(),
              poll_s=self.idle.cap, burst=self.burst, listen=listener is not None, isolate=self.isolate)
        try:
            while not self._stop.is_set():
                close_old_connections()
                try:
                    if self._step():
                        self.idle.reset()
                        continue
                    if self.burst and self._drained():
                        break
                except DatabaseError as exc:  # store unavailable: back off; leases cover our jobs
                    self.stats.errors += 1
                    event(log, WARNING, "database_error", worker=self.name, error=type(exc).__name__,
                          detail=str(exc)[:200])
                    connection.close()
                if not self.burst:
                    self._wake.wait(self.idle.next_delay())
                    self._wake.clear()
        finally:
            if listener is not None:
                listener.close()
            if watch is not None:
                watch.close()
            self.close()
            event(log, INFO, "worker_stopped", worker=self.name, **vars(self.stats))
        return self.stats

    def close(self) -> None:
        """Commit the pending completions, hand back unstarted prefetched jobs, end the
        heartbeat, completer and sandbox, close this thread's connection."""
        if self._grace_timer is not None:
            self._grace_timer.cancel()
        try:
            self.completer.flush()
            self._give_back_held()
        except DatabaseError as exc:  # their leases bring the jobs back
            self.stats.errors += 1
            event(log, WARNING, "database_error", worker=self.name, error=type(exc).__name__, detail=str(exc)[:200])
        self.completer.close()
        self._heartbeat.close()
        self.sandbox.close()
        connection.close()

    def run_one(self) -> bool:
        """Sweep if due, run one job to the end and commit its completion. False: nothing was
        claimed. (``run`` leaves completions to the completer's batches.)"""
        ran = self._step()
        self.completer.flush()
        return ran

    def _step(self) -> bool:
        """Sweep if due, then run the next prefetched job, or claim and run one."""
        if self._stop.is_set():
            return False
        now = self.clock.now()
        if self._next_sweep is None or now >= self._next_sweep:
            self.sweep(now)
        held = self._heartbeat.take()
        if held is None:
            if self.completer.pending:  # committed before claiming, so the claim sees them finished
                self.completer.flush()
                now = self.clock.now()
            wanted = self._prefetch_size()
            freeze_point("claim", wanted)
            claims = queue.claim_many(now=now, worker=self.name, lease=self.lease, limit=wanted)
            freeze_point("claimed", len(claims))
            if not claims:
                self.stats.empty_polls += 1
                return False
            for c in claims:
                self.stats.claimed += 1
                event(log, INFO, "claimed", job=c.job_id, kind=c.kind, epoch=c.epoch, attempt=c.attempt,
                      worker=self.name)
            self._heartbeat.hold(claims[1:])
            held = Held(claims[0])
        else:
            self.completer.flush_if_due()
        self._execute(held)
        return True

    def _prefetch_size(self) -> int:
        """As many claims as recent jobs say this worker finishes within the window (one at
        first): fast jobs share a transaction, and a slow one never waits behind others."""
        if self.prefetch == 1 or self._job_seconds is None:
            return 1
        return max(1, min(self.prefetch, int(self.prefetch_window / max(self._job_seconds, 1e-6))))

    def sweep(self, now: datetime | None = None) -> queue.Recovery:
        """Recover expired leases and passed deadlines, and log each job it moved."""
        now = now or self.clock.now()
        self._next_sweep = now + self.recover_every
        recovery = queue.recover(now=now)
        for to, ids in (("queued", recovery.requeued), ("unknown", recovery.unknown), ("dead", recovery.dead)):
            for job_id in ids:
                event(log, INFO, "recovered", job=job_id, to=to, worker=self.name)
        self.stats.recovered += recovery.total
        return recovery

    def _drained(self) -> bool:
        """Burst mode: nothing was claimable; one more sweep may requeue expired work."""
        return self.sweep().total == 0 or self._stop.is_set()

    def _open_listener(self) -> Listener | None:
        if self.burst or self.listen is False or connection.vendor != "postgresql":
            return None
        try:
            return Listener(self._wake, worker=self.name, cancelled=self._cancel_heard)
        except Exception as exc:  # noqa: BLE001  polling alone is correct, only slower
            event(log, WARNING, "listen_failed", worker=self.name, error=type(exc).__name__, detail=str(exc)[:200])
            return None

    def _holding(self) -> list[tuple[int, int]]:
        """The (job, epoch) of the running claim and the prefetched ones."""
        held = [h.claim for h in (self._starting, *self._heartbeat.held()) if h is not None]
        beat = self._heartbeat.current
        return [(c.job_id, c.epoch) for c in ([beat.claim] if beat is not None else []) + held]

    def _cancel_heard(self, job_id: int, epoch: int) -> None:
        """Someone asked to cancel a job: if this worker runs it, its handler is told now; if it
        holds it unstarted, it is never started (``_execute``)."""
        beat = self._heartbeat.current
        if beat is not None and (beat.claim.job_id, beat.claim.epoch) == (job_id, epoch):
            if beat.cancel():
                event(log, INFO, "cancel_heard", job=job_id, epoch=epoch, worker=self.name)
            return
        for held in (self._starting, *self._heartbeat.held()):
            if held is not None and (held.claim.job_id, held.claim.epoch) == (job_id, epoch):
                held.cancel_requested = True

    # -- one job ------------------------------------------------------------------------

    def _execute(self, held: Held) -> None:
        self._starting = held  # between the prefetch and the heartbeat: where a cancel finds it
        try:
            self._execute_held(held)
        finally:
            self._starting = None

    def _execute_held(self, held: Held) -> None:
        claim = held.claim
        started = time.monotonic()
        fields = _fields(claim)
        if held.lost:  # a prefetched claim whose renewal was rejected: a newer epoch owns it
            self._rejected(fields, started, "renew", held.lost)
            return
        spec = kinds.get(claim.kind)
        if spec is None:  # a worker from an older deploy: hand it back for one that knows it
            until = self.clock.now() + timedelta(seconds=30)
            self._finish(claim, fields, started, Deferred(until, "no handler for this kind in this worker"))
            return
        if self._giving_back:  # the grace period ended between the claim and here: do not start it
            self._give_back(claim, fields, started)
            return
        if held.cancel_requested:  # asked while it waited in the prefetch: never started
            self._acknowledge_cancel(claim, fields, started)
            return
        now = self.clock.now()
        if held.needs_renewal(now):
            self._renew_held(held, now)
            if held.lost:
                self._rejected(fields, started, "renew", held.lost)
                return
        # From here the attempt is spent: a claim only held costs nothing when its worker dies.
        if not held.started:
            self._record_start(held)
            if held.lost:  # recovered or superseded while it was held: never started
                self._rejected(fields, started, "start", held.lost)
                return
        ctx = JobContext(claim, clock=self.clock, stop=threading.Event())
        beat = Beat(claim, ctx, lease=spec.lease or self.lease, first_interval=self.lease / 3,
                    claimed_at=now, expires=held.expires)
        self._current = ctx
        if self._giving_back:  # the grace period ended as it started: stop at the first check
            ctx.stop.set()
        self._heartbeat.watch(beat)
        self._starting = None
        if held.cancel_requested:  # heard while it was being started
            beat.cancel()
        freeze_point("handler", 1 + len(self._heartbeat.held()))
        ran = time.monotonic()
        try:
            verdict = self._handle(spec, ctx)
        finally:
            self._heartbeat.release(beat)
            self._current = None
        took = time.monotonic() - ran
        self._job_seconds = took if self._job_seconds is None else 0.8 * self._job_seconds + 0.2 * took
        if beat.fenced:  # how much of its lease the handler left unused: below zero, work past it
            event(log, WARNING, "fenced_handler_ended", job=claim.job_id, epoch=claim.epoch,
                  lease_left_ms=round((beat.expires - self.clock.now()).total_seconds() * 1000))
            for other in self._heartbeat.drop_held():  # renewed with it, so just as unrenewed
                self._rejected(_fields(other.claim), started, "renew", "self-fenced with the running claim")
        if beat.lost:
            self._rejected(fields, started, "renew", beat.lost)
            return
        if isinstance(verdict, Cancelled) or (beat.cancel_requested and not isinstance(verdict, (Completed, Lost))):
            self._acknowledge_cancel(claim, fields, started)
            return
        if self._giving_back and isinstance(verdict, Failed):
            self._give_back(claim, fields, started)
            return
        self._finish(claim, fields, started, verdict)

    def _handle(self, spec: kinds.Kind, ctx: JobContext) -> Verdict:
        """Run the handler: in the sandbox for isolated kinds, else right here."""
        if spec.isolated and self.isolate:
            return self.sandbox.run(ctx.claim, spec, stop=ctx.stop, clock=self.clock, lease=self._heartbeat.current)
        return judge(spec.handler, ctx)

    def _finish(self, claim: queue.Claim, fields: dict[str, object], started: float, verdict: Verdict) -> None:
        now = self.clock.now()
        job, epoch = claim.job_id, claim.epoch
        if isinstance(verdict, Completed):
            summary = self._summarize(claim, verdict.result)
            finished = Finished(claim, verdict.result, summary, fields, started, time.monotonic())
            if not verdict.external:
                self.completer.submit(finished)
                return
            # An outside effect's record must not wait for a batch: commit it at once.
            self._completed(finished, queue.complete(job_id=job, epoch=epoch, result=verdict.result, now=now,
                                                     summary=summary))
            return
        elif isinstance(verdict, Failed):
            outcome, write = queue.fail(job_id=job, epoch=epoch, error=verdict.error, code=verdict.code,
                                        retryable=verdict.retryable, now=now), "fail"
            if outcome:
                self.stats.failed += 1
                event(log, INFO, "failed", **fields, to=outcome.state, error=verdict.logged,
                      retryable=verdict.retryable, duration_ms=_ms(started), worker=self.name)
        elif isinstance(verdict, Deferred):
            outcome, write = queue.defer(job_id=job, epoch=epoch, until=verdict.until, now=now,
                                         reason=verdict.reason), "defer"
            if outcome:
                self.stats.deferred += 1
                event(log, INFO, "deferred", **fields, to=outcome.state, until=verdict.until.isoformat(),
                      duration_ms=_ms(started), worker=self.name)
        elif isinstance(verdict, Lost):  # a fenced write inside the handler found the claim gone
            self._rejected(fields, started, "fenced", verdict.reason)
            return
        else:  # Cancelled is acknowledged before we get here
            return
        if not outcome:
            self._rejected(fields, started, write, outcome.reason)

    def _completed(self, finished: Finished, outcome: queue.Outcome) -> None:
        """A completion's commit (or its rejection): only now is it counted and logged."""
        if outcome:
            self.stats.completed += 1
            event(log, INFO, "completed", **finished.fields, duration_ms=_ms(finished.started), worker=self.name)
            self._after_completion(finished.claim)
        else:
            self._rejected(finished.fields, finished.started, "complete", outcome.reason)

    def _after_completion(self, claim: queue.Claim) -> None:
        """The kind's follow-up of a committed completion (``Kind.on_completed``)."""
        spec = kinds.get(claim.kind)
        if spec is None or spec.on_completed is None:
            return
        try:
            spec.on_completed(claim.job_id)
        except Exception as exc:  # noqa: BLE001  the job is done; its follow-up's failure is only logged
            event(log, WARNING, "on_completed_failed", job=claim.job_id, kind=claim.kind, error=type(exc).__name__)

    def _record_start(self, held: Held) -> None:
        """Record the start of the job about to run, before its handler runs (``queue.start``).

        Fast jobs (as many of the next held ones as recent handler times say finish within
        ``start_window``) are recorded with it in one write: a worker that dies among them has
        spent the attempts of those few it had not reached yet, for one write per run of fast
        jobs instead of one a job.
        """
        fast = 1 if self._job_seconds is None else int(self.start_window / max(self._job_seconds, 1e-6))
        group = [held, *self._heartbeat.held()[:max(fast, 1) - 1]]
        outcomes = queue.start_many(claims=[(h.claim.job_id, h.claim.epoch) for h in group], now=self.clock.now())
        for h, outcome in zip(group, outcomes, strict=True):
            if outcome:
                h.started = True
            elif not h.lost:
                h.lost = outcome.reason or "start refused"

    def _renew_held(self, held: Held, now: datetime) -> None:
        """Renew the claim about to start and the other held ones together, before it starts."""
        try:
            renew_together([held, *self._heartbeat.held()], now)
        except DatabaseError as exc:  # its beat tries again, and fences it in time if it must
            event(log, WARNING, "renewal_error", job=held.claim.job_id, epoch=held.claim.epoch,
                  error=type(exc).__name__, detail=str(exc)[:200])

    def _give_back_held(self, own_connection: bool = False) -> None:
        """Hand every unstarted prefetched job back at once, attempts not spent (stopping)."""
        dropped = self._heartbeat.drop_held()
        if not dropped:
            return
        started = time.monotonic()
        try:
            outcomes = queue.give_back_unstarted(claims=[h.claim for h in dropped], now=self.clock.now(),
                                                 reason="handed back unstarted: worker stopping")
        except DatabaseError as exc:
            if not own_connection:
                raise
            event(log, WARNING, "database_error", worker=self.name, error=type(exc).__name__, detail=str(exc)[:200])
            return
        finally:
            if own_connection:
                connection.close()
        for h, outcome in zip(dropped, outcomes, strict=True):
            if outcome:
                self.stats.given_back += 1
                event(log, INFO, "given_back", **_fields(h.claim), to=outcome.state, duration_ms=_ms(started),
                      worker=self.name)
            else:
                self._rejected(_fields(h.claim), started, "give_back", outcome.reason)

    def _acknowledge_cancel(self, claim: queue.Claim, fields: dict[str, object], started: float) -> None:
        """The handler stopped for a cancel request: record the job as cancelled (fenced)."""
        outcome = queue.acknowledge_cancel(job_id=claim.job_id, epoch=claim.epoch, now=self.clock.now())
        if not outcome:
            self._rejected(fields, started, "cancel", outcome.reason)
            return
        self.stats.cancelled += 1
        event(log, INFO, "cancelled", **fields, to=outcome.state, duration_ms=_ms(started), worker=self.name)

    def _summarize(self, claim: queue.Claim, result: dict[str, object]) -> kinds.Summary | None:
        """The kind's summary of its result; a summary that fails costs the summary, not the job."""
        spec = kinds.get(claim.kind)
        if spec is None or spec.summarize is None:
            return None
        try:
            return spec.summarize(result)
        except Exception as exc:  # noqa: BLE001  the result is saved either way
            event(log, WARNING, "summary_failed", job=claim.job_id, kind=claim.kind, error=type(exc).__name__)
            return None

    def _give_back(self, claim: queue.Claim, fields: dict[str, object], started: float) -> None:
        """Shutting down and the handler stopped unfinished: requeue it, unless it reached outside."""
        marker = Job.objects.filter(pk=claim.job_id, epoch=claim.epoch).values_list(
            "external_started_at", flat=True).first()
        if marker is not None:  # nobody knows whether the call happened: the lease decides (unknown)
            self.stats.left_to_lease += 1
            event(log, INFO, "left_to_lease", **fields, reason="external start recorded",
                  duration_ms=_ms(started), worker=self.name)
            return
        now = self.clock.now()
        outcome = queue.defer(job_id=claim.job_id, epoch=claim.epoch, until=now, now=now,
                              reason="worker shutting down")
        if not outcome:
            self._rejected(fields, started, "give_back", outcome.reason)
            return
        self.stats.given_back += 1
        event(log, INFO, "given_back", **fields, to=outcome.state, duration_ms=_ms(started), worker=self.name)

    def _rejected(self, fields: dict[str, object], started: float, write: str, reason: str) -> None:
        """A stale or expired claim: counted and logged, never retried (a newer epoch owns it)."""
        self.stats.rejected += 1
        event(log, WARNING, "stale_rejected", **fields, write=write, reason=reason,
              duration_ms=_ms(started), worker=self.name)


def _fields(claim: queue.Claim) -> dict[str, object]:
    return dict(job=claim.job_id, kind=claim.kind, epoch=claim.epoch, attempt=claim.attempt)


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
