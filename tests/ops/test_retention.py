"""Retention: old completed and dead jobs go, with their events, checkpoints and orphan documents."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command

from documents import store as document_store
from jobs import queue
from jobs.models import Job, JobEvent
from ops import retention
from ops.models import RetiredCount

pytestmark = pytest.mark.django_db

MONTH = timedelta(days=30)


def with_document(in_state, state: str, content: bytes, *, stored_hours_ago: float = 2):
    """A job with a stored document whose file was written ``stored_hours_ago`` (wall clock)."""
    upload = document_store.Upload(content=content, name="invoice.txt", content_type="text/plain")
    job = in_state(state, document=upload)
    then = time.time() - stored_hours_ago * 3600
    os.utime(document_store.path(job.document.name), (then, then))
    return job


def test_old_completed_and_dead_jobs_go_with_their_events(in_state, clock):
    done, dead = in_state("completed"), in_state("dead")
    report = retention.prune(older_than=MONTH, now=clock.now() + MONTH + timedelta(days=1))
    assert (report.jobs, report.batches) == (2, 1)
    assert not Job.objects.filter(pk__in=[done.pk, dead.pk]).exists()
    assert not JobEvent.objects.filter(job_id__in=[done.pk, dead.pk]).exists()
    assert report.events == 6  # accepted, claimed, and completed/dead for each


def test_cancelled_jobs_are_kept_as_long_as_completed_ones(in_state, clock):
    cancelled = in_state("cancelled")
    assert retention.prune(older_than=MONTH, now=clock.now() + MONTH - timedelta(hours=1)).jobs == 0
    assert retention.prune(older_than=MONTH, now=clock.now() + MONTH + timedelta(days=1)).jobs == 1
    assert not Job.objects.filter(pk=cancelled.pk).exists()


def test_unknown_jobs_awaiting_staff_are_kept_however_old(in_state, clock):
    unknown = in_state("unknown")
    retention.prune(older_than=MONTH, now=clock.now() + 10 * MONTH)
    assert Job.objects.get(pk=unknown.pk).state == "unknown"
    assert JobEvent.objects.filter(job_id=unknown.pk).exists()


def test_recent_and_live_jobs_are_kept(in_state, clock):
    queued, leased = in_state("queued"), in_state("leased")
    in_state("completed")  # finished now: kept until it is a month old
    assert retention.prune(older_than=MONTH, now=clock.now() + MONTH - timedelta(hours=1)).jobs == 0
    retention.prune(older_than=MONTH, now=clock.now() + 10 * MONTH)
    assert set(Job.objects.values_list("pk", flat=True)) == {queued.pk, leased.pk}


def test_jobs_go_in_bounded_batches(in_state, clock):
    for _ in range(5):
        in_state("completed")
    report = retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH, batch=2)
    assert (report.jobs, report.batches) == (5, 3)
    assert not Job.objects.exists()


def test_a_document_goes_only_when_no_remaining_job_uses_it(in_state, clock):
    shared_old = with_document(in_state, "completed", b"shared invoice")
    orphan = with_document(in_state, "dead", b"only this job's invoice")
    clock.advance(days=40)
    still_used = with_document(in_state, "completed", b"shared invoice")  # same bytes: same stored file
    assert shared_old.document.name == still_used.document.name
    report = retention.prune(older_than=MONTH, now=clock.now())
    assert report.jobs == 2 and report.documents == 1
    assert not document_store.path(orphan.document.name).exists()
    assert document_store.path(still_used.document.name).exists()


def test_a_document_stored_again_just_now_is_kept_though_no_job_names_it_yet(in_state, clock):
    """An acceptance touches the file before it commits its job: pruning must not pull it away."""
    old = with_document(in_state, "completed", b"re-uploaded invoice")
    os.utime(document_store.path(old.document.name))  # the same bytes, accepted again a moment ago
    report = retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH)
    assert report.jobs == 1 and report.documents == 0
    assert document_store.path(old.document.name).exists()
    assert retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH, dry_run=True).documents == 0


def _stray(content: bytes, *, hours_ago: float, prefix: str = "7/"):
    """A stored file no job names, as an upload whose request failed after storing it leaves.

    ``prefix`` is the tenant's folder; "" is the layout from before documents were per tenant.
    """
    import hashlib

    digest = hashlib.sha256(content).hexdigest()
    target = document_store.path(f"{prefix}{digest[:2]}/{digest}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    then = time.time() - hours_ago * 3600
    os.utime(target, (then, then))
    return target


@pytest.mark.parametrize("prefix", ["7/", ""], ids=["per-tenant", "old-layout"])
def test_stored_files_no_job_names_are_swept_once_past_the_grace(in_state, clock, prefix):
    live = with_document(in_state, "queued", b"a live job's invoice")
    old_stray = _stray(b"an upload whose request then failed", hours_ago=2, prefix=prefix)
    new_stray = _stray(b"an upload being accepted right now", hours_ago=0, prefix=prefix)

    assert retention.prune(older_than=MONTH, now=clock.now(), dry_run=True).strays == 1
    assert old_stray.exists()
    report = retention.prune(older_than=MONTH, now=clock.now())

    assert report.strays == 1
    assert not old_stray.exists() and new_stray.exists()
    assert document_store.path(live.document.name).exists()


def test_the_agents_checkpoint_goes_with_its_job(in_state, clock):
    if not apps.is_installed("agent"):
        pytest.skip("the agent app is not installed")
    Checkpoint = apps.get_model("agent", "Checkpoint")
    job = in_state("completed")
    Checkpoint.objects.create(job_id=job.pk, updated_at=clock.now())
    report = retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH)
    assert report.checkpoints == 1
    assert not Checkpoint.objects.filter(job_id=job.pk).exists()


def test_a_dry_run_counts_and_deletes_nothing(in_state, clock):
    job = with_document(in_state, "completed", b"dry run invoice")
    report = retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH, dry_run=True)
    assert (report.jobs, report.events, report.documents) == (1, 3, 1)
    assert Job.objects.filter(pk=job.pk).exists() and document_store.path(job.document.name).exists()


def test_deleted_events_are_kept_as_counts_for_the_metrics(in_state, clock):
    in_state("completed")
    retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH)
    counted = {(r.metric, r.from_state, r.to_state): r.value for r in RetiredCount.objects.all()}
    assert counted[("transitions", "queued", "leased")] == 1
    assert counted[("transitions", "leased", "completed")] == 1


def test_the_idempotency_key_lives_exactly_as_long_as_its_job(accept, clock):
    job = accept("opstest.echo", {"text": "x"}, key="invoice-0142")
    c = queue.claim(now=clock.now(), worker="w")
    queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
    assert accept("opstest.echo", {"text": "x"}, key="invoice-0142").pk == job.pk  # same job while kept
    retention.prune(older_than=MONTH, now=clock.now() + 2 * MONTH)
    assert accept("opstest.echo", {"text": "x"}, key="invoice-0142").pk != job.pk  # a new job after pruning


def test_the_command_prunes_by_age_and_reports(in_state, clock, monkeypatch):
    from ops.management.commands import prunejobs

    in_state("completed")
    in_state("unknown")
    monkeypatch.setattr(prunejobs.queue_clock, "now", lambda: clock.now() + 2 * MONTH)
    out = StringIO()
    call_command("prunejobs", "--older-than", "30d", "--dry-run", stdout=out)
    assert "Would delete 1 job(s)" in out.getvalue() and Job.objects.count() == 2
    call_command("prunejobs", "--older-than", "30d", "--batch", "1", stdout=out)
    assert "Deleted 1 job(s), 3 event(s)" in out.getvalue()
    assert list(Job.objects.values_list("state", flat=True)) == ["unknown"]


def test_the_command_keeps_30_days_unless_told_otherwise(in_state, clock, monkeypatch):
    from ops.management.commands import prunejobs

    in_state("completed")
    out = StringIO()
    monkeypatch.setattr(prunejobs.queue_clock, "now", lambda: clock.now() + MONTH - timedelta(hours=1))
    call_command("prunejobs", "--dry-run", stdout=out)
    assert "Would delete 0 job(s)" in out.getvalue()
    monkeypatch.setattr(prunejobs.queue_clock, "now", lambda: clock.now() + MONTH + timedelta(hours=1))
    call_command("prunejobs", "--dry-run", stdout=out)
    assert "Would delete 1 job(s)" in out.getvalue()


def _with_pages(job, *, hours_ago: float = 2):
    """Page images kept beside ``job``'s document, written ``hours_ago`` (wall clock)."""
    assert document_store.store_page_images(job.document.name, [(b"\x89PNG one", 10, 14), (b"\x89PNG two", 10, 14)])
    then = time.time() - hours_ago * 3600
    for image in document_store.pages_dir(job.document.name).iterdir():
        os.utime(image, (then, then))
    return document_store.pages_dir(job.document.name)


def test_the_page_images_go_with_their_document_and_stay_while_a_job_names_it(in_state, clock):
    kept = with_document(in_state, "queued", b"a live job's invoice")
    kept_pages = _with_pages(kept)
    orphan = with_document(in_state, "dead", b"only this job's invoice")
    orphan_pages = _with_pages(orphan)
    clock.advance(days=40)
    report = retention.prune(older_than=MONTH, now=clock.now())
    assert report.documents == 1 and report.strays == 0  # the pages of a named document are not strays
    assert not document_store.path(orphan.document.name).exists() and not orphan_pages.exists()
    assert document_store.page_images(kept.document.name) and len(list(kept_pages.iterdir())) == 3
