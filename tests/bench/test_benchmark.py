"""The benchmark commands keep working, and the claim stays an index seek."""

from __future__ import annotations

import json
import subprocess

import pytest
from django.db import connection

from jobs import queue
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


@pytest.mark.django_db
def test_the_claim_is_an_index_seek_on_sqlite():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's plan; PostgreSQL's claim is measured by queuebench")
    sql = queue.claim_statement("sqlite").replace("%s", "?")
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, ["2026-01-01 00:00:00"] * 9)
        plan = " / ".join(row[-1] for row in cursor.fetchall())
    assert "USING INDEX job_claim_idx" in plan or "USING COVERING INDEX job_claim_idx" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


@pytest.mark.slow
def test_workerbench_drains_through_real_runworkers_and_a_bare_loop():
    done = subprocess.run(
        [PYTHON, "manage.py", "workerbench", "--jobs", "40", "--processes", "1,2", "--postgres", "", "--tasks", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "runworkers" in line and "bare loop" in line]
    assert len(lines) == 2, done.stdout
    assert "claims per worker [40]" in lines[0]
    assert "scaling (runworkers)" in done.stdout
