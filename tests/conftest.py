"""Fixtures: a logical clock, tenants and members as factories, accepted jobs."""

from __future__ import annotations

import itertools
import os
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from accounts.members import create_member
from documents import acceptance
from jobs import queue
from jobs.clock import LogicalClock
from jobs.queue import lateness

# The object store fixtures (SeaweedFS on loopback): ``seaweed``, ``object_store``.
pytest_plugins = ["tests.objectstore"]

ROOT = Path(__file__).resolve().parent.parent
_names = itertools.count(1)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Each test process makes its test database's tables from the models (``TEST["MIGRATE"]``
    off), not by replaying every migration: a tenth of the CPU. The schema is the same
    (``makemigrations --check``; tests/ops/test_throwaway.py compares it with a migrated file)."""
    from django.conf import settings

    for database in settings.DATABASES.values():
        database.setdefault("TEST", {})["MIGRATE"] = False


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """...and every migration is then recorded as applied, as ``migrate`` would leave it: what reads
    the history (``accounts``' migrate, the migration tests) finds a migrated database."""
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    with django_db_blocker.unblock():
        recorder = MigrationRecorder(connection)
        recorder.ensure_schema()
        recorder.migration_qs.bulk_create(
            [recorder.Migration(app=app, name=name) for app, name in MigrationLoader(None).graph.nodes])


@pytest.fixture
def clock() -> LogicalClock:
    return LogicalClock()


@pytest.fixture
def make_member(db):
    def make(tenant: str = "acme", username: str | None = None, **kwargs):
        user, _ = create_member(username=username or f"user{next(_names)}", tenant_slug=tenant, **kwargs)
        return user

    return make


@pytest.fixture
def alice(make_member):
    return make_member("acme", "alice", password="alice-pass-123")


@pytest.fixture
def bob(make_member):
    return make_member("globex", "bob", password="bob-pass-123")


@pytest.fixture
def accept(clock, alice):
    """Accept a job as alice (or another member) on the logical clock."""

    def accept_(kind: str = "diagnostic.sleep", payload: dict | None = None, *, user=None,
                key: str | None = None, **kwargs):
        user = user or alice
        return acceptance.accept(
            scope_id=user.tenant_id, user_id=user.pk, kind=kind, payload=payload or {},
            operation_key=key or f"op-{next(_names)}", now=kwargs.pop("now", clock.now()),
            offered_only=False, **kwargs,
        ).job

    return accept_


def database_url() -> str:
    """A DATABASE_URL for child processes: the test database this run created."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    user = s.get("USER") or "postgres"
    return f"postgresql://{user}@{host}:{port}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a process a test starts: this test's database and document store."""
    from django.conf import settings

    env = dict(os.environ)
    env.update(DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="jobsite.settings", PYTHONPATH=str(ROOT),
               MEDIA_ROOT=str(settings.MEDIA_ROOT))
    env.update(extra)
    return env


PYTHON = sys.executable


def processes_together(*argvs: list[str]) -> list[str]:
    """What each ``tests.procs`` command line printed, each run in a process of its own on this
    test's database, all forked from one that set Django up once (``tests.procs.together``)."""
    import json
    import subprocess

    done = subprocess.run([PYTHON, "-m", "tests.procs", "together", json.dumps(argvs)], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "database is locked" not in done.stderr
    outputs: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    assert not any("database is locked" in out for out in outputs)
    return outputs


def wait_for(predicate, timeout: float = 20.0, every: float = 0.02):
    """Poll until ``predicate()`` is truthy and return it; fail after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"not true within {timeout} s: {predicate}")


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Every test stores documents in its own folder, never in the project's var/."""
    settings.MEDIA_ROOT = tmp_path / "documents"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _handlers_in_process(settings):
    """Workers driven in-process run every handler in-process: a sandbox forked from the test
    would neither see the test's uncommitted rows nor its logical clock. Tests of isolation
    turn it back on; worker processes started by tests isolate as in production."""
    settings.JOBS = {**settings.JOBS, "ISOLATE_HANDLERS": False, "EXPECTED_WAIT_SECONDS": LATE_NEVER}
    lateness.forget()


# The tests' jobs are stamped on a logical clock months behind the pages' own clock: no queue is
# late (jobs.queue.lateness) unless a test of lateness sets EXPECTED_WAIT_SECONDS itself.
LATE_NEVER = 10 * 365 * 24 * 3600


@pytest.fixture
def register_kind():
    """Register kinds for one test, with the documents each takes (``documents``: its
    ``DocumentRules``, else none); each is removed again when the test ends."""
    from contextlib import ExitStack

    from documents import rules
    from jobs import kinds

    with ExitStack() as stack:

        def register(kind, documents=None):
            if documents is not None:
                stack.enter_context(rules.RULES.registered(kind.name, documents))
            return stack.enter_context(kinds.registered(kind))

        yield register


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Members are made in almost every test; the production hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def claim_first(job, *, now, worker: str = "w1", lease=None):
    """Claim ``job``, whatever else the test queued: its turn is made the first.

    The fair claim would otherwise serve another tenant's (or an older) job before it.
    """
    from datetime import timedelta

    from django.db.models import Min

    from jobs.models import Job

    head = Job.objects.filter(state="queued", turn__isnull=False).aggregate(turn=Min("turn"))["turn"] or 0
    Job.objects.filter(pk=job.pk).update(turn=head - 1, priority=32767)
    try:
        c = queue.claim(now=now, worker=worker, lease=lease or timedelta(seconds=30))
    finally:
        Job.objects.filter(pk=job.pk).update(priority=0)
    assert c is not None and c.job_id == job.pk
    return c


def drive_to(job, state: str, *, now):
    """Drive an accepted job with the real queue operations into ``state`` and return it.

    Its turn comes first, whatever else the test queued (the fair claim would otherwise
    serve another tenant's job before it).
    """
    from jobs.models import Job

    if state == Job.State.CANCELLED:
        assert queue.cancel(job_id=job.pk, actor="user:test", reason="", now=now).state == "cancelled"
    elif state != Job.State.QUEUED:
        c = claim_first(job, now=now)
        if state == Job.State.COMPLETED:
            assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"ok": 1}, now=now)
        elif state == Job.State.DEAD:
            assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom: handler failed", code="boom", now=now,
                              retryable=False).state == "dead"
        elif state == Job.State.UNKNOWN:
            assert queue.mark_external_start(job_id=c.job_id, epoch=c.epoch, now=now)
            assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="provider timed out", code="handler_error",
                              now=now).state == "unknown"
    job.refresh_from_db()
    assert job.state == state
    return job




# Checks that are the same whatever DATABASE_URL says: browsers and nginx in front of the same
# views, and benchmark smoke runs; and, in the readers' folders, every test that asks for no
# database at all.
_ONCE = ("tests/browser/", "tests/deploy/test_nginx.py", "tests/tasks/test_benchmark.py",
         "tests/bench/test_loadbench.py")
# Benchmark smoke runs that make their own SQLite files whatever DATABASE_URL says, and keep a core
# busy for a minute or more (and one reader's run that needs no store at all): CI runs them once, in
# the PostgreSQL pass, whose longest unit (the partition tests) mostly waits, rather than in the
# SQLite pass, which keeps both cores busy.
_LATE = ("tests/bench/test_workerbench.py", "tests/bench/test_benchmark.py::test_queuebench_drains",
         "tests/bench/test_storebench.py",
         # ...and the reader over every real invoice, scans among them: two minutes of OCR on one core.
         "tests/agent/test_real_invoices.py")
# The lease lab and the queue installed alone (tests/standalone) make their own SQLite files
# whatever DATABASE_URL says; the layout, the settings' validation and the log format never reach
# a store; the deployment's settings checks and bin/demo's usage set a DATABASE_URL of their own
# or none.
_ONCE_WITHOUT_DATABASE = ("tests/agent/", "tests/corpus/", "tests/deploy/", "tests/docs/",
                          "tests/fuzz/test_documents.py", "tests/ops/test_capacity.py", "tests/bench/test_layout.py",
                          "tests/ops/test_lab.py", "tests/ops/test_throwaway.py", "tests/test_layout.py",
                          "tests/jobs/test_conf.py", "tests/jobs/test_logs.py", "tests/standalone/")
_DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_setup"}


def pytest_collection_modifyitems(config, items):
    """Mark ``once`` the checks that are the same on either store, and ``late`` the long ones of them.

    CI's PostgreSQL pass runs ``-m "not once"``: it repeats what depends on the database and
    leaves the rest to the SQLite pass, which in turn leaves the ``late`` ones to it. A test uses
    the database when it (or a fixture it uses) asks for one of Django's database fixtures or
    carries ``django_db``.
    """
    for item in items:
        uses_database = item.get_closest_marker("django_db") is not None or bool(
            _DATABASE_FIXTURES & set(item.fixturenames))
        if item.nodeid.startswith(_LATE):
            item.add_marker(pytest.mark.late)
        elif item.nodeid.startswith(_ONCE) or (item.nodeid.startswith(_ONCE_WITHOUT_DATABASE) and not uses_database):
            item.add_marker(pytest.mark.once)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the partition and fuzz folders kept whole and the longest units first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.parallel import ModulesLongestFirst

    return ModulesLongestFirst(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    from tests import parallel

    parallel.received(node.config, getattr(node, "workeroutput", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from tests import parallel

    parallel.print_sections(terminalreporter)


def name_document(job_id: int, original_name: str, **fields) -> None:
    """Give a test's job a document row called ``original_name`` (its other ``fields`` too), made if
    it has none: the name is what lists, searches and messages show. An empty name: no document."""
    from documents.models import Document

    if not original_name:
        Document.objects.filter(job_id=job_id).delete()
        return
    Document.objects.update_or_create(job_id=job_id, defaults={
        "original_name": original_name, **fields}, create_defaults={
        "name": f"0/00/{job_id}", "size": 0, "sha256": "", "original_name": original_name, **fields})
