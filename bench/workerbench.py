"""The worker benchmark: real ``runworkers --burst`` processes against a bare loop and a peer.

For each store (SQLite; PostgreSQL when reachable) and each process count, one run drains N
``diagnostic.noop`` jobs through ``manage.py runworkers --processes P --burst`` (its shipped
defaults: prefetch and batched completion) and, on a copy of the same data, P bare
processes run the single claim and completion statements through the driver alone (sqlite3;
psycopg with ``FOR UPDATE SKIP LOCKED``), and the peer drains N no-op tasks with P processes
(huey on SQLite, Procrastinate on PostgreSQL; ``bench.peers``). The drains are interleaved
over ``rounds`` rounds, in rotating order, and the best of each is kept. Rates are taken from
the first claim to the last completion, so process start-up is not counted on any side: for
the workers from the event rows they wrote, for the bare loop from the clocks of its
processes. The targets are printed last, each met or not.

With ``--tenants T``, ``--tenant-jobs`` jobs spread over T tenants are drained with tenants taking
turns (``JOBS_FAIR_CLAIMS=1``, the default) and first come, first served (``=0``), interleaved
(see ``run_fairness``): what fairness costs a real drain.

Then, with ``--tasks N``, N no-op tasks go through Django's Tasks framework under the
queue's backend and under django-tasks-db (installed with the ``bench`` extra), each drained
by its own worker (see ``run_tasks``).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from jobs.sql import ClaimParams, postgresql

from .peers import (
    drain_huey,
    drain_procrastinate,
    fill_huey,
    fill_procrastinate,
    huey_available,
    procrastinate_available,
)
from .queuebench import MANAGE, Workspace, bare_drain, child, finish, make_template

# --- Bare loops (one per process) ------------------------------------------------------------


def bare_sqlite(path: str, synchronous: str, out: Any) -> None:
    out.put(bare_drain(Path(path), synchronous))


def bare_postgres(dsn: str, out: Any) -> None:
    """The same single statements as the project's path, in autocommit: one round trip each."""
    import psycopg
    from psycopg.types.json import Jsonb

    claim_sql = postgresql.claim()
    db = psycopg.connect(dsn, autocommit=True)
    result = Jsonb({"ok": True})
    done, t0 = 0, time.time()
    while True:
        now = datetime.now(timezone.utc)
        claim = ClaimParams(now=now, expires=now + timedelta(seconds=30), worker="bare", actor="worker:bare")
        row = db.execute(claim_sql, claim.binding(postgresql.PostgreSQL().time), prepare=True).fetchone()
        if row is None:
            break
        if row[2] != "leased":
            continue  # 'busy' or 'stamped': try again, as the queue does
        db.execute(postgresql.COMPLETE, {"job_id": row[0], "epoch": row[3], "result": result, "outcome": "",
                                         "outcome_text": "", "needs_action": False, "reference": "",
                                         "now": datetime.now(timezone.utc), "actor": "worker"}, prepare=True)
        done += 1
    db.close()
    out.put({"jobs": done, "t0": t0, "t1": time.time()})


def run_bare(target: Callable[..., None], processes: int, *args: Any) -> dict[str, Any]:
    # Forked, not spawned: the children need the statements, not a Django set-up of their own.
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, out)) for _ in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        if p.exitcode != 0:
            raise RuntimeError(f"a bare loop process failed (exit code {p.exitcode})")
    results = [out.get(timeout=5) for _ in procs]
    jobs = sum(r["jobs"] for r in results)
    span = max(r["t1"] for r in results) - min(r["t0"] for r in results)
    return {"jobs": jobs, "rate": jobs / span, "split": [r["jobs"] for r in results]}


# --- The workers -----------------------------------------------------------------------------


def run_workers(url: str, processes: int, env: dict[str, str] | None = None, manage: str = MANAGE) -> dict[str, Any]:
    """``runworkers --burst`` to the end; the rate from its own claim and completion events.

    ``manage``: another checkout's ``manage.py`` (``--baseline``), on the same database."""
    done = subprocess.run(
        [sys.executable, manage, "runworkers", "--processes", str(processes), "--burst", "--lease", "30",
         "--poll-interval", "0.05"],
        env=dict(os.environ, DATABASE_URL=url, JOBS_LOG_LEVEL="WARNING", **(env or {})),
        capture_output=True, text=True, timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"runworkers failed: {done.stderr[-2000:]}")
    if "database is locked" in done.stderr:
        raise RuntimeError("runworkers saw 'database is locked'")
    return _rate_from_events(url)


def _rate_from_events(url: str) -> dict[str, Any]:
    sql = (
        "SELECT MIN(CASE WHEN to_state = 'leased' THEN at END), MAX(CASE WHEN to_state = 'completed' THEN at END), "
        "SUM(CASE WHEN to_state = 'completed' THEN 1 ELSE 0 END) FROM jobs_jobevent"
    )
    workers = "SELECT actor, COUNT(*) FROM jobs_jobevent WHERE to_state = 'leased' GROUP BY actor"
    ((first, last, jobs),) = _rows(url, sql)
    split = [n for _, n in _rows(url, workers)]
    return {"jobs": jobs, "rate": jobs / (_when(last) - _when(first)).total_seconds(), "split": split}


def _rows(url: str, sql: str, params: tuple = ()) -> list[Any]:
    """The rows of one query (``%s`` placeholders) on the database ``url`` names, by the driver."""
    if url.startswith("sqlite"):
        import sqlite3

        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        rows = db.execute(sql.replace("%s", "?"), params).fetchall()
        db.close()
        return rows
    import psycopg

    with psycopg.connect(url) as pg:
        return pg.execute(sql, params).fetchall()


def _when(value: datetime | str) -> datetime:
    """A timestamp as the driver gives it: SQLite's are text."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# --- PostgreSQL throwaway databases ----------------------------------------------------------


class PostgresScratch:
    """Throwaway databases on a PostgreSQL server, each a copy of one filled template."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.base = server_url.rsplit("/", 1)[0]
        self.prefix = f"jobsbench_{os.getpid()}"
        self.made: list[str] = []

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.server_url, autocommit=True) as db:
            db.execute(sql)

    def create(self, name: str, template: str | None = None) -> str:
        full = f"{self.prefix}_{name}"
        self._admin(f'CREATE DATABASE "{full}"' + (f' TEMPLATE "{self.prefix}_{template}"' if template else ""))
        self.made.append(full)
        return f"{self.base}/{full}"

    def drop_all(self) -> None:
        for name in reversed(self.made):
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_reachable(url: str) -> bool:
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
        return True
    except psycopg.Error:
        return False


# --- Fairness: tenants taking turns against first come, first served -------------------------
#
# N jobs of T tenants drained by runworkers with JOBS_FAIR_CLAIMS=1 (tenants take turns) and
# =0 (first come, first served), interleaved, best of each, in three cases:
#
# - "interleaved": the tenants' jobs interleaved, as when many submit at once, with the
#   turns each mode's acceptance gives them. The claim is the same index seek in both
#   modes: what the turns cost.
# - "come due": the same jobs without a turn yet, as jobs whose start time has just come,
#   so the workers' own claims stamp them: what the fair stamp's lookups cost.
# - "by tenant": each tenant's jobs submitted together, one tenant after another. Taking
#   turns then visits rows all over the table, where first come, first served reads it in
#   order, so each batch of claims and completions writes a page per job instead of a page
#   per dozen jobs: what any fair order costs on such a backlog. Printed, not judged.

TEMPLATES: dict[str, dict[str, Any]] = {
    "interleaved_fair": {"turns": "fair"}, "interleaved_fifo": {"turns": "fifo"}, "interleaved_due": {"turns": "due"},
    "by_tenant_fair": {"turns": "fair", "by_tenant": True}, "by_tenant_fifo": {"turns": "fifo", "by_tenant": True},
}
CASES = {
    "interleaved": {"fair": "interleaved_fair", "fifo": "interleaved_fifo"},
    "come due": {"fair": "interleaved_due", "fifo": "interleaved_due"},
    "by tenant": {"fair": "by_tenant_fair", "fifo": "by_tenant_fifo"},
}
JUDGED = ("interleaved", "come due")
FAIR_TARGET = 0.85


def drain_fairly(fresh: Callable[[str], str], template: str, processes: int, fair: bool) -> dict[str, Any]:
    """One drain of a fresh copy of ``template``, fairness on or off."""
    url = fresh(template)
    result = run_workers(url, processes, env={"JOBS_FAIR_CLAIMS": "1" if fair else "0"})
    result["spread"] = _tenants_first_served(url)
    return result


def _tenants_first_served(url: str) -> tuple[int, int]:
    """How many tenants the first claims served, as many claims as there are tenants with jobs."""
    tenants = "SELECT COUNT(DISTINCT tenant_id) FROM jobs_job"
    first = ("SELECT COUNT(DISTINCT j.tenant_id) FROM (SELECT job_id FROM jobs_jobevent WHERE to_state = 'leased' "
             "ORDER BY id LIMIT %s) e JOIN jobs_job j ON j.id = e.job_id")
    ((count,),) = _rows(url, tenants)
    ((served,),) = _rows(url, first, (count,))
    return served, count


def run_fairness(*, counts: list[int], rounds: int, fresh: Callable[[str], str], out: Callable[[str], None],
                 store: str, tenants: int, jobs: int, figures: dict) -> dict:
    """Both modes, every case, every process count, ``rounds`` interleaved rounds; best of
    each. The target is judged on the worst ratio of the judged cases."""
    best: dict[tuple[str, int], dict[str, dict]] = {(case, p): {} for case in CASES for p in counts}
    for r in range(rounds):
        for p in counts:
            for case, templates in CASES.items():
                _interleave({mode: functools.partial(drain_fairly, fresh, templates[mode], p, mode == "fair")
                             for mode in ("fair", "fifo")}, r, best[(case, p)])
    out(f"  fairness, {jobs:,} jobs of {tenants:,} tenants: tenants taking turns (JOBS_FAIR_CLAIMS=1) against "
        f"first come, first served (=0)")
    rows = {}
    for (case, p), drains in best.items():
        fair, fifo = drains["fair"], drains["fifo"]
        ratio = fair["rate"] / fifo["rate"]
        rows[f"{case}, {p}"] = {"fair": fair["rate"], "fifo": fifo["rate"], "ratio": ratio, "judged": case in JUDGED,
                                "spread": {"fair": fair["spread"], "fifo": fifo["spread"]}}
        served = f"{fair['spread'][0]:,} / {fifo['spread'][0]:,} of {fair['spread'][1]:,}"
        out(f"    {case:<11} {p} process{'es' if p > 1 else '  '}: taking turns {fair['rate']:7.0f} jobs/s   "
            f"first come {fifo['rate']:7.0f} jobs/s   ratio {ratio:5.0%}   tenants in the first claims {served}")
    judged = [row["ratio"] for row in rows.values() if row["judged"]]
    worst = min(judged)
    _target(out, figures, f"{store}, fairness on: drain >= 85% of first come, first served ({' and '.join(JUDGED)}, "
            f"worst of {len(judged)})", worst, FAIR_TARGET)
    return {"rows": rows, "worst": worst}


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
from django.core.management import call_command
from django.db import transaction
from bench.tasks import noop
call_command("migrate", verbosity=0)
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
    ((first, last, done_count, total),) = _rows(url, sql)
    if done_count != total:
        raise RuntimeError(f"db_worker finished {done_count} of {total} tasks")
    return {"jobs": done_count, "rate": done_count / (_when(last) - _when(first)).total_seconds()}


def tasks_available() -> bool:
    try:
        import django_tasks_db  # noqa: F401
    except ImportError:
        return False
    return True


def run_tasks(*, tasks: int, store: str, fresh: Callable[[str], str], out: Callable[[str], None],
              rounds: int = TASK_ROUNDS) -> dict:
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


# --- The run -------------------------------------------------------------------------------


def run(*, jobs: int, counts: list[int], postgres_url: str | None, out: Callable[[str], None],
        tasks: int = 0, task_rounds: int = TASK_ROUNDS, rounds: int = 1, peers: bool = True,
        tenants: int = 0, tenant_jobs: int = 0, baseline: str | None = None) -> dict:
    """Every drain at every process count, ``rounds`` times interleaved (best of each), then
    the targets, each said met or not.

    ``baseline``: the directory of another checkout (the code before a change, say a ``git
    worktree``); its ``runworkers`` drains copies of the same SQLite template too, interleaved
    with the others, so a change's cost is measured in one run on one machine load."""
    figures: dict[str, Any] = {"sqlite": {}, "postgresql": {}, "fairness": {}, "tasks": {}, "targets": []}
    tenant_jobs = tenant_jobs or jobs
    if tasks and not tasks_available():
        out("Tasks: django-tasks-db is not installed; skipped (pip install -e '.[bench]')")
        tasks = 0
    use_huey = peers and huey_available()
    use_procrastinate = peers and procrastinate_available()
    if peers and not (use_huey and use_procrastinate):
        out("Peers: huey or Procrastinate is not installed; skipped (pip install -e '.[bench]')")
    with tempfile.TemporaryDirectory(prefix="workerbench-") as tmp:
        ws = Workspace(Path(tmp))
        out(f"SQLite (WAL, synchronous=FULL on every side): {jobs} no-op jobs per run, best of {rounds} "
            f"interleaved round(s)")
        make_template(ws, "template.sqlite3", jobs, fifo_index=False)
        if use_huey:
            fill_huey(ws.root / "huey-template.sqlite3", jobs)
        best: dict[int, dict[str, dict]] = {p: {} for p in counts}
        for r in range(rounds):
            for p in counts:
                drains: dict[str, Callable[[], dict]] = {
                    "workers": functools.partial(_sqlite_workers, ws, p),
                    "bare": functools.partial(_sqlite_bare, ws, p),
                }
                if use_huey:
                    drains["peer"] = functools.partial(_sqlite_huey, ws, p, jobs)
                if baseline:
                    drains["baseline"] = functools.partial(_sqlite_workers, ws, p, str(Path(baseline) / "manage.py"))
                _interleave(drains, r, best[p])
        for p in counts:
            figures["sqlite"][p] = best[p]
            _line(out, p, best[p], "huey")
        _scaling(out, figures["sqlite"], counts)
        if use_huey:
            for p in (1, 2):
                if p in best:
                    _target(out, figures, f"SQLite, {p} process{'es' if p > 1 else ''}: runworkers >= 1.5x huey",
                            best[p]["workers"]["rate"] / best[p]["peer"]["rate"], 1.5)
        if tenants:
            for name, kwargs in TEMPLATES.items():
                make_template(ws, f"{name}.sqlite3", tenant_jobs, tenants=tenants, fifo_index=False, **kwargs)
            figures["fairness"]["sqlite"] = run_fairness(
                counts=counts, rounds=rounds, out=out, store="SQLite", tenants=tenants, jobs=tenant_jobs,
                figures=figures, fresh=lambda name: ws.url(ws.copy(f"{name}.sqlite3", f"{name}.sqlite3").name))
        if tasks:
            out("Tasks through Django's Tasks framework: the queue's backend against django-tasks-db")
            templates = {"queue": "queue-tasks.sqlite3", "tasks_db": "tasks-db-tasks.sqlite3"}
            for which, name in templates.items():
                enqueue_tasks(ws.url(name), tasks, TASKS_DB_SETTINGS if which == "tasks_db" else "jobsite.settings")
                _checkpoint(ws.root / name)
            figures["tasks"]["sqlite"] = run_tasks(
                tasks=tasks, store="SQLite (FULL)", out=out, rounds=task_rounds,
                fresh=lambda which: ws.url(ws.copy(templates[which], f"{which}.sqlite3").name))
            _target(out, figures, "SQLite, Tasks: django-tasks-db as shipped >= 10x slower",
                    figures["tasks"]["sqlite"]["as_shipped"], 10)

    if postgres_url and postgres_reachable(postgres_url):
        scratch = PostgresScratch(postgres_url)
        try:
            out(f"PostgreSQL ({postgres_url.rsplit('@', 1)[-1]}): {jobs} no-op jobs per run, best of {rounds} "
                f"interleaved round(s)")
            template = scratch.create("template")
            finish(child("fill", template, jobs=jobs, fifo_index=False))
            if use_procrastinate:
                fill_procrastinate(scratch.create("ptemplate"), jobs)
            made = iter(range(1_000_000))
            best = {p: {} for p in counts}
            for r in range(rounds):
                for p in counts:
                    drains = {
                        "workers": functools.partial(_pg_workers, scratch, made, p),
                        "bare": functools.partial(_pg_bare, scratch, made, p),
                    }
                    if use_procrastinate:
                        drains["peer"] = functools.partial(_pg_procrastinate, scratch, made, p)
                    _interleave(drains, r, best[p])
            for p in counts:
                figures["postgresql"][p] = best[p]
                _line(out, p, best[p], "Procrastinate")
            _scaling(out, figures["postgresql"], counts)
            if use_procrastinate:
                for p in (1, 2):
                    if p in best:
                        _target(out, figures, f"PostgreSQL, {p} process{'es' if p > 1 else ''}: runworkers >= 3x "
                                f"Procrastinate", best[p]["workers"]["rate"] / best[p]["peer"]["rate"], 3)
            if 4 in best:
                _target(out, figures, "PostgreSQL, 4 processes: runworkers >= 85% of the bare loop",
                        best[4]["workers"]["rate"] / best[4]["bare"]["rate"], 0.85)
            if tenants:
                for name, kwargs in TEMPLATES.items():
                    finish(child("fill", scratch.create(name), jobs=tenant_jobs, tenants=tenants, fifo_index=False,
                                 **kwargs))
                figures["fairness"]["postgresql"] = run_fairness(
                    counts=counts, rounds=rounds, out=out, store="PostgreSQL", tenants=tenants, jobs=tenant_jobs,
                    figures=figures, fresh=lambda name: scratch.create(f"{name}_{next(made)}", name))
            if tasks:
                for which in ("queue", "tasks_db"):
                    enqueue_tasks(scratch.create(f"t_{which}"), tasks,
                                  TASKS_DB_SETTINGS if which == "tasks_db" else "jobsite.settings")
                figures["tasks"]["postgresql"] = run_tasks(
                    tasks=tasks, store="PostgreSQL", out=out, rounds=task_rounds,
                    fresh=lambda which: scratch.create(f"t_{which}_{next(made)}", f"t_{which}"))
                _target(out, figures, "PostgreSQL, Tasks: django-tasks-db as shipped >= 10x slower",
                        figures["tasks"]["postgresql"]["as_shipped"], 10)
        finally:
            scratch.drop_all()
    else:
        out("PostgreSQL: not reachable; skipped (set --postgres URL)")
    if figures["targets"]:
        out("Targets:")
        for name, value, goal, met in figures["targets"]:
            shown = f"{value:.0%}" if goal < 1 else f"{value:.2f}x"
            out(f"  {'MET    ' if met else 'NOT MET'} {name}: {shown}")
    return figures


def _sqlite_workers(ws: Workspace, p: int, manage: str = MANAGE) -> dict:
    return run_workers(ws.url(ws.copy("template.sqlite3", "w.sqlite3").name), p, manage=manage)


def _sqlite_bare(ws: Workspace, p: int) -> dict:
    return run_bare(bare_sqlite, p, str(ws.copy("template.sqlite3", "b.sqlite3")), "FULL")


def _sqlite_huey(ws: Workspace, p: int, jobs: int) -> dict:
    return drain_huey(ws.copy("huey-template.sqlite3", "h.sqlite3"), p, jobs)


def _pg_workers(scratch: PostgresScratch, made: Iterator[int], p: int) -> dict:
    return run_workers(scratch.create(f"w{next(made)}", "template"), p)


def _pg_bare(scratch: PostgresScratch, made: Iterator[int], p: int) -> dict:
    return run_bare(bare_postgres, p, scratch.create(f"b{next(made)}", "template"))


def _pg_procrastinate(scratch: PostgresScratch, made: Iterator[int], p: int) -> dict:
    return drain_procrastinate(scratch.create(f"p{next(made)}", "ptemplate"), p)


def _interleave(drains: dict[str, Callable[[], dict]], round_: int, best: dict[str, dict]) -> None:
    """Run each drain once, in an order that rotates with the round; keep each one's best."""
    names = list(drains)
    shift = round_ % len(names)
    for name in names[shift:] + names[:shift]:
        result = drains[name]()
        if name not in best or result["rate"] > best[name]["rate"]:
            best[name] = result


def _target(out: Callable[[str], None], figures: dict, name: str, value: float, goal: float) -> None:
    figures["targets"].append((name, value, goal, value >= goal))


def _checkpoint(path: Path) -> None:
    """Fold the WAL into the file, so copies of it are self-contained (see queuebench)."""
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _line(out: Callable[[str], None], p: int, best: dict, peer: str) -> None:
    workers, bare = best["workers"], best["bare"]
    line = (f"  {p} process{'es' if p > 1 else '  '}: runworkers {workers['rate']:7.0f} jobs/s   bare loop "
            f"{bare['rate']:7.0f} jobs/s   ratio {workers['rate'] / bare['rate']:5.0%}")
    if "peer" in best:
        ours = workers["rate"] / best["peer"]["rate"]
        line += f"   {peer} {best['peer']['rate']:7.0f} jobs/s   ours/{peer} {ours:5.2f}x"
    if "baseline" in best:
        line += (f"   baseline {best['baseline']['rate']:7.0f} jobs/s   "
                 f"ours/baseline {workers['rate'] / best['baseline']['rate']:5.0%}")
    out(line + f"   claims per worker {sorted(workers['split'], reverse=True)}")


def _scaling(out: Callable[[str], None], rows: dict, counts: list[int]) -> None:
    one = rows[counts[0]]["workers"]["rate"]
    out("  scaling (runworkers): " + ", ".join(
        f"{p}: {rows[p]['workers']['rate'] / one:4.2f}x" for p in counts))
