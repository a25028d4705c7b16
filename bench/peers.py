"""The peers ``workerbench`` drains the same no-op jobs through: huey on SQLite, Procrastinate
on PostgreSQL (both from the ``bench`` extra), at the same process counts as ``runworkers``.

Each is run as its own documentation runs it: huey's consumer with process workers
(``huey_consumer -k process -w N``), Procrastinate's ``worker --one-shot`` in N processes.
Rates run from the first job taken to the last one finished, so start-up counts on neither
side: for Procrastinate from its own event rows; for huey (which keeps no per-task record of
a task that returns nothing) from its queue table, read every few milliseconds, from the
first task gone to the last (the last task's run itself is not counted, in huey's favour).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings

ROOT = str(Path(settings.BASE_DIR))
POLL = 0.002  # seconds between looks at huey's queue


def huey_available() -> bool:
    try:
        import huey  # noqa: F401
    except ImportError:
        return False
    return True


def procrastinate_available() -> bool:
    try:
        import procrastinate  # noqa: F401
    except ImportError:
        return False
    return True


def fill_huey(path: Path, count: int) -> None:
    """Enqueue ``count`` no-op tasks (without fsync: filling is not measured)."""
    from .huey_app import make

    h, task = make(str(path), fsync=False)
    for _ in range(count):
        task()
    # Closed here, not whenever the collector frees the huey: the file is copied next, and its
    # -wal and -shm go only when its last connection closes.
    h.storage.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def drain_huey(path: Path, processes: int, count: int, timeout: float = 600) -> dict[str, Any]:
    """Run huey's consumer on ``path`` until its queue is empty; the rate from the queue table."""
    env = dict(os.environ, HUEY_DB=str(path), PYTHONPATH=ROOT)
    consumer = subprocess.Popen(
        [sys.executable, "-m", "huey.bin.huey_consumer", "bench.huey_app.huey", "-k", "process", "-w",
         str(processes), "-q", "-d", "0.01"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    db = sqlite3.connect(path, timeout=30)
    first = last = 0.0
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            left = db.execute("SELECT COUNT(*) FROM task").fetchone()[0]
            now = time.time()
            if left < count and not first:
                first = now
            if left == 0:
                last = now
                break
            if consumer.poll() is not None:
                said = consumer.stderr.read() if consumer.stderr else ""
                raise RuntimeError(f"huey's consumer exited: {said[-2000:]}")
            time.sleep(POLL)
        else:
            raise RuntimeError("huey's consumer did not drain its queue in time")
    finally:
        db.close()
        consumer.send_signal(signal.SIGINT)
        try:
            consumer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            consumer.kill()
            consumer.wait()
    return {"jobs": count, "rate": count / max(last - first, POLL)}  # at least one look apart


def fill_procrastinate(dsn: str, count: int) -> None:
    from .procrastinate_app import fill

    fill(dsn, count)


def drain_procrastinate(dsn: str, processes: int, timeout: float = 600) -> dict[str, Any]:
    """``procrastinate worker --one-shot`` in ``processes`` processes; the rate from its events."""
    env = dict(os.environ, PROCRASTINATE_DSN=dsn, PYTHONPATH=ROOT)
    workers = [subprocess.Popen(
        [sys.executable, "-m", "procrastinate", "--app", "bench.procrastinate_app.app", "--log-level", "warning",
         "worker", "--one-shot", "--concurrency", "1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) for _ in range(processes)]
    for w in workers:
        _, err = w.communicate(timeout=timeout)
        if w.returncode != 0:
            raise RuntimeError(f"procrastinate's worker failed: {err[-2000:]}")
    import psycopg

    with psycopg.connect(dsn) as db:
        row = db.execute(
            "SELECT MIN(at) FILTER (WHERE type = 'started'), MAX(at) FILTER (WHERE type = 'succeeded'), "
            "COUNT(*) FILTER (WHERE type = 'succeeded') FROM procrastinate_events").fetchone()
    if row is None or not row[2]:
        raise RuntimeError("procrastinate's workers finished no job")
    first, last, done = row
    return {"jobs": done, "rate": done / (last - first).total_seconds()}
