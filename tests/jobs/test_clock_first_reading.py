"""A worker that cannot read the database's clock at first writes nothing on its own wrong clock.

PostgreSQL, real processes: a healthy worker runs a long job and a backlog of short ones;
beside it, a worker 15 minutes fast and one two leases slow (libfaketime, as in
tests/jobs/test_clock_skew.py) reach the database through a loopback proxy that starts
listening only ``UNREACHABLE`` seconds after they start (the issue's 10 s by default;
``CLOCK_UNREACHABLE_SECONDS`` shortens it). Their first clock readings fail; they must wait,
not fall back to the host's wall clock. Measured by a trigger on the job table that compares
each write with the server's own ``clock_timestamp()``: no job is sent to ``dead`` or
``unknown`` for a deadline still ahead, no claim is written already expired, and no lease of
the healthy worker is recovered. Both skewed workers claim jobs once they reach the database,
and each logs its wait once per interval, not at every poll.

Then a worker frozen (SIGSTOP) between reading its clock and sending a claim, on either
store: its claims are dated when they are written, none already expired or handed back.

Reproduce with ``DATABASE_URL=postgresql://... bin/test tests/jobs/test_clock_first_reading.py -s``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection

from jobs import queue
from jobs.clock import queue_clock
from jobs.models import Job, JobEvent
from tests.conftest import database_url, wait_for
from tests.jobs.test_clock_skew import FAKETIME, skewed
from tests.workers import Workers

pytestmark = [pytest.mark.slow]

LEASE = 1.5  # seconds; "two leases slow" is 3 s
UNREACHABLE = float(os.environ.get("CLOCK_UNREACHABLE_SECONDS", "10"))
JOBS = 60
DEADLINE_S = 600  # ten minutes: a worker 15 minutes fast sees every deadline passed

# Every write the test must never see, judged by the server's clock at the moment of the write.
WATCH = """
CREATE TABLE clock_violation (what text NOT NULL, job_id bigint NOT NULL, at timestamptz DEFAULT clock_timestamp());
CREATE FUNCTION clock_violation_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state = 'queued' AND NEW.state = 'leased' AND NEW.lease_expires_at <= clock_timestamp() THEN
    INSERT INTO clock_violation (what, job_id) VALUES ('claim written already expired', NEW.id);
  END IF;
  IF NEW.state IN ('dead', 'unknown') AND OLD.state <> NEW.state AND NEW.failure_code = 'deadline_passed'
     AND NEW.deadline > clock_timestamp() THEN
    INSERT INTO clock_violation (what, job_id) VALUES ('ended before its deadline', NEW.id);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER clock_violation_watch BEFORE UPDATE ON jobs_job FOR EACH ROW EXECUTE FUNCTION clock_violation_check();
"""
UNWATCH = """
DROP TRIGGER IF EXISTS clock_violation_watch ON jobs_job;
DROP FUNCTION IF EXISTS clock_violation_check();
DROP TABLE IF EXISTS clock_violation;
"""


class LateProxy:
    """A TCP proxy on loopback to the test's PostgreSQL that accepts connections only from
    ``after`` seconds on: before then its port refuses them, as an unreachable database does."""

    def __init__(self, target: tuple[str, int], after: float) -> None:
        self.target = target
        with socket.socket() as probe:  # a free port, known before anything listens on it
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(after,), daemon=True)
        self._thread.start()

    def _serve(self, after: float) -> None:
        if self._closed.wait(after):
            return
        server = socket.create_server(("127.0.0.1", self.port))
        server.settimeout(0.2)
        self._sockets.append(server)
        self.listening.set()
        while not self._closed.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def url(self) -> str:
        return re.sub(r"@[^/]+/", f"@127.0.0.1:{self.port}/", database_url())

    def close(self) -> None:
        self._closed.set()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()
        self._thread.join(timeout=5)


@pytest.fixture
def watched(transactional_db):
    """The trigger on PostgreSQL (SQLite: nothing to install; ``violations`` finds none)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(UNWATCH + WATCH)
    yield
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(UNWATCH)


@pytest.fixture
def postgresql(watched):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serves one host: its clock is the host's, read in the claim's own transaction")


@pytest.fixture
def libfaketime():
    """Skip, saying why, without libfaketime; fail instead under REQUIRE_FAKETIME=1 (CI), as
    tests/jobs/test_clock_skew.py does."""
    if not FAKETIME.exists():
        why = f"needs libfaketime at {FAKETIME} (Debian package faketime)"
        if os.environ.get("REQUIRE_FAKETIME") == "1":
            pytest.fail(f"REQUIRE_FAKETIME=1 but it {why}", pytrace=False)
        pytest.skip(why)


def violations() -> list[tuple[str, int]]:
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT what, job_id FROM clock_violation ORDER BY at")
        return cursor.fetchall()


def start(tmp_path: Path, label: str, started: list[Workers], **env: str) -> tuple[Workers, str]:
    w = Workers(tmp_path / f"{label}.log", "--processes", "1", "--lease", str(LEASE), "--poll-interval", "0.2",
                "--grace", "1", JOBS_LEASE_SECONDS=str(LEASE), JOBS_DIAGNOSTIC_KINDS="1", **env)
    started.append(w)
    name = wait_for(lambda: (m := re.search(r"worker_started worker=(\S+)", w.text())) and m.group(1), timeout=30)
    return w, name


def accept(alice, key: str, seconds: float) -> int:
    return queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.sleep",
                        payload={"seconds": seconds}, operation_key=key, now=queue_clock.now(), offered_only=False,
                        deadline=timedelta(seconds=DEADLINE_S)).job.pk


def claims_by(name: str) -> int:
    return JobEvent.objects.filter(actor=f"worker:{name}", to_state="leased", reason="claimed").count()


def healthy_leases_recovered(healthy: str) -> list[int]:
    """Jobs taken from the healthy worker by a sweep: a recovery event whose job's claim before
    it was the healthy worker's."""
    taken, holder = [], {}
    for e in JobEvent.objects.order_by("id").values("job_id", "to_state", "from_state", "actor", "reason"):
        if e["to_state"] == "leased" and e["reason"] == "claimed":
            holder[e["job_id"]] = e["actor"]
        elif (e["actor"] == "recovery" and e["from_state"] == "leased"
              and holder.get(e["job_id"]) == f"worker:{healthy}"):
            taken.append(e["job_id"])
    return taken


def test_a_worker_whose_first_clock_reading_fails_waits_for_it_instead_of_using_its_own_wall_clock(
        libfaketime, postgresql, tmp_path, alice):
    started: list[Workers] = []
    proxy: LateProxy | None = None
    try:
        _, healthy = start(tmp_path, "healthy", started)
        long_job = accept(alice, "long", UNREACHABLE + 4)
        wait_for(lambda: Job.objects.filter(pk=long_job, state="leased").exists(), timeout=15)
        ids = [accept(alice, f"short-{n}", 0.3) for n in range(JOBS)]
        skewed_workers = {}
        proxy = LateProxy((connection.settings_dict.get("HOST") or "127.0.0.1",
                           int(connection.settings_dict.get("PORT") or 5432)), after=UNREACHABLE)
        for offset in ("+15m", f"-{2 * LEASE:g}"):
            _, skewed_workers[offset] = start(tmp_path, f"worker{offset}", started, DATABASE_URL=proxy.url(),
                                              **skewed(offset))
        assert not proxy.listening.is_set(), "the workers started after the database became reachable"
        proxy.listening.wait(UNREACHABLE + 5)
        # Once they reach the database both skewed workers claim (each swept first); bounded.
        with contextlib.suppress(AssertionError):
            wait_for(lambda: all(claims_by(n) > 0 for n in skewed_workers.values()), timeout=20)
        time.sleep(LEASE)  # a few more sweeps and claims of theirs, beside the healthy worker's
        for w in started:
            w.signal(signal.SIGTERM)
        for w in started:
            with contextlib.suppress(Exception):
                w.wait(timeout=15)
        found = violations()
        states = Counter(Job.objects.filter(pk__in=[long_job, *ids]).values_list("state", flat=True))
        taken = healthy_leases_recovered(healthy)
        figures = {"unreachable_s": UNREACHABLE, "jobs": JOBS + 1, **states,
                   "violations": Counter(what for what, _ in found),
                   "healthy_leases_recovered": len(taken),
                   "claims": {offset: claims_by(n) for offset, n in skewed_workers.items()} | {
                       "healthy": claims_by(healthy)}}
        print("\nfirst clock reading late: " + json.dumps(figures, default=str))
        logs = {offset: next(w for w in started if w.log.name == f"worker{offset}.log").text()
                for offset in skewed_workers}
    finally:
        for w in started:
            w.kill_all()
        if proxy is not None:
            proxy.close()

    assert found == [], figures
    assert states.get("dead", 0) == 0 and states.get("unknown", 0) == 0, figures
    assert taken == [], figures
    assert all(n > 0 for n in figures["claims"].values()), figures  # every worker works once it can
    for offset, text in logs.items():
        # The window happened: each waited for the database's clock, and said so once per
        # interval (jobs.logs.Repeats: the first, then at most one line per 10 s, and the count
        # when it ended), not at every poll.
        # A record may run over lines (the driver's message): split at each record's date.
        records = re.split(r"\n(?=\d{4}-\d\d-\d\d )", text)
        errors = [record for record in records if "event=database_error" in record]
        # (Whichever failed first: the clock's reading, or a statement of the loop's own.)
        assert any("error=ClockUnavailable" in record or "error=OperationalError" in record for record in errors), (
            offset, text[-2000:])
        assert any("settled=True" in record for record in errors), (offset, text[-2000:])
        assert len(errors) <= 2 + UNREACHABLE // 10 + 1, (offset, errors)


FREEZE = 6.0  # seconds stopped between reading the clock and sending the claim: three leases of the frozen worker


def test_a_worker_frozen_between_reading_its_clock_and_claiming_dates_its_claims_after_it_resumes(
        watched, tmp_path, alice):
    """SIGSTOP at the ``claim`` point (``jobs.worker.testing``): the worker has read its clock
    and is about to send a claim of several jobs. When it resumes, its claims must carry the
    time they were written, not the time read before the pause: none dated while it was
    stopped, none written already expired, none handed back unstarted; every job completes on
    its first attempt."""
    from jobs.clock import system_clock
    from tests.jobs.test_frozen_worker import Frozen

    ids = [queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                        operation_key=f"noop-{n}", now=system_clock.now(), offered_only=False).job.pk
           for n in range(16)]
    worker = Frozen(tmp_path / "frozen.log", "claim")
    try:
        wait_for(worker.stopped, timeout=30)
        stopped_at = system_clock.now()  # this host's clock: the database's (same host, NTP-set)
        time.sleep(FREEZE)
        resumed_at = system_clock.now()
        worker.signal(signal.SIGCONT)
        wait_for(lambda: Job.objects.filter(pk__in=ids, state="completed").count() == len(ids), timeout=30)
    finally:
        worker.kill()
    claims = list(JobEvent.objects.filter(job_id__in=ids, to_state="leased", reason="claimed")
                  .values_list("job_id", "at"))
    during = [(job_id, at) for job_id, at in claims if stopped_at <= at < resumed_at]
    after = [at for _, at in claims if at >= resumed_at]
    others = list(JobEvent.objects.filter(job_id__in=ids).exclude(reason__in=["accepted", "claimed", "completed"])
                  .values_list("job_id", "to_state", "reason"))
    print(f"\nfrozen {FREEZE:.0f} s at the claim point: {len(claims)} claims, {len(after)} dated after the resume, "
          f"{len(during)} dated while stopped; other moves {others}")
    assert "point=claim" in worker.log(), worker.log()[-3000:]
    assert len(after) >= 2, (claims, worker.log()[-3000:])  # the batch it was about to send when stopped
    assert during == [], during
    assert violations() == []
    assert others == [], others  # nothing rejected, recovered or handed back
    assert set(Job.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {1}
