"""The benchmark commands keep working, and the claim stays an index seek."""

from __future__ import annotations

import json
import subprocess

import pytest
from django.db import connection

from jobs import statements
from tests.conftest import PYTHON, ROOT


@pytest.mark.slow
def test_queuebench_drains_both_ways_and_prints_its_figures():
    done = subprocess.run(
        [PYTHON, "manage.py", "queuebench", "--jobs", "200", "--rounds", "1", "--depths", "20,200", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for sync in ("FULL", "NORMAL"):
        assert figures[sync]["project"] > 0 and figures[sync]["bare"] > 0
        assert min(figures[f"processes_{sync}"]["split"]) > 0, "both processes should claim work"
    assert "ratio" in done.stdout and "claim time" in done.stdout


def plan_of(sql: str, params: list) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return " / ".join(row[-1] for row in cursor.fetchall())


@pytest.mark.django_db
def test_the_claim_is_an_index_seek_on_sqlite():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's plan; PostgreSQL's claim is measured by queuebench")
    now = "2026-01-01 00:00:00"
    pick = plan_of(statements.pick("sqlite"), [now, now, statements.CANDIDATES])
    # The candidates come off the claim index in order: no sort of all queued jobs.
    assert any(f"{how} jobs_job USING INDEX job_claim_idx" in pick for how in ("SCAN", "SEARCH")), pick
    assert pick.count("TEMP B-TREE") <= 1, pick  # only the outer ORDER BY over at most CANDIDATES rows
    due = plan_of(statements.stamp_due("sqlite"), [now, statements.DUE_BATCH])
    assert "USING INDEX job_due_idx" in due, due
    # ... and the rows to stamp are looked up by their ids, never through every queued job.
    assert due.startswith("SEARCH jobs_job USING INTEGER PRIMARY KEY"), due


@pytest.mark.slow
def test_workerbench_drains_through_real_runworkers_and_a_bare_loop():
    done = subprocess.run(
        [PYTHON, "manage.py", "workerbench", "--jobs", "40", "--processes", "1,2", "--postgres", "", "--tasks", "0",
         "--rounds", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "runworkers" in line and "bare loop" in line]
    assert len(lines) == 2, done.stdout
    assert "claims per worker [40]" in lines[0]
    assert "scaling (runworkers)" in done.stdout
    # huey drained the same jobs at the same process counts, and the targets are judged.
    assert all("huey" in line for line in lines), done.stdout
    targets = [t for t in done.stdout.split("Targets:")[1].splitlines() if t.strip()]
    assert [t.split(": ")[0].removeprefix("  MET     ").removeprefix("  NOT MET ") for t in targets] == [
        "SQLite, 1 process", "SQLite, 2 processes"], targets
