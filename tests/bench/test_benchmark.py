"""The benchmark commands keep working, and the claim stays an index seek."""

from __future__ import annotations

import json
import subprocess

import pytest
from django.db import connection

from jobs import sql
from jobs.sql import postgresql, sqlite
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


def plan_of(statement: str, params: dict) -> str:
    """SQLite's plan of one of its driver's statements."""
    connection.ensure_connection()
    rows = connection.connection.execute("EXPLAIN QUERY PLAN " + statement, params).fetchall()
    return " / ".join(row[-1] for row in rows)


@pytest.mark.django_db
def test_the_claim_is_an_index_seek_on_sqlite():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's plan; PostgreSQL's claim is measured by queuebench")
    now = "2026-01-01 00:00:00"
    pick = plan_of(sqlite.PICK, {"now": now, "candidates": sql.CANDIDATES})
    # The candidates come off the claim index in order: no sort of all queued jobs.
    assert any(f"{how} jobs_job USING INDEX job_claim_idx" in pick for how in ("SCAN", "SEARCH")), pick
    assert pick.count("TEMP B-TREE") <= 1, pick  # only the outer ORDER BY over at most CANDIDATES rows
    due = plan_of(sqlite.stamp_due(), {"now": now, "due_batch": sql.DUE_BATCH})
    assert "USING INDEX job_due_idx" in due, due
    # ... and the rows to stamp are looked up by their ids, never through every queued job.
    assert due.startswith("SEARCH jobs_job USING INTEGER PRIMARY KEY"), due


@pytest.mark.django_db
def test_stamping_stays_on_its_indexes_on_postgresql_whatever_the_statistics(make_member):
    """Statistics taken while no queued job had a turn (a burst of jobs whose time had not yet
    come) once led PostgreSQL to look for a tenant's latest turn by walking the claim index
    backwards past every other tenant's jobs, and to scan the whole table for the ids to
    stamp: a cost per stamp that grew with the queue."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's plan; SQLite's is pinned by the test above")
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import Tenant
    from jobs.models import Job

    user = make_member("acme")
    tenants = [user.tenant] + [Tenant.objects.create(slug=f"t{n}", name=f"T{n}") for n in range(1, 200)]
    now = timezone.now()
    Job.objects.bulk_create(
        Job(scope=tenants[n % len(tenants)], submitted_by=user, kind="diagnostic.noop", payload={},
            operation_key=f"k{n}", request_fingerprint="f", state="queued", turn=None,
            available_at=now - timedelta(seconds=n), deadline=now + timedelta(days=1), created_at=now, updated_at=now)
        for n in range(4000))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE jobs_job")
        cursor.execute("ANALYZE jobs_tenant")
        cursor.execute("EXPLAIN " + postgresql.stamp_due(), {"now": now, "due_batch": sql.DUE_BATCH})
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Seq Scan on jobs_job" not in plan, plan
    assert "Index Cond: (id = ANY" in plan, plan  # the rows to stamp, by their ids
    # The tenant's latest turn: a seek on the tenant's own entries of the waiting index.
    assert "job_waiting_idx on jobs_job o" in plan and "Index Cond: ((tenant_id = jobs_job.tenant_id)" in plan, plan
    assert "Filter: (tenant_id = jobs_job.tenant_id)" not in plan, plan
