"""Tasks through Django's Tasks framework: the queue's backend against django-tasks-db."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .drains import as_datetime, run_workers, select_rows
from .queuebench import MANAGE

# --- Tasks through the framework: the queue's backend against django-tasks-db ----------------
#
# The same no-op @task is enqueued N times through the standard API (task.enqueue()) under
# each backend, then drained by one worker process: ``runworkers --burst`` for the queue's
# backend, django-tasks-db's ``db_worker --batch`` for its own. Both run on the project's
# settings (store, pragmas); only CONN_MAX_AGE varies: 0 is Django's default, which is how
# django-tasks-db ships, and 60 is the project's. Rates run from the first claim to the last
# completion, read from each backend's own rows, so process start-up counts on neither side.

TASKS_DB_SETTINGS = "bench.tasks_db_settings"
TASK_ROUNDS = 2
TASKS_DB_TABLE = "django_tasks_database_dbtaskresult"  # the app label is django_tasks_database
ENQUEUE = """
import django, sys
django.setup()
from django.db import transaction
from bench.tasks import noop
from ops.throwaway import create_tables
create_tables()
count = int(sys.argv[1])
for start in range(0, count, 500):
    with transaction.atomic():
        for _ in range(min(500, count - start)):
            noop.enqueue()
"""


def _env(url: str, settings_module: str, conn_max_age: int) -> dict[str, str]:
    return dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE=settings_module,
                CONN_MAX_AGE=str(conn_max_age), JOBS_LOG_LEVEL="WARNING")


def enqueue_tasks(url: str, count: int, settings_module: str) -> None:
    """Migrate the database ``url`` names and enqueue ``count`` no-op tasks through the API."""
    done = subprocess.run([sys.executable, "-c", ENQUEUE, str(count)], cwd=Path(MANAGE).parent,
                          env=_env(url, settings_module, 0), capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"enqueueing the tasks failed: {done.stderr[-2000:]}")


def drain_queue_backend(url: str, conn_max_age: int) -> dict[str, Any]:
    return run_workers(url, 1, env={"CONN_MAX_AGE": str(conn_max_age)})


def drain_tasks_db(url: str, conn_max_age: int) -> dict[str, Any]:
    """django-tasks-db's own worker, as its documentation runs it, until no task is left."""
    done = subprocess.run(
        [sys.executable, MANAGE, "db_worker", "--batch", "--no-startup-delay", "--verbosity", "0"],
        env=_env(url, TASKS_DB_SETTINGS, conn_max_age), capture_output=True, text=True, timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"db_worker failed: {done.stderr[-2000:]}")
    sql = (f"SELECT MIN(started_at), MAX(finished_at), SUM(CASE WHEN status = 'SUCCESSFUL' THEN 1 ELSE 0 END), "
           f"COUNT(*) FROM {TASKS_DB_TABLE}")
    ((first, last, done_count, total),) = select_rows(url, sql)
    if done_count != total:
        raise RuntimeError(f"db_worker finished {done_count} of {total} tasks")
    return {"jobs": done_count, "rate": done_count / (as_datetime(last) - as_datetime(first)).total_seconds()}


def tasks_available() -> bool:
    try:
        import django_tasks_db  # noqa: F401
    except ImportError:
        return False
    return True


def run_tasks(*, tasks: int, store: str, fresh: Callable[[str], str], out: Callable[[str], None],
              rounds: int = TASK_ROUNDS) -> dict[str, Any]:
    """Both backends at both CONN_MAX_AGE values, best of ``rounds``; ``fresh(which)`` gives a
    new database filled like that backend's template. The order alternates between rounds,
    so neither backend always runs first on a machine other work shares."""
    drains = {"queue": drain_queue_backend, "tasks_db": drain_tasks_db}
    best: dict[str, float] = {}
    for r in range(rounds):
        for age in (0, 60):
            for which in (("queue", "tasks_db") if r % 2 == 0 else ("tasks_db", "queue")):
                rate = drains[which](fresh(which), age)["rate"]
                best[f"{which}_{age}"] = max(best.get(f"{which}_{age}", 0.0), rate)
    figures: dict[str, Any] = dict(best)
    figures["as_shipped"] = best["queue_60"] / best["tasks_db_0"]
    figures["persistent"] = best["queue_60"] / best["tasks_db_60"]
    out(f"  {store}: {tasks} no-op tasks through task.enqueue(), one worker process each, best of {rounds}")
    for age, label in ((0, "CONN_MAX_AGE=0 (Django's default)"), (60, "CONN_MAX_AGE=60 (persistent)")):
        out(f"    {label:<34} queue backend {best[f'queue_{age}']:7.0f} tasks/s   django-tasks-db "
            f"{best[f'tasks_db_{age}']:7.0f} tasks/s   ratio {best[f'queue_{age}'] / best[f'tasks_db_{age}']:5.1f}x")
    out(f"    as shipped (the project's CONN_MAX_AGE=60 against django-tasks-db's 0): "
        f"{figures['as_shipped']:5.1f}x (target >= 10x)")
    out(f"    both with persistent connections: {figures['persistent']:5.1f}x (target >= 1.5x on SQLite)")
    return figures
