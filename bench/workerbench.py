"""The worker benchmark: real ``runworkers --burst`` processes against a bare loop and a peer.

For each store (SQLite; PostgreSQL when reachable) and each process count, one run drains N
``diagnostic.noop`` jobs through ``manage.py runworkers --processes P --burst`` (its shipped
defaults: prefetch and batched completion) and, on copies of the same data, two bare loops of
P processes that run the queue's statements through the driver alone (sqlite3; psycopg with
``FOR UPDATE SKIP LOCKED``): the one-job loop (a single claim and a single completion, each
its own transaction) and the batched loop (32 fenced claims in one transaction, 32 fenced
completions in one), the reference for what the queue adds per job to its batched work
(``bench.drains``), and that batched loop with each job's start record written as the
worker writes it (one write a job: the floor that spending an attempt only on a started
handler sets), and that batched loop again with one slot row of a limited kind none of its jobs
is (``KindSlot``, which every worker syncs for ``webhook.deliver``): what a limit elsewhere costs
the claim, nothing when all is well. The peer drains N no-op tasks with P processes (huey on SQLite,
Procrastinate on PostgreSQL; ``bench.peers``). The drains are interleaved over ``rounds``
rounds, in rotating order, and the best of each is kept. Rates are taken from the first claim
to the last completion, so process start-up is not counted on any side: for the workers from
the event rows they wrote, for the bare loops from the clocks of their processes. The targets
are printed last, each met or not.

With ``--tenants T``, ``--tenant-jobs`` jobs spread over T tenants are drained with tenants taking
turns (``JOBS_FAIR_CLAIMS=1``, the default) and first come, first served (``=0``), interleaved
(see ``run_fairness``): what fairness costs a real drain.

Then, with ``--tasks N``, N no-op tasks go through Django's Tasks framework under the
queue's backend and under django-tasks-db (installed with the ``bench`` extra), each drained
by its own worker (see ``run_tasks``).
"""

from __future__ import annotations

import contextlib
import functools
import statistics
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .drains import (
    PostgresScratch,
    bare_postgres,
    bare_postgres_batched,
    bare_postgres_started,
    bare_sqlite,
    bare_sqlite_batched,
    bare_sqlite_started,
    postgres_reachable,
    run_bare,
    run_workers,
    select_rows,
)
from .peers import (
    drain_huey,
    drain_procrastinate,
    fill_huey,
    fill_procrastinate,
    huey_available,
    procrastinate_available,
)
from .queuebench import MANAGE, Workspace, child, finish, make_template
from .taskbench import TASK_ROUNDS, TASKS_DB_SETTINGS, enqueue_tasks, run_tasks, tasks_available

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
# runworkers against a loop doing only its batched work (``bench.drains.bare_sqlite_batched``,
# ``bare_postgres_batched``): what the queue adds per job beyond the fenced claim and completion.
BATCHED_TARGET = 0.40


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
    ((count,),) = select_rows(url, tenants)
    ((served,),) = select_rows(url, first, (count,))
    return served, count


def run_fairness(*, counts: list[int], rounds: int, fresh: Callable[[str], str], out: Callable[[str], None],
                 store: str, tenants: int, jobs: int, figures: dict[str, Any]) -> dict[str, Any]:
    """Both modes, every case, every process count, ``rounds`` interleaved rounds; best of
    each. The target is judged on the worst ratio of the judged cases."""
    best: dict[tuple[str, int], dict[str, dict[str, Any]]] = {(case, p): {} for case in CASES for p in counts}
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


# --- The run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """What one run drains, and with which peers: ``run``'s options once checked."""

    jobs: int
    counts: list[int]
    rounds: int
    out: Callable[[str], None]
    tasks: int
    task_rounds: int
    tenants: int
    tenant_jobs: int
    baseline: str | None
    use_huey: bool
    use_procrastinate: bool


def run(*, jobs: int, counts: list[int], postgres_url: str | None, out: Callable[[str], None],
        tasks: int = 0, task_rounds: int = TASK_ROUNDS, rounds: int = 1, peers: bool = True,
        tenants: int = 0, tenant_jobs: int = 0, baseline: str | None = None) -> dict[str, Any]:
    """Every drain at every process count, ``rounds`` times interleaved (best of each), then
    the targets, each said met or not.

    ``baseline``: the directory of another checkout (the code before a change, say a ``git
    worktree``); its ``runworkers`` drains copies of the same SQLite template too, interleaved
    with the others, so a change's cost is measured in one run on one machine load."""
    figures: dict[str, Any] = {"sqlite": {}, "postgresql": {}, "fairness": {}, "tasks": {}, "targets": []}
    if tasks and not tasks_available():
        out("Tasks: django-tasks-db is not installed; skipped (pip install -e '.[bench]')")
        tasks = 0
    use_huey = peers and huey_available()
    use_procrastinate = peers and procrastinate_available()
    if peers and not (use_huey and use_procrastinate):
        out("Peers: huey or Procrastinate is not installed; skipped (pip install -e '.[bench]')")
    plan = _Plan(jobs=jobs, counts=counts, rounds=rounds, out=out, tasks=tasks, task_rounds=task_rounds,
                 tenants=tenants, tenant_jobs=tenant_jobs or jobs, baseline=baseline, use_huey=use_huey,
                 use_procrastinate=use_procrastinate)
    with tempfile.TemporaryDirectory(prefix="workerbench-") as tmp:
        ws = Workspace(Path(tmp))
        _sqlite_drains(plan, ws, figures)
        if tenants:
            _sqlite_fairness(plan, ws, figures)
        if tasks:
            _sqlite_tasks(plan, ws, figures)
    if postgres_url and postgres_reachable(postgres_url):
        _postgres(plan, postgres_url, figures)
    else:
        out("PostgreSQL: not reachable; skipped (set --postgres URL)")
    if figures["targets"]:
        out("Targets:")
        for name, value, goal, met in figures["targets"]:
            shown = f"{value:.0%}" if goal < 1 else f"{value:.2f}x"
            out(f"  {'MET    ' if met else 'NOT MET'} {name}: {shown}")
    return figures


def _sqlite_drains(plan: _Plan, ws: Workspace, figures: dict[str, Any]) -> None:
    """The workers, the bare loop, huey and the baseline on copies of one SQLite template."""
    out, counts = plan.out, plan.counts
    out(f"SQLite (WAL, synchronous=FULL on every side): {plan.jobs} no-op jobs per run, best of {plan.rounds} "
        f"interleaved round(s)")
    make_template(ws, "template.sqlite3", plan.jobs, fifo_index=False)
    if plan.use_huey:
        fill_huey(ws.root / "huey-template.sqlite3", plan.jobs)
    best: dict[int, dict[str, dict[str, Any]]] = {p: {} for p in counts}
    for r in range(plan.rounds):
        for p in counts:
            drains: dict[str, Callable[[], dict[str, Any]]] = {
                "workers": functools.partial(_sqlite_workers, ws, p),
                "bare": functools.partial(_sqlite_bare, ws, p),
                "batched": functools.partial(_sqlite_batched, ws, p),
                "started": functools.partial(_sqlite_batched, ws, p, bare_sqlite_started),
                "slotted": functools.partial(_sqlite_batched, ws, p, slotted=True),
            }
            if plan.use_huey:
                drains["peer"] = functools.partial(_sqlite_huey, ws, p, plan.jobs)
            if plan.baseline:
                drains["baseline"] = functools.partial(_sqlite_workers, ws, p, str(Path(plan.baseline) / "manage.py"))
            _interleave(drains, r, best[p])
    for p in counts:
        figures["sqlite"][p] = best[p]
        _line(out, p, best[p], "huey")
    _scaling(out, figures["sqlite"], counts)
    _batched_targets(out, figures, "SQLite", best)
    if plan.use_huey:
        for p in (1, 2):
            if p in best:
                _target(out, figures, f"SQLite, {p} process{'es' if p > 1 else ''}: runworkers >= 1.5x huey",
                        best[p]["workers"]["rate"] / best[p]["peer"]["rate"], 1.5)


def _sqlite_fairness(plan: _Plan, ws: Workspace, figures: dict[str, Any]) -> None:
    for name, kwargs in TEMPLATES.items():
        make_template(ws, f"{name}.sqlite3", plan.tenant_jobs, tenants=plan.tenants, fifo_index=False, **kwargs)
    figures["fairness"]["sqlite"] = run_fairness(
        counts=plan.counts, rounds=plan.rounds, out=plan.out, store="SQLite", tenants=plan.tenants,
        jobs=plan.tenant_jobs, figures=figures,
        fresh=lambda name: ws.url(ws.copy(f"{name}.sqlite3", f"{name}.sqlite3").name))


def _sqlite_tasks(plan: _Plan, ws: Workspace, figures: dict[str, Any]) -> None:
    plan.out("Tasks through Django's Tasks framework: the queue's backend against django-tasks-db")
    templates = {"queue": "queue-tasks.sqlite3", "tasks_db": "tasks-db-tasks.sqlite3"}
    for which, name in templates.items():
        enqueue_tasks(ws.url(name), plan.tasks, TASKS_DB_SETTINGS if which == "tasks_db" else "jobsite.settings")
        _checkpoint(ws.root / name)
    figures["tasks"]["sqlite"] = run_tasks(
        tasks=plan.tasks, store="SQLite (FULL)", out=plan.out, rounds=plan.task_rounds,
        fresh=lambda which: ws.url(ws.copy(templates[which], f"{which}.sqlite3").name))
    _target(plan.out, figures, "SQLite, Tasks: django-tasks-db as shipped >= 10x slower",
            figures["tasks"]["sqlite"]["as_shipped"], 10)


def _postgres(plan: _Plan, postgres_url: str, figures: dict[str, Any]) -> None:
    """The same drains on PostgreSQL, each on a database made from a template, dropped after."""
    scratch = PostgresScratch(postgres_url)
    try:
        plan.out(f"PostgreSQL ({postgres_url.rsplit('@', 1)[-1]}): {plan.jobs} no-op jobs per run, best of "
                 f"{plan.rounds} interleaved round(s)")
        made = iter(range(1_000_000))
        _postgres_drains(plan, scratch, made, figures)
        if plan.tenants:
            for name, kwargs in TEMPLATES.items():
                finish(child("fill", scratch.create(name), jobs=plan.tenant_jobs, tenants=plan.tenants,
                             fifo_index=False, **kwargs))
            figures["fairness"]["postgresql"] = run_fairness(
                counts=plan.counts, rounds=plan.rounds, out=plan.out, store="PostgreSQL", tenants=plan.tenants,
                jobs=plan.tenant_jobs, figures=figures,
                fresh=lambda name: scratch.create(f"{name}_{next(made)}", name))
        if plan.tasks:
            for which in ("queue", "tasks_db"):
                enqueue_tasks(scratch.create(f"t_{which}"), plan.tasks,
                              TASKS_DB_SETTINGS if which == "tasks_db" else "jobsite.settings")
            figures["tasks"]["postgresql"] = run_tasks(
                tasks=plan.tasks, store="PostgreSQL", out=plan.out, rounds=plan.task_rounds,
                fresh=lambda which: scratch.create(f"t_{which}_{next(made)}", f"t_{which}"))
            _target(plan.out, figures, "PostgreSQL, Tasks: django-tasks-db as shipped >= 10x slower",
                    figures["tasks"]["postgresql"]["as_shipped"], 10)
    finally:
        scratch.drop_all()


def _postgres_drains(plan: _Plan, scratch: PostgresScratch, made: Iterator[int], figures: dict[str, Any]) -> None:
    out, counts = plan.out, plan.counts
    template = scratch.create("template")
    finish(child("fill", template, jobs=plan.jobs, fifo_index=False))
    if plan.use_procrastinate:
        fill_procrastinate(scratch.create("ptemplate"), plan.jobs)
    best: dict[int, dict[str, dict[str, Any]]] = {p: {} for p in counts}
    for r in range(plan.rounds):
        for p in counts:
            drains: dict[str, Callable[[], dict[str, Any]]] = {
                "workers": functools.partial(_pg_workers, scratch, made, p),
                "bare": functools.partial(_pg_bare, scratch, made, p),
                "batched": functools.partial(_pg_batched, scratch, made, p),
                "started": functools.partial(_pg_batched, scratch, made, p, bare_postgres_started),
                "slotted": functools.partial(_pg_batched, scratch, made, p, slotted=True),
            }
            if plan.use_procrastinate:
                drains["peer"] = functools.partial(_pg_procrastinate, scratch, made, p)
            if plan.baseline:
                drains["baseline"] = functools.partial(_pg_workers, scratch, made, p,
                                                       str(Path(plan.baseline) / "manage.py"))
            _interleave(drains, r, best[p])
    for p in counts:
        figures["postgresql"][p] = best[p]
        _line(out, p, best[p], "Procrastinate")
    _scaling(out, figures["postgresql"], counts)
    _batched_targets(out, figures, "PostgreSQL", best)
    if plan.use_procrastinate:
        for p in (1, 2):
            if p in best:
                _target(out, figures, f"PostgreSQL, {p} process{'es' if p > 1 else ''}: runworkers >= 3x "
                        f"Procrastinate", best[p]["workers"]["rate"] / best[p]["peer"]["rate"], 3)
    if 4 in best:
        _target(out, figures, "PostgreSQL, 4 processes: runworkers >= 85% of the bare loop",
                best[4]["workers"]["rate"] / best[4]["bare"]["rate"], 0.85)


def _sqlite_workers(ws: Workspace, p: int, manage: str = MANAGE) -> dict[str, Any]:
    return run_workers(ws.url(ws.copy("template.sqlite3", "w.sqlite3").name), p, manage=manage)


def _sqlite_bare(ws: Workspace, p: int) -> dict[str, Any]:
    return run_bare(bare_sqlite, p, str(ws.copy("template.sqlite3", "b.sqlite3")), "FULL")


# A limited kind's slot that no job of the drains is (``slotted``): the rows a worker syncs.
UNRELATED_SLOT = "INSERT INTO jobs_kindslot (kind, number, epoch) VALUES ('webhook.deliver', 0, 0)"


def _sqlite_batched(ws: Workspace, p: int, loop: Callable[..., None] = bare_sqlite_batched,
                    slotted: bool = False) -> dict[str, Any]:
    path = ws.copy("template.sqlite3", "bb.sqlite3")
    if slotted:
        import sqlite3

        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(UNRELATED_SLOT)
    return run_bare(loop, p, str(path))


def _sqlite_huey(ws: Workspace, p: int, jobs: int) -> dict[str, Any]:
    return drain_huey(ws.copy("huey-template.sqlite3", "h.sqlite3"), p, jobs)


def _pg_workers(scratch: PostgresScratch, made: Iterator[int], p: int, manage: str = MANAGE) -> dict[str, Any]:
    return run_workers(scratch.create(f"w{next(made)}", "template"), p, manage=manage)


def _pg_bare(scratch: PostgresScratch, made: Iterator[int], p: int) -> dict[str, Any]:
    return run_bare(bare_postgres, p, scratch.create(f"b{next(made)}", "template"))


def _pg_batched(scratch: PostgresScratch, made: Iterator[int], p: int,
                loop: Callable[..., None] = bare_postgres_batched, slotted: bool = False) -> dict[str, Any]:
    url = scratch.create(f"bb{next(made)}", "template")
    if slotted:
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            db.execute(UNRELATED_SLOT)
    return run_bare(loop, p, url)


def _pg_procrastinate(scratch: PostgresScratch, made: Iterator[int], p: int) -> dict[str, Any]:
    return drain_procrastinate(scratch.create(f"p{next(made)}", "ptemplate"), p)


def _interleave(drains: dict[str, Callable[[], dict[str, Any]]], round_: int, best: dict[str, dict[str, Any]]) -> None:
    """Run each drain once, in an order that rotates with the round; keep each one's best."""
    names = list(drains)
    shift = round_ % len(names)
    for name in names[shift:] + names[:shift]:
        result = drains[name]()
        result["rates"] = [*best.get(name, {}).get("rates", []), result["rate"]]  # every round's, for the median
        if name not in best or result["rate"] > best[name]["rate"]:
            best[name] = result
        else:
            best[name]["rates"] = result["rates"]


def _target(out: Callable[[str], None], figures: dict[str, Any], name: str, value: float, goal: float) -> None:
    figures["targets"].append((name, value, goal, value >= goal))


def _checkpoint(path: Path) -> None:
    """Fold the WAL into the file, so copies of it are self-contained (see queuebench)."""
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _batched_targets(out: Callable[[str], None], figures: dict[str, Any], store: str,
                     best: dict[int, dict[str, dict[str, Any]]]) -> None:
    """The queue's cost per job against the batched work alone: at one and two processes."""
    for p in (1, 2):
        if p in best:
            _target(out, figures, f"{store}, {p} process{'es' if p > 1 else ''}: runworkers >= 40% of the batched "
                    f"bare loop", best[p]["workers"]["rate"] / best[p]["batched"]["rate"], BATCHED_TARGET)


def _line(out: Callable[[str], None], p: int, best: dict[str, Any], peer: str) -> None:
    workers, bare, batched = best["workers"], best["bare"], best["batched"]
    line = (f"  {p} process{'es' if p > 1 else '  '}: runworkers {workers['rate']:7.0f} jobs/s   bare loop "
            f"{bare['rate']:7.0f} jobs/s   ratio {workers['rate'] / bare['rate']:5.0%}   batched bare loop "
            f"{batched['rate']:7.0f} jobs/s   ratio {workers['rate'] / batched['rate']:5.0%}")
    if "started" in best:  # the batched loop plus one start record a job: the floor exact accounting sets
        started = best["started"]
        line += (f"   batched + starts {started['rate']:7.0f} jobs/s   ratio {workers['rate'] / started['rate']:5.0%}"
                 f"   starts' price {started['rate'] / batched['rate']:5.0%}")
    if "slotted" in best:  # the batched loop with another kind's slot row: what a limit elsewhere costs
        line += (f"   batched, another kind limited {best['slotted']['rate']:7.0f} jobs/s   "
                 f"slot's price {best['slotted']['rate'] / batched['rate']:5.0%}")
    if "peer" in best:
        ours = workers["rate"] / best["peer"]["rate"]
        line += f"   {peer} {best['peer']['rate']:7.0f} jobs/s   ours/{peer} {ours:5.2f}x"
    if "baseline" in best:
        line += (f"   baseline {best['baseline']['rate']:7.0f} jobs/s   "
                 f"ours/baseline {workers['rate'] / best['baseline']['rate']:5.0%}   baseline/batched "
                 f"{best['baseline']['rate'] / batched['rate']:5.0%}")
    out(line + f"   claims per worker {sorted(workers['split'], reverse=True)}")
    if len(workers["rates"]) > 2:  # the medians of the rounds, and runworkers' ratios of them
        median = {name: statistics.median(drain["rates"]) for name, drain in best.items()}
        out(f"      medians of {len(workers['rates'])} rounds: " + "   ".join(
            f"{name} {rate:7.0f} jobs/s" + (f" ({median['workers'] / rate:4.0%})" if name != "workers" else "")
            for name, rate in median.items()))


def _scaling(out: Callable[[str], None], rows: dict[int, Any], counts: list[int]) -> None:
    one = rows[counts[0]]["workers"]["rate"]
    out("  scaling (runworkers): " + ", ".join(
        f"{p}: {rows[p]['workers']['rate'] / one:4.2f}x" for p in counts))
