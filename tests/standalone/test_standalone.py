"""The queue installed alone: its distribution (``packages/docket-queue``) is built into a wheel,
and a project whose path holds that wheel's files and its own package only (no ``web``, ``agent``,
``ops`` or ``jobsite`` to import, nor the optional extras' libraries), with no ``JOBS`` setting,
migrates, runs its one ``@task`` on ``runworkers --burst``, keeps the fence, and shows the triage
admin from the app's own templates (``queueproject/contract.py`` says what each step checks). A
file the wheel leaves out, or a library ``jobs`` imports that it does not declare, fails here."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_layout import imported_packages

PROJECT = Path(__file__).resolve().parent / "queueproject"
DISTRIBUTION = ROOT / "packages" / "docket-queue"


def run(place: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(place), "PYTHONPATH": str(place),
           "DJANGO_SETTINGS_MODULE": "queueproject.settings", "QUEUEPROJECT_DATABASE": str(place / "db.sqlite3")}
    done = subprocess.run([sys.executable, *args], cwd=place, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """The queue's wheel, built offline by the backend its pyproject.toml names (PEP 517, in a child
    whose working directory is the distribution's folder): about 0.3 s."""
    with (DISTRIBUTION / "pyproject.toml").open("rb") as file:
        backend = tomllib.load(file)["build-system"]["build-backend"]
    into = tmp_path_factory.mktemp("wheel")
    build = "import importlib, sys; print(importlib.import_module(sys.argv[1]).build_wheel(sys.argv[2]))"
    done = subprocess.run([sys.executable, "-c", build, backend, str(into)], cwd=DISTRIBUTION,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    with zipfile.ZipFile(into / done.stdout.splitlines()[-1]) as archive:
        yield archive


def requirements(archive: zipfile.ZipFile) -> dict[str, str | None]:
    """Each distribution the wheel requires (normalised name) and the extra that asks for it, if any."""
    metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    found = {}
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist: "):
            name = re.match(r"[A-Za-z0-9._-]+", line.removeprefix("Requires-Dist: ")).group()
            extra = re.search(r"extra == ['\"]([^'\"]+)['\"]", line)
            found[normalise(name)] = extra and extra.group(1)
    return found


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def third_party_imports() -> dict[str, str]:
    """Each top-level module ``jobs`` imports from outside itself and the standard library, with the
    distribution it comes from."""
    modules = set().union(*(imported_packages(path) for path in (ROOT / "jobs").rglob("*.py")))
    modules -= {"jobs", "__future__", *sys.stdlib_module_names}
    owners = importlib.metadata.packages_distributions()
    return {module: normalise(owners[module][0]) for module in sorted(modules)}


def test_the_wheel_holds_the_app_whole_and_nothing_else(wheel):
    source = {path.relative_to(ROOT).as_posix() for path in (ROOT / "jobs").rglob("*")
              if path.is_file() and "__pycache__" not in path.parts}
    shipped = {name for name in wheel.namelist() if not name.startswith("docket_queue-")}
    assert shipped == source  # .py, migrations, templates, static, templatetags, the command, py.typed
    assert {name.split("/")[0] for name in wheel.namelist()} == {"jobs", "docket_queue-0.1.0.dist-info"}


def test_the_wheel_requires_what_the_app_imports_and_no_more(wheel):
    imports = third_party_imports()
    assert set(requirements(wheel)) == set(imports.values())
    # Django, its Tasks framework and jsonschema always; psycopg only with PostgreSQL, so an extra.
    # (Documents and their object store are the documents app's, not the queue's.)
    assert {name for name, extra in requirements(wheel).items() if extra is None} == {
        "django", "django-tasks", "jsonschema"}


def test_the_queue_runs_a_task_in_a_project_that_installs_it_alone(wheel, tmp_path):
    wheel.extractall(tmp_path)
    shutil.copytree(PROJECT, tmp_path / "queueproject", ignore=shutil.ignore_patterns("__pycache__"))
    # The extras' libraries are on this virtualenv's path; on the project's they fail to import,
    # as where only the required dependencies are installed.
    for module, distribution in third_party_imports().items():
        if requirements(wheel)[distribution] is not None:
            (tmp_path / module).mkdir()
            (tmp_path / module / "__init__.py").write_text(f"raise ImportError('{distribution} is not installed')\n")

    before = json.loads(run(tmp_path, "-m", "queueproject.contract", "before").splitlines()[-1])
    assert before["importable"] == [] and before["status"] == "READY"
    # The queue's own tables and no others: none left from the users, tokens and providers' budget
    # its first migrations once made (jobs/migrations/0014).
    assert before["queue_tables"] == ["jobs_job", "jobs_jobevent", "jobs_kindslot", "jobs_tenant"]
    run(tmp_path, "-m", "django", "runworkers", "--burst", "--processes", "1")
    after = json.loads(run(tmp_path, "-m", "queueproject.contract", "after", before["result_id"]).splitlines()[-1])

    assert after["importable"] == [] and after["app"] == str(tmp_path / "jobs")  # the wheel's copy
    assert (after["status"], after["return_value"]) == ("SUCCESSFUL", 5)
    assert after["fenced_job"] and after["requeued"] and after["epochs"] == [1, 2]
    assert after["stale_applied"] is False and after["current_applied"] is True
    assert after["defaults"] and after["document_pane"]  # no JOBS: the defaults; no product: no pane
    assert after["admin"] == {"statuses": 3, "landing": True, "counts": True, "timeline": True,
                              "no_submitters_page": True}
