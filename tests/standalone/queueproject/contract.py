"""The queue's contract, checked from inside the project that installs it alone.

``python -m queueproject.contract before``: the product's packages cannot be imported, the
app's migrations describe its models whole, the database is migrated, and one task is enqueued
(its result id is printed). ``runworkers --burst`` runs it. ``python -m queueproject.contract
after ID``: the task's result is its return value, a claim is fenced (a stale epoch's completion
is refused, the current one's applies), and the triage admin renders from the app's own
templates. Each step prints one JSON line the test reads, with where ``jobs`` was imported from.
"""

import importlib.util
import json
import sys
from datetime import timedelta
from pathlib import Path

import django

PRODUCT = ("accounts", "providers", "web", "agent", "ops", "jobsite", "suppliers", "mailin", "bench", "tests")


def before() -> dict[str, object]:
    from django.core.management import call_command
    from queueproject.tasks import add

    # The shipped migrations describe the shipped models whole: a migration left out is a change to
    # make, which makemigrations names (on standard error, which the test shows) and exits 1.
    call_command("makemigrations", "jobs", check=True, dry_run=True, interactive=False, stdout=sys.stderr)
    call_command("migrate", verbosity=0)
    from django.db import connection

    result = add.enqueue(2, 3)
    return {"result_id": result.id, "status": str(result.status),
            "queue_tables": sorted(t for t in connection.introspection.table_names() if t.startswith("jobs_"))}


def after(result_id: str) -> dict[str, object]:
    from django.utils import timezone
    from queueproject.tasks import add

    from jobs import queue
    from jobs.admin import kind_triage
    from jobs.conf import DEFAULTS, build, queue_settings

    done = add.get_result(result_id)
    fenced = add.enqueue(1, 1)
    now = timezone.now()
    first = queue.claim(now=now, worker="first", lease=timedelta(seconds=5))
    later = now + timedelta(seconds=10)
    requeued = queue.recover(now=later).requeued
    second = queue.claim(now=later, worker="second", lease=timedelta(seconds=5))
    assert first is not None and second is not None and first.job_id == second.job_id
    stale = queue.complete(job_id=first.job_id, epoch=first.epoch, result={"by": "first"}, now=later)
    current = queue.complete(job_id=second.job_id, epoch=second.epoch, result={"by": "second"}, now=later)
    return {
        "status": str(done.status), "return_value": done.return_value,
        "fenced_job": first.job_id == int(fenced.id), "requeued": requeued == [first.job_id],
        "epochs": [first.epoch, second.epoch], "stale_applied": stale.applied, "current_applied": current.applied,
        "defaults": queue_settings() == build(DEFAULTS),
        "document_pane": kind_triage.document_pane() is kind_triage.NO_DOCUMENT_PANE,
        "admin": admin_pages(first.job_id),
    }


def admin_pages(job_id: int) -> dict[str, int | bool]:
    """The staff landing, the triage list and a job's page, as a superuser sees them."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("staff", password=None))
    index = client.get("/admin/")
    listing = client.get("/admin/jobs/job/")
    page = client.get(f"/admin/jobs/job/{job_id}/change/")
    return {"statuses": sum(r.status_code == 200 for r in (index, listing, page)),
            "landing": b'id="staff-landing"' in index.content, "counts": b'class="triage-counts"' in listing.content,
            "timeline": b'class="job-timeline"' in page.content,
            "no_submitters_page": b"this site has no submitters&#x27; pages" in page.content}


def main() -> None:
    importable = [name for name in PRODUCT if importlib.util.find_spec(name) is not None]
    django.setup()
    step = before() if sys.argv[1] == "before" else after(sys.argv[2])
    app = importlib.util.find_spec("jobs")
    assert app is not None and app.origin is not None
    print(json.dumps({"importable": importable, "app": str(Path(app.origin).parent), **step}))


if __name__ == "__main__":
    main()
