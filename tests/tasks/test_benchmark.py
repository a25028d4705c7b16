"""``workerbench``'s tasks section keeps working: the same no-op tasks under both backends."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import PYTHON, ROOT

pytestmark = pytest.mark.slow


def test_workerbench_drains_tasks_under_the_queue_backend_and_django_tasks_db():
    # The tasks section alone at its smallest: the job drains, the fairness drains and the
    # peers are tests/bench/test_benchmark.py's (a default-sized fairness section here took
    # most of this test's 140 s).
    done = subprocess.run(
        [PYTHON, "manage.py", "workerbench", "--jobs", "10", "--processes", "1", "--rounds", "1", "--tenants", "0",
         "--no-peers", "--postgres", "", "--tasks", "60", "--task-rounds", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"CONN_MAX_AGE=(\d+) .*queue backend +(\d+) tasks/s +django-tasks-db +(\d+) tasks/s", done.stdout)
    assert [age for age, _, _ in rows] == ["0", "60"], done.stdout
    assert all(int(ours) > 0 and int(theirs) > 0 for _, ours, theirs in rows)
    assert "as shipped" in done.stdout and "both with persistent connections" in done.stdout
