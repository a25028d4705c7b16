"""The queue's clock: the database's time carried forward on the monotonic clock.

The skew of real processes is tests/jobs/test_clock_skew.py; here the clock's own rules,
with its sources replaced in-process (the monotonic clock, the wall clock, the reading).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import OperationalError, connection

from jobs.clock import ClockUnavailable, DatabaseClock, read_database_time
from tests.conftest import wait_for

DB_TIME = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class Sources:
    """A database whose time the test sets, a monotonic clock and a wall clock it moves."""

    def __init__(self) -> None:
        self.mono = 1000.0
        self.wall = DB_TIME + timedelta(minutes=15)  # this host's wall clock is 15 minutes fast
        self.db_offset = timedelta(0)  # the database's time minus DB_TIME at mono 1000
        self.down = False
        self.reads = 0

    def read(self) -> tuple[datetime, float]:
        self.reads += 1
        if self.down:
            raise OperationalError("connection refused")
        return DB_TIME + self.db_offset + timedelta(seconds=self.mono - 1000.0), self.mono

    def clock(self, **kwargs) -> DatabaseClock:
        return DatabaseClock(read=self.read, monotonic=lambda: self.mono, **kwargs)


def settled(clock: DatabaseClock, readings: int = 0, failures: int = 0) -> None:
    """Wait for the background reading to be over."""
    wait_for(lambda: (clock.readings, clock.failures) == (readings, failures) and not clock._reading.locked(),
             timeout=5)


def test_the_time_is_the_databases_whatever_the_wall_clock_says():
    s = Sources()
    clock = s.clock()
    assert clock.now() == DB_TIME
    s.mono += 2.5
    s.wall -= timedelta(hours=3)  # the wall clock stepped back: nothing changes
    assert clock.now() == DB_TIME + timedelta(seconds=2.5)
    assert s.reads == 1  # one reading, then the monotonic clock


def test_it_reads_the_database_again_every_minute_without_making_callers_wait():
    s = Sources()
    clock = s.clock(every=60)
    clock.now()
    s.mono += 59
    clock.now()
    assert s.reads == 1
    s.db_offset = timedelta(seconds=0.2)  # the monotonic clock ran 0.2 s slow over the minute
    s.mono += 2
    clock.now()  # starts the reading in the background
    settled(clock, readings=2)
    assert clock.now() == DB_TIME + timedelta(seconds=61.2)


def test_a_database_outage_keeps_the_last_anchor_and_retries():
    s = Sources()
    clock = s.clock(every=60, retry=5)
    clock.now()
    s.down = True
    s.mono += 61
    clock.now()
    settled(clock, readings=1, failures=1)
    s.mono += 1
    assert clock.now() == DB_TIME + timedelta(seconds=62)  # still the database's time, carried forward
    s.mono += 3
    clock.now()
    assert s.reads == 2  # not again before the retry interval
    s.down = False
    s.mono += 3
    clock.now()
    settled(clock, readings=2, failures=1)
    assert clock.now() == DB_TIME + timedelta(seconds=68)


def test_with_the_database_down_at_first_there_is_no_time_until_a_reading():
    s = Sources()
    s.down = True
    clock = s.clock(retry=5)
    for _ in range(3):  # each call tries again: the caller waits for the database, never uses the wall clock
        with pytest.raises(ClockUnavailable):
            clock.now()
    assert s.reads == 3 and not clock.calibrated
    s.down = False
    s.mono += 0.2  # well within ``retry``: the first reading is not put off
    assert clock.now() == DB_TIME + timedelta(seconds=0.2)  # the database's time, 15 minutes behind the wall
    assert clock.calibrated


def test_the_clock_being_unavailable_is_a_database_outage_to_callers():
    assert issubclass(ClockUnavailable, OperationalError)  # the worker backs off, the web answers 503


def test_callers_that_waited_on_a_failed_first_reading_do_not_each_read_again():
    import threading

    s = Sources()
    s.down = True
    entered, go = threading.Event(), threading.Event()
    slow = s.read

    def read_slowly():
        entered.set()
        go.wait(5)
        return slow()

    clock = s.clock()
    clock._read = read_slowly
    errors = []

    def call():
        try:
            clock.now()
        except ClockUnavailable as exc:
            errors.append(exc)

    first = threading.Thread(target=call)
    first.start()
    entered.wait(5)
    others = [threading.Thread(target=call) for _ in range(4)]
    for t in others:
        t.start()
    wait_for(clock._reading.locked, timeout=5)
    go.set()
    for t in (first, *others):
        t.join(5)
    assert len(errors) == 5
    assert s.reads <= 2  # the four that waited gave up with the first, at most one raced in after it


def test_a_reading_slightly_behind_does_not_move_time_back():
    s = Sources()
    clock = s.clock(every=60)
    clock.now()
    s.mono += 60
    s.db_offset = timedelta(milliseconds=-3)
    before = clock.now()  # starts a reading that is 3 ms behind the carried time
    settled(clock, readings=2)
    assert clock.now() >= before


def test_a_slow_reading_does_not_replace_a_good_anchor():
    s = Sources()
    clock = s.clock(every=60, retry=5, max_round_trip=1.0)
    clock.now()
    slow = s.read

    def read_slowly():
        s.mono += 2  # a 2 s round trip
        return slow()

    clock._read = read_slowly
    s.db_offset = timedelta(seconds=1)
    s.mono += 60
    clock.refresh()
    assert clock.now() == DB_TIME + timedelta(seconds=62)  # the old anchor, carried forward


def test_the_reading_is_the_database_time(db):
    at, _mono = read_database_time()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT clock_timestamp()")
            (later,) = cursor.fetchone()
        assert timedelta(0) <= later - at < timedelta(seconds=5)
    clock = DatabaseClock()
    assert abs(clock.now() - datetime.now(UTC)) < timedelta(seconds=1)  # this host's NTP-set clock


@pytest.mark.parametrize("name", ["jobs.worker.loop", "jobs.worker.heartbeat", "jobs.worker.completer",
                                  "jobs.worker.endings", "jobs.worker.sandbox", "web.edge", "web.views",
                                  "accounts.tokens", "jobs.context", "jobs.tasks_backend"])
def test_production_code_takes_queue_time_from_the_database_clock(name):
    import importlib

    module = importlib.import_module(name)
    assert not hasattr(module, "system_clock"), f"{name} still uses the process's wall clock"


def test_a_forked_child_keeps_the_anchor_even_with_a_reading_in_flight():
    import os

    s = Sources()
    clock = s.clock()
    clock.now()
    clock._reading.acquire()  # a reading thread is mid-way as the worker forks its sandbox
    try:
        pid = os.fork()
        if pid == 0:  # the child: the reading thread stayed behind, its lock must not
            s.mono += 1
            ok = clock.now() == DB_TIME + timedelta(seconds=1) and not clock._reading.locked()
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        clock._reading.release()
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_worker_without_a_clock_reading_writes_nothing_until_one_comes(transactional_db, alice):
    """A real worker loop on a database clock whose readings fail: it backs off and writes
    nothing (no sweep, claim or event), then claims and completes once a reading succeeds."""
    import threading

    from jobs import queue
    from jobs.clock import system_clock
    from jobs.models import Job, JobEvent
    from jobs.worker import Worker

    ids = [queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                        operation_key=f"k{n}", now=system_clock.now(), offered_only=False).job.pk for n in range(3)]
    down = threading.Event()
    down.set()

    def read():
        if down.is_set():
            raise OperationalError("connection refused")
        return read_database_time()

    clock = DatabaseClock(read=read)
    w = Worker(name="late", clock=clock, listen=False, isolate=False, poll_interval=0.05)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        wait_for(lambda: clock.failures >= 5 and w.stats.errors >= 5, timeout=10)
        assert set(JobEvent.objects.filter(job_id__in=ids).values_list("reason", flat=True)) == {"accepted"}
        assert set(Job.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"queued"}
        down.clear()
        wait_for(lambda: Job.objects.filter(pk__in=ids, state="completed").count() == 3, timeout=10)
    finally:
        w.stop(grace=0)
        t.join(timeout=10)
