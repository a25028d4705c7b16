"""A job row names the function a worker runs: the worker imports nothing a row names before the
task registry (and where the module lies) says it may, so a forged row runs no module's import
side effects either (``this.s`` printed the Zen of Python before it was refused)."""

from __future__ import annotations

import sys

import pytest

from jobs import queue
from jobs.models import Job
from jobs.tasks_backend.kind import KIND, TaskCall


def row_naming(function: str, user, clock) -> Job:
    return queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind=KIND, operation_key=function,
                        payload=TaskCall(function=function, args=[], kwargs={}).payload(), now=clock.now(),
                        offered_only=False).job


@pytest.fixture
def module_outside_the_project(tmp_path, monkeypatch):
    """An importable module (on sys.path, outside the project) that leaves a file when it is imported."""
    witness = tmp_path / "imported"
    (tmp_path / "docket_side_effect.py").write_text(f"open({str(witness)!r}, 'w').close()\ndef f(): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield witness
    sys.modules.pop("docket_side_effect", None)


def test_a_row_naming_a_module_outside_the_project_does_not_import_it(backend, worker, clock, alice,
                                                                      module_outside_the_project):
    job = row_naming("docket_side_effect.f", alice, clock)
    assert worker.run_one()
    job.refresh_from_db()
    assert (job.state, job.attempts) == ("dead", 1)
    assert job.last_error.startswith("task_not_found: 'docket_side_effect.f' is not a registered task")
    assert not module_outside_the_project.exists(), "the module was imported: its side effects ran"
    assert "docket_side_effect" not in sys.modules


def test_this_s_prints_nothing(backend, worker, clock, alice, capsys):
    if "this" in sys.modules:  # pragma: no cover - something else imported it first
        pytest.skip("the module this is imported in this process already")
    job = row_naming("this.s", alice, clock)
    assert worker.run_one()
    job.refresh_from_db()
    assert (job.state, job.last_error.partition(":")[0]) == ("dead", "task_not_found")
    assert "this" not in sys.modules
    assert "Beautiful is better than ugly" not in capsys.readouterr().out
