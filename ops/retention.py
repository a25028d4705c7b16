"""Retention: delete finished jobs past their keep time, in bounded batches.

Only ``completed`` and ``dead`` jobs go; ``unknown`` jobs wait for staff however old they
are, and live jobs are never touched. A job's events and its agent checkpoint go with it
(foreign keys with ``CASCADE``: this module does not need to know the agent), and so does
its stored document, with the page images kept beside it, once no remaining job names it and
nobody has stored it again for ``DOCUMENT_GRACE`` (acceptance stores or touches the file
before it commits the job row that names it, so a file touched just now may belong to a job
that is not visible yet). The idempotency key is a column of the job row, so it is kept
exactly as long as the job: a client retrying a key after its job was pruned gets a new job.

Stored files that no job names at all (an upload whose request then failed, a temporary file
left by a crash mid-write) are swept at the end of each run, past the same grace. The same
either way documents are kept (``documents.store``: files under MEDIA_ROOT, or objects
in a store every host reaches, whose last-modified time is the grace's clock).

Each batch is one short write transaction, so workers keep claiming between batches. The
batch's event counts are added to ``RetiredCount`` in the same transaction, so the
``/metrics`` counters never go down when events are deleted.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, F, QuerySet

from documents import store as document_store
from documents.models import Document
from jobs import queue
from jobs.models import Job, JobEvent, JobQuerySet

from .models import RetiredCount

# A stored file modified this recently is left alone: an acceptance may have just stored or
# touched it (``document_store._write_once``) and not yet committed the job that names it.
DOCUMENT_GRACE = timedelta(hours=1)


@dataclass
class Report:
    jobs: int = 0
    events: int = 0
    checkpoints: int = 0
    documents: int = 0
    strays: int = 0
    batches: int = 0
    deleted: Counter[str] = field(default_factory=Counter)


def prunable(*, older_than: timedelta, now: datetime) -> JobQuerySet:
    """Finished jobs (completed, dead) whose last change is older than ``older_than``."""
    return Job.objects.finished_before(now - older_than)


def prune(*, older_than: timedelta, now: datetime, batch: int = 500, dry_run: bool = False,
          say: Callable[[str], None] = lambda _: None) -> Report:
    """Delete what ``prunable`` selects, ``batch`` jobs per transaction; or count it (dry run)."""
    if batch < 1:
        raise ValueError("the batch size must be at least 1")
    if dry_run:
        return _estimate(older_than=older_than, now=now, batch=batch)
    report = Report()
    last_id = 0
    while True:
        ids = list(prunable(older_than=older_than, now=now).filter(pk__gt=last_id)
                   .order_by("pk").values_list("pk", flat=True)[:batch])
        if not ids:
            report.strays = sweep_strays(batch=batch)
            return report
        last_id = ids[-1]
        names = set(Document.objects.filter(job_id__in=ids).values_list("name", flat=True))
        deleted = queue.delete_finished(ids=ids, cutoff=now - older_than, retiring=_retire_counts)
        report.batches += 1
        report.deleted.update(deleted)
        report.jobs += deleted.get("jobs.Job", 0)
        report.events += deleted.get("jobs.JobEvent", 0)
        report.checkpoints += sum(n for label, n in deleted.items() if label.endswith(".Checkpoint"))
        report.documents += _delete_orphans(names)
        say(f"batch {report.batches}: {deleted.get('jobs.Job', 0)} job(s), "
            f"{deleted.get('jobs.JobEvent', 0)} event(s) deleted")


def _retire_counts(events: QuerySet[JobEvent]) -> None:
    """Add the counts of events about to be deleted to what ``/metrics`` reports."""
    rows = events.values("from_state", "to_state", "actor").annotate(n=Count("id"))
    tally: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        if row["to_state"]:
            tally[(RetiredCount.Metric.TRANSITIONS, row["from_state"], row["to_state"])] += row["n"]
        else:
            tally[(RetiredCount.Metric.STALE_REJECTIONS, "", "")] += row["n"]
        if row["actor"] == "recovery":
            tally[(RetiredCount.Metric.RECOVERIES, "", row["to_state"])] += row["n"]
    for (metric, from_state, to_state), n in tally.items():
        counted, _ = RetiredCount.objects.get_or_create(metric=metric, from_state=from_state, to_state=to_state)
        RetiredCount.objects.filter(pk=counted.pk).update(value=F("value") + n)


def _delete_orphans(names: set[str]) -> int:
    """Delete stored documents that no remaining job names (one document may serve many jobs).

    The file's age is checked last, just before the unlink, so an acceptance that touched it
    after the reference check is still seen.
    """
    still_used = set(Document.objects.filter(name__in=names).values_list("name", flat=True))
    removed = 0
    for name in sorted(names - still_used):
        if _settled(name):
            document_store.delete(name)  # and the page images kept beside it
            removed += 1
    return removed


def stray_documents(*, batch: int = 500, grace: bool = True) -> Iterator[str]:
    """Stored files (names, in the store) that no job names, past the grace unless
    ``grace=False``, ``batch`` names per reference check."""
    # <tenant>/<xx>/<digest>, and <xx>/<digest> from before documents were kept per tenant; a
    # page image (<digest>.pages/<n>.png) is its document's, kept while a job names that.
    cutoff = time.time() - DOCUMENT_GRACE.total_seconds()
    files = (name for name, touched in document_store.stored_names() if not grace or touched <= cutoff)
    while chunk := list(itertools.islice(files, batch)):
        owners = {name: document_store.owner(name) for name in chunk}
        named = set(Document.objects.filter(name__in=set(owners.values())).values_list("name", flat=True))
        yield from (name for name, owner in owners.items() if owner not in named)


def sweep_strays(*, batch: int = 500) -> int:
    """Delete what ``stray_documents`` finds, checking each file's age again just before."""
    removed = 0
    for name in stray_documents(batch=batch):
        if _settled(name):
            document_store.delete_file(name)
            removed += 1
    return removed


def _settled(name: str) -> bool:
    """The stored file exists and was not stored or touched within ``DOCUMENT_GRACE``.

    Wall-clock time, not the injectable clock: file (and object) times are the store's.
    """
    touched = document_store.modified(name)
    if touched is None:
        return False
    return time.time() - touched >= DOCUMENT_GRACE.total_seconds()


def _estimate(*, older_than: timedelta, now: datetime, batch: int) -> Report:
    candidates = prunable(older_than=older_than, now=now)
    jobs = candidates.count()
    names = set(Document.objects.filter(job__in=candidates).values_list("name", flat=True))
    kept = set(Document.objects.filter(name__in=names).exclude(job_id__in=candidates.values("pk"))
               .values_list("name", flat=True))
    return Report(
        jobs=jobs, events=JobEvent.objects.filter(job__in=candidates).count(),
        documents=sum(1 for name in names - kept if _settled(name)),
        strays=sum(1 for _ in stray_documents(batch=batch)),
        batches=-(-jobs // batch),
    )
