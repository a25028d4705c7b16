"""``workerbench`` drains through real ``runworkers``, the bare loops and its peers, and judges its
targets (a module of its own: the longest smoke runs go to separate test processes)."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import PYTHON, ROOT


@pytest.mark.slow
def test_workerbench_drains_through_real_runworkers_and_a_bare_loop():
    done = subprocess.run(
        # One process count: a second drains the same code again (workerbench's full run measures the scaling).
        [PYTHON, "manage.py", "workerbench", "--jobs", "40", "--processes", "1", "--postgres", "", "--tasks", "0",
         "--rounds", "1", "--tenants", "10", "--tenant-jobs", "40"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines()
             if "runworkers" in line and "bare loop" in line and "jobs/s" in line]
    assert len(lines) == 1, done.stdout
    # The batched bare loop is the reference beside the one-job loop, with and without start writes,
    # and with a slot row of a kind none of its jobs is (what a limit elsewhere costs the claim).
    assert all("batched bare loop" in line and "batched + starts" in line and "slot's price" in line
               for line in lines), lines
    assert "claims per worker [40]" in lines[0]
    assert "scaling (runworkers)" in done.stdout
    # huey drained the same jobs at the same process counts, and the targets are judged.
    assert all("huey" in line for line in lines), done.stdout
    targets = [t for t in done.stdout.split("Targets:")[1].splitlines() if t.strip()]
    assert [t.split(": ")[0].removeprefix("  MET     ").removeprefix("  NOT MET ") for t in targets] == [
        "SQLite, 1 process", "SQLite, 1 process", "SQLite, fairness on"], targets
    assert sum("of the batched bare loop" in t for t in targets) == 1, targets
    # 40 jobs of 10 tenants (4 each) with tenants taking turns and first come, first served:
    # with each tenant's jobs submitted together, the first ten claims serve every tenant only
    # when tenants take turns, and the first three tenants' backlogs otherwise.
    fairness = [line for line in done.stdout.splitlines() if "taking turns" in line and "jobs/s" in line]
    assert len(fairness) == 3, done.stdout
    by_tenant = [line for line in fairness if line.lstrip().startswith("by tenant")]
    assert len(by_tenant) == 1, fairness
    assert all(line.endswith("tenants in the first claims 10 / 3 of 10") for line in by_tenant), by_tenant
