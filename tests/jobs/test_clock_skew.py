"""One host with a wrong wall clock cannot hurt anyone's jobs: the queue runs on the database's clock.

Real processes against PostgreSQL, one of them with its wall clock moved by libfaketime
(Debian's ``faketime``; its monotonic clock is left alone, as on a real host whose time is
wrong): a worker 15 minutes fast and 15 minutes slow, the accepting web process (the JSON
API, in a process of its own) 15 minutes fast and slow, and a worker two leases fast and
two leases slow beside a healthy one. In every case no job dies, no lease is taken from a
live worker (no recovery, no rejected renewal or completion), every accepted job is claimed
and completed (the skewed worker claims some of them: none is hidden from it), and each
job's timeline is in order.

Reproduce with ``DATABASE_URL=postgresql://... bin/test tests/jobs/test_clock_skew.py -s``;
``-s`` prints the figures of each case.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import pytest
from django.db import connection

from accounts import tokens
from jobs import queue
from jobs.clock import queue_clock
from jobs.models import Job, JobEvent
from tests.conftest import PYTHON, ROOT, child_env, wait_for
from tests.workers import Workers

FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")
LEASE = 1.5  # seconds; "two leases" of skew is 3 s
SETTLE = 15.0  # seconds a case may take to finish its jobs

pytestmark = [pytest.mark.slow]


@pytest.fixture(autouse=True)
def _libfaketime():
    """Skip, saying why, without libfaketime; fail instead under REQUIRE_FAKETIME=1 (CI)."""
    if not FAKETIME.exists():
        why = f"needs libfaketime at {FAKETIME} (Debian package faketime)"
        if os.environ.get("REQUIRE_FAKETIME") == "1":
            pytest.fail(f"REQUIRE_FAKETIME=1 but it {why}", pytrace=False)
        pytest.skip(why)


def skewed(offset: str) -> dict[str, str]:
    """The environment of a process whose wall clock is ``offset`` off (e.g. "+15m", "-3s")."""
    return {"LD_PRELOAD": str(FAKETIME), "FAKETIME": offset, "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


# The JSON API in a process of its own: the real view, token check and acceptance.
WEB = """
import json, sys, django
django.setup()
from django.test import Client
token, case, count, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
client = Client(headers={"Authorization": "Bearer " + token})
for n in range(count):
    r = client.post("/jobs", data=json.dumps({"kind": "diagnostic.sleep", "payload": {"seconds": seconds}}),
                    content_type="application/json", headers={"Idempotency-Key": f"{case}-{n}"})
    print(r.status_code, flush=True)
"""


def test_faketime_moves_the_wall_clock_of_a_child_and_not_its_monotonic_clock():
    probe = "import time; print(time.time(), time.monotonic())"
    before = time.time(), time.monotonic()
    out = subprocess.run([PYTHON, "-c", probe], env={**child_env(), **skewed("+15m")}, capture_output=True,
                         text=True, check=True).stdout
    wall, mono = map(float, out.split())
    assert 890 < wall - before[0] < 910
    assert 0 <= mono - before[1] < 10


@pytest.fixture
def postgresql(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serves one host, whose processes share its wall clock: no skew between hosts")


class Started:
    """``runworkers`` processes, each killed when the test ends whatever happened."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.all: list[Workers] = []

    def start(self, label: str, processes: int, **env: str) -> tuple[Workers, set[str]]:
        since = server_now()
        # One claim at a time: a busy machine's healthy workers claiming the jobs in batches would
        # leave the skewed one none to show what it makes of them.
        w = Workers(self.tmp_path / f"{label}.log", "--processes", str(processes), "--lease", str(LEASE),
                    "--poll-interval", "0.2", "--grace", "1", "--prefetch", "1", JOBS_LEASE_SECONDS=str(LEASE),
                    **env)
        self.all.append(w)
        names = wait_for(lambda: (found := set(re.findall(r"worker_started worker=(\S+)", w.text())))
                         and len(found) == processes and found, timeout=30)
        # Started is not yet listening: on a busy machine the healthy workers would finish a case's
        # jobs before this one first asks for work. Each of its processes is ready once the
        # server holds its LISTEN session, opened since it was started.
        wait_for(lambda: listening_since(since) == processes, timeout=30)
        return w, names

    def stop(self, w: Workers) -> None:
        w.signal(signal.SIGTERM)
        try:
            w.wait(timeout=15)
        finally:
            w.kill_all()


def server_now():
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def listening_since(since) -> int:
    """Worker sessions LISTENing for new jobs on this database, opened since ``since``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND query = 'LISTEN jobs_accepted' AND state = 'idle' AND backend_start >= %s", [since])
        return cursor.fetchone()[0]


def settle(ids: list[int]) -> float:
    """Wait (bounded) until every job is finished; the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < SETTLE:
        if not Job.objects.filter(pk__in=ids, state__in=["queued", "leased"]).exists():
            break
        time.sleep(0.05)
    return time.monotonic() - started


def figures(case: str, ids: list[int], skewed_workers: set[str], healthy: set[str]) -> dict:
    """What happened to the case's jobs, from the queue's own record."""
    states = Counter(Job.objects.filter(pk__in=ids).values_list("state", flat=True))
    by_job: dict[int, list[dict]] = defaultdict(list)
    for e in JobEvent.objects.filter(job_id__in=ids).order_by("id").values("job_id", "to_state", "actor", "reason",
                                                                          "at"):
        by_job[e["job_id"]].append(e)
    events = [e for evs in by_job.values() for e in evs]
    claims = Counter(e["actor"].removeprefix("worker:") for e in events if e["to_state"] == "leased"
                     and e["reason"] == "claimed")
    out_of_order = max((max(0.0, (a["at"] - b["at"]).total_seconds())
                        for evs in by_job.values() for a, b in pairwise(evs)), default=0.0)
    return {
        "case": case, "jobs": len(ids), **{s: states.get(s, 0) for s in ("completed", "dead", "unknown", "queued",
                                                                         "leased")},
        "recoveries": sum(e["actor"] == "recovery" for e in events),
        "rejections": sum("rejected" in e["reason"] for e in events),
        "claimed_by_skewed": sum(n for w, n in claims.items() if w in skewed_workers),
        "claimed_by_healthy": sum(n for w, n in claims.items() if w in healthy),
        "timeline_out_of_order_s": round(out_of_order, 3),
    }


def accept_here(case: str, count: int, seconds: float, alice) -> list[int]:
    return [queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.sleep",
                         payload={"seconds": seconds}, operation_key=f"{case}-{n}", now=queue_clock.now(),
                         offered_only=False).job.pk for n in range(count)]


def accept_through_web(case: str, offset: str, count: int, seconds: float, alice) -> list[int]:
    token = tokens.issue(alice)
    out = subprocess.run([PYTHON, "-c", WEB, token, case, str(count), str(seconds)], cwd=ROOT,
                         env={**child_env(JOBS_DIAGNOSTIC_KINDS="1"), **skewed(offset)},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["202"] * count, out.stdout
    return list(Job.objects.filter(operation_key__startswith=f"{case}-").values_list("pk", flat=True))


def test_a_skewed_process_cannot_kill_expire_or_hide_anyones_jobs(postgresql, tmp_path, alice):
    started = Started(tmp_path)
    results: list[dict] = []
    try:
        _, healthy = started.start("healthy", 2)

        # A worker 15 minutes fast, then one 15 minutes slow, beside the healthy one.
        for offset in ("+15m", "-15m"):
            w, names = started.start(f"worker{offset}", 1, **skewed(offset))
            ids = accept_here(f"worker{offset}", 12, 0.2, alice)
            settle(ids)
            started.stop(w)
            results.append(figures(f"worker {offset}", ids, names, healthy))

        # The accepting web process 15 minutes fast, then slow; the healthy workers run the jobs.
        for offset in ("+15m", "-15m"):
            ids = accept_through_web(f"web{offset}", offset, 6, 0.05, alice)
            settle(ids)
            results.append(figures(f"web {offset}", ids, set(), healthy))

        # A worker two leases fast, then two leases slow, beside the healthy one: jobs longer
        # than a lease, so leases are renewed while the skewed worker sweeps.
        for offset in (f"+{2 * LEASE:g}", f"-{2 * LEASE:g}"):
            w, names = started.start(f"worker{offset}s", 1, **skewed(offset))
            ids = accept_here(f"lease{offset}", 6, 2 * LEASE, alice)
            settle(ids)
            started.stop(w)
            results.append(figures(f"worker {offset} s (2 leases)", ids, names, healthy))
    finally:
        for w in started.all:
            w.kill_all()

    print(f"\nclock skew on postgresql (lease {LEASE:.1f} s):")
    for r in results:
        print("  " + json.dumps(r))
    for r in results:
        assert r["completed"] == r["jobs"], r  # nothing dead, nothing hidden, nothing stuck
        assert r["recoveries"] == 0 and r["rejections"] == 0, r  # no live lease taken away
        assert r["timeline_out_of_order_s"] < 0.05, r
        if r["case"].startswith("worker"):
            assert r["claimed_by_skewed"] > 0, r  # the skewed worker sees the new jobs too
