"""Where queue operations get ``now`` from.

Every queue operation takes ``now`` as an argument; callers take it from a ``Clock``.
Production code uses ``queue_clock``, the database's clock: leases, deadlines, sweeps and
timelines are compared across hosts, so one host's wrong wall clock must not move them.
Tests and the lease lab pass a logical clock they advance by hand, so lease and crash
experiments run without sleeping.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from logging import WARNING, getLogger
from typing import Protocol

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections

from . import forks
from .logs import Repeats

log = getLogger("jobs.clock")
_failures = Repeats(log)  # one line per interval while the database does not answer


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


class SystemClock:
    """This process's wall clock: for tests that need a plain clock, never for queue time."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class LogicalClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        self._now += timedelta(seconds=seconds, **kwargs)
        return self._now


def read_database_time(alias: str = DEFAULT_DB_ALIAS) -> tuple[datetime, float]:
    """The database's time and the ``time.monotonic()`` it was true at (half-way through the
    round trip).

    PostgreSQL: ``clock_timestamp()``, on a connection of its own, opened and closed here, so
    no caller's transaction or thread-bound connection is touched. SQLite is one host: its
    clock is this host's (the query would ask the same kernel).
    """
    if connections[alias].vendor != "postgresql":
        return datetime.now(UTC), time.monotonic()
    conn = connections.create_connection(alias)
    try:
        conn.ensure_connection()
        with conn.connection.cursor() as cursor:
            sent = time.monotonic()
            cursor.execute("SELECT clock_timestamp()")
            (at,) = cursor.fetchone()
            back = time.monotonic()
    finally:
        conn.close()
    return at.astimezone(UTC), (sent + back) / 2


class ClockUnavailable(OperationalError):
    """No reading of the database's time yet: nothing may be written on this process's clock.

    An ``OperationalError`` because it is one in effect (the database did not answer): the
    worker backs off as from any outage, and the web answers ``503`` with ``Retry-After``.
    """


class DatabaseClock:
    """The database's time, read once a minute and carried forward on ``time.monotonic()``.

    ``now()`` is the last reading plus the monotonic time since, so once the process has a
    reading it never waits for the database: later readings are taken by a short thread while
    callers go on with the previous anchor. A failed reading keeps the last anchor (a database
    outage does not stop the clock) and is retried after ``retry`` seconds. Until the first
    reading succeeds there is no time to give: each ``now()`` tries to read (one caller at a
    time; those that waited on a reading that failed do not try again) and raises
    ``ClockUnavailable`` when it cannot. This host's wall clock never stands in: a host 15
    minutes fast would sweep every job due within 15 minutes to ``dead``. A reading whose
    round trip took longer than ``max_round_trip`` is not trusted over an anchor already
    held. The time returned never goes back by less than ``max_step_back`` (a new reading a
    few milliseconds behind is absorbed); a larger correction is made.

    Process-local deadlines (the worker's fence time, the heartbeat's schedule, a handler's
    budget) therefore run on the monotonic clock too: a wall clock stepped or skewed on this
    host changes nothing here.
    """

    def __init__(self, *, alias: str = DEFAULT_DB_ALIAS, every: float = 60.0, retry: float = 5.0,
                 max_round_trip: float = 1.0, max_step_back: float = 1.0,
                 read: Callable[[], tuple[datetime, float]] | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.every, self.retry = every, retry
        self.max_round_trip, self.max_step_back = max_round_trip, timedelta(seconds=max_step_back)
        self._read = read or (lambda: read_database_time(alias))
        self._monotonic = monotonic
        self._anchor: tuple[datetime, float] | None = None  # (database time, monotonic then)
        self._next = 0.0  # monotonic time of the next reading
        self._last: datetime | None = None
        self._lock = threading.Lock()  # the anchor and the last time returned
        self._reading = threading.Lock()  # held while a reading is taken (by one thread at a time)
        self.readings = self.failures = 0
        os.register_at_fork(after_in_child=functools.partial(_after_fork, weakref.ref(self)))

    @property
    def calibrated(self) -> bool:
        """Whether the process has a reading of the database's time (``now()`` will answer)."""
        return self._anchor is not None

    def now(self) -> datetime:
        if self._anchor is None:  # no time to give before a reading: wait for one, or fail
            failures = self.failures
            with self._reading:
                if self._anchor is None and self.failures == failures:  # nobody failed while we waited
                    self._take_reading()
        elif self._monotonic() >= self._next and self._reading.acquire(blocking=False):
            try:
                threading.Thread(target=self._read_then_release, name="queue-clock", daemon=True).start()
            except RuntimeError:  # no thread to be had (a sandbox's memory limit): the anchor will do
                self._next = self._monotonic() + self.retry
                self._reading.release()
        with self._lock:
            if self._anchor is None:
                raise ClockUnavailable("no reading of the database's time yet (the database did not answer)")
            at, mono = self._anchor
            t = at + timedelta(seconds=self._monotonic() - mono)
            if self._last is not None and self._last - self.max_step_back < t < self._last:
                t = self._last
            self._last = t
        return t

    def refresh(self) -> bool:
        """Take a reading now; False if the database did not answer (the anchor is kept)."""
        with self._reading:
            return self._take_reading()

    def _read_then_release(self) -> None:
        try:
            with forks.database_work():  # its own thread: never inside the database at a fork
                self._take_reading()
        finally:
            self._reading.release()

    def _take_reading(self) -> bool:
        started = self._monotonic()
        try:
            at, mono = self._read()
        except Exception as exc:  # noqa: BLE001  any failure: keep the anchor, try again soon
            with self._lock:
                self._next = self._monotonic() + self.retry
                self.failures += 1
            _failures.event(WARNING, "clock_reading_failed", error=type(exc).__name__, detail=str(exc)[:200])
            return False
        _failures.settle()
        took = self._monotonic() - started
        with self._lock:
            if self._anchor is None or took <= self.max_round_trip:
                self._anchor = (at, mono)
                self._next = self._monotonic() + self.every
            else:
                self._next = self._monotonic() + self.retry
            self.readings += 1
        return True

    def _after_fork(self) -> None:
        """A forked child keeps the anchor (the monotonic clock is the host's) but not the lock
        or the reading thread, which stayed in the parent."""
        self._lock = threading.Lock()
        self._reading = threading.Lock()


def statement_time(clock: Clock, now: datetime) -> datetime | None:
    """The ``now`` a claim or sweep binds: None when ``clock`` is the database's, so the
    statement reads the server's own time as it runs (a process paused between reading its
    clock and sending the write cannot date it before the pause); ``now`` itself for another
    clock (a test's logical one)."""
    return None if isinstance(clock, DatabaseClock) else now


def _after_fork(ref: weakref.ref[DatabaseClock]) -> None:
    clock = ref()
    if clock is not None:
        clock._after_fork()


# Cancelled-at, accepted-at, lease ends, deadlines, sweeps and events: one clock for every host.
queue_clock = DatabaseClock()
system_clock = SystemClock()
