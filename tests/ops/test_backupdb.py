"""``manage.py backupdb PATH``: a copy taken while jobs are accepted and run holds every job
accepted before it began; a plain file copy of SQLite need not."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from jobs.models import Job
from tests.conftest import PYTHON, ROOT, child_env, wait_for

pytestmark = pytest.mark.slow


class Load:
    """runworkers and a process accepting jobs one after another, against the test database."""

    def __init__(self, tmp_path: Path, tenant_id: int, user_id: int) -> None:
        self.accepted: list[int] = []
        self._log = (tmp_path / "runworkers.log").open("wb")
        self.workers = subprocess.Popen(
            [PYTHON, "manage.py", "runworkers", "--processes", "1", "--lease", "5", "--poll-interval", "0.2"],
            cwd=ROOT, env=child_env(), stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self.acceptor = subprocess.Popen(
            [PYTHON, "-m", "tests.ops.accept_loop", str(tenant_id), str(user_id)],
            cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, text=True, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.acceptor.stdout:
            self.accepted.append(int(line))

    def stop(self) -> None:
        for proc in (self.acceptor, self.workers):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        self._reader.join(timeout=5)
        self._log.close()


@pytest.fixture
def load(transactional_db, alice, tmp_path):
    started: list[Load] = []

    def start() -> Load:
        started.append(Load(tmp_path, alice.tenant_id, alice.pk))
        return started[-1]

    yield start
    for running in started:
        running.stop()


def ids_in(copy: Path) -> set[int]:
    """The job ids a copy holds (a SQLite file, or a pg_dump archive read back by pg_restore)."""
    if connection.vendor == "sqlite":
        with sqlite3.connect(copy) as db:
            return {row[0] for row in db.execute(f"SELECT id FROM {Job._meta.db_table}")}
    dumped = subprocess.run(["pg_restore", "--data-only", f"--table={Job._meta.db_table}", "--file=-", str(copy)],
                            capture_output=True, text=True, timeout=120, check=True).stdout
    rows = dumped.split(f"COPY public.{Job._meta.db_table} ", 1)[1].split("\n\\.\n", 1)[0].splitlines()[1:]
    return {int(line.split("\t", 1)[0]) for line in rows}


def backupdb(path: Path) -> str:
    out = io.StringIO()
    call_command("backupdb", str(path), stdout=out)
    return out.getvalue()


def test_a_backup_taken_under_load_holds_every_job_accepted_before_it_began(load, tmp_path):
    running = load()
    wait_for(lambda: len(running.accepted) >= 50, timeout=60)
    wait_for(lambda: Job.objects.filter(state="completed").exists(), timeout=30)  # the workers are at it
    before = set(running.accepted)  # each printed after its commit
    said = backupdb(tmp_path / "copy")
    wait_for(lambda: len(running.accepted) >= len(before) + 20, timeout=30)  # accepting went on throughout

    held = ids_in(tmp_path / "copy")
    assert before <= held
    reported = int(re.match(r"Backed up (\d+) job\(s\)", said).group(1))
    assert reported == len(held)
    assert not list(tmp_path.glob(".copy.partial-*"))


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="the write-ahead log of SQLite")
def test_a_plain_copy_of_the_sqlite_file_misses_jobs_still_in_the_wal_while_the_backup_has_them(load, tmp_path):
    database = Path(connection.settings_dict["NAME"])
    # Everything so far (the test database's tables, made moments ago) folded into the file, so
    # that a copy of it has the tables and only what commits from here on is missing.
    with contextlib.closing(sqlite3.connect(database)) as folding:
        busy, _, _ = folding.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0
    # A long read (a report, say) holds checkpoints back: what commits after it began stays
    # in the -wal file, where a copy of the database file alone never looks.
    reader = sqlite3.connect(database)
    try:
        reader.execute("BEGIN")
        reader.execute(f"SELECT count(*) FROM {Job._meta.db_table}").fetchone()
        running = load()
        wait_for(lambda: len(running.accepted) >= 50, timeout=60)
        before = set(running.accepted)
        shutil.copyfile(database, tmp_path / "cp.sqlite3")  # what `cp db.sqlite3` does
        backupdb(tmp_path / "copy")
    finally:
        reader.close()

    assert before - ids_in(tmp_path / "cp.sqlite3"), "the plain copy unexpectedly held every accepted job"
    assert before <= ids_in(tmp_path / "copy")


def test_a_backup_never_overwrites_and_names_what_is_wrong(db, tmp_path):
    existing = tmp_path / "old-backup"
    existing.write_text("an earlier backup")
    with pytest.raises(CommandError, match="already exists"):
        call_command("backupdb", str(existing))
    assert existing.read_text() == "an earlier backup"
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("backupdb", str(tmp_path / "missing" / "copy"))
    assert [p.name for p in tmp_path.iterdir() if p.name != "documents"] == ["old-backup"]  # no partial file
