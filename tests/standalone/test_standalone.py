"""The queue installed alone: a project whose path holds ``jobs`` and its own package only (no
``web``, ``agent``, ``ops`` or ``jobsite`` to import), with no ``JOBS`` setting, migrates, runs
its one ``@task`` on ``runworkers --burst``, keeps the fence, and shows the triage admin from the
app's own templates (``queueproject/contract.py`` says what each step checks)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

PROJECT = Path(__file__).resolve().parent / "queueproject"


def run(place: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(place), "PYTHONPATH": str(place),
           "DJANGO_SETTINGS_MODULE": "queueproject.settings", "QUEUEPROJECT_DATABASE": str(place / "db.sqlite3")}
    done = subprocess.run([sys.executable, *args], cwd=place, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_queue_runs_a_task_in_a_project_that_installs_it_alone(tmp_path):
    (tmp_path / "jobs").symlink_to(ROOT / "jobs", target_is_directory=True)
    shutil.copytree(PROJECT, tmp_path / "queueproject", ignore=shutil.ignore_patterns("__pycache__"))

    before = json.loads(run(tmp_path, "-m", "queueproject.contract", "before").splitlines()[-1])
    assert before["importable"] == [] and before["status"] == "READY"
    run(tmp_path, "-m", "django", "runworkers", "--burst", "--processes", "1")
    after = json.loads(run(tmp_path, "-m", "queueproject.contract", "after", before["result_id"]).splitlines()[-1])

    assert after["importable"] == []
    assert (after["status"], after["return_value"]) == ("SUCCESSFUL", 5)
    assert after["fenced_job"] and after["requeued"] and after["epochs"] == [1, 2]
    assert after["stale_applied"] is False and after["current_applied"] is True
    assert after["defaults"] and after["document_pane"]  # no JOBS: the defaults; no product: no pane
    assert after["admin"] == {"statuses": 3, "landing": True, "counts": True, "timeline": True,
                              "no_submitters_page": True}
