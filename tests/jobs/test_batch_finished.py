"""``queue.batch_finished``: heard inside the transaction in which a batch's last live job ended
without completing, once per such end, whichever path ended it; on PostgreSQL also when two
transactions end its last two jobs at the same moment."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction

from jobs import queue
from jobs.queue import events as queue_events
from tests.conftest import drive_to


@pytest.fixture
def heard():
    calls: list[tuple[int, str]] = []

    def listener(sender, *, scope_id, batch, now, **kwargs):
        calls.append((scope_id, batch))

    queue.batch_finished.connect(listener, dispatch_uid="test-batch-finished")
    yield calls
    queue.batch_finished.disconnect(dispatch_uid="test-batch-finished")


def test_the_last_live_job_cancelled_or_dead_finishes_the_batch_once(accept, clock, alice, heard):
    cancelled, failed, done = (accept(batch="b-1") for _ in range(3))
    accept(batch="")  # alone: no batch to finish
    drive_to(done, "completed", now=clock.now())  # a completion is its kind's to follow up: not heard
    drive_to(cancelled, "cancelled", now=clock.now())
    assert heard == []  # one still waits
    drive_to(failed, "dead", now=clock.now())
    assert heard == [(alice.tenant_id, "b-1")]
    queue.cancel(job_id=cancelled.pk, actor="user:test", reason="", now=clock.now())  # already cancelled
    assert heard == [(alice.tenant_id, "b-1")]


def test_recovery_finishing_a_batch_announces_it(accept, clock, alice, heard):
    for _ in range(2):
        accept(batch="b-2", deadline=timedelta(minutes=1))
    clock.advance(minutes=2)
    assert len(queue.recover(now=clock.now()).dead) == 2
    assert heard == [(alice.tenant_id, "b-2")]


def test_a_rolled_back_end_announces_what_rolls_back_with_it(accept, clock, alice, heard):
    job = accept(batch="b-3")
    with pytest.raises(RuntimeError), transaction.atomic():
        drive_to(job, "cancelled", now=clock.now())
        assert heard == [(alice.tenant_id, "b-3")]  # heard inside the transaction, before any commit
        raise RuntimeError("rolled back")
    job.refresh_from_db()
    assert job.state == "queued"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="SQLite's write lock lets one transaction write at a time")
def test_two_transactions_ending_the_last_two_jobs_at_once_announce_the_batch(accept, clock, alice, heard,
                                                                              monkeypatch):
    jobs = [accept(batch="b-race") for _ in range(2)]
    both_written = threading.Barrier(2, timeout=20)
    left_live = queue_events.left_live

    def after_both_wrote(job_ids, now):  # each cancel written, neither committed
        both_written.wait()
        left_live(job_ids, now)

    monkeypatch.setattr(queue_events, "left_live", after_both_wrote)
    errors: list[BaseException] = []

    def cancel(job_id: int) -> None:
        try:
            assert queue.cancel(job_id=job_id, actor="user:test", reason="", now=clock.now()).state == "cancelled"
        except BaseException as exc:  # noqa: BLE001  reported by the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=cancel, args=(job.pk,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors and heard == [(alice.tenant_id, "b-race")]
