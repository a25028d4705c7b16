"""Email notifications: a member's digest (batches finished, documents needing her action) and
triage staff's alert when jobs start needing a human. Sent by queue jobs on the logical clock;
Django's locmem backend keeps what was sent in ``mail.outbox``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.urls import reverse

from agent.inbox import notifications
from agent.models import NotificationPreference, TriageAlert
from jobs import kinds, queue
from jobs.context import JobContext
from jobs.models import Job
from tests.conftest import claim_first, drive_to, name_document

SITE = "https://docket.example"


@pytest.fixture(autouse=True)
def _mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SITE_URL = SITE
    settings.NOTIFY = {"DIGEST_MINUTES": 15, "SETTLE_SECONDS": 60}


@pytest.fixture
def member(make_member):
    def make(tenant: str, username: str, **kwargs):
        user = make_member(tenant, username, **kwargs)
        user.email = f"{username}@{tenant}.example"
        user.save(update_fields=["email"])
        return user

    return make


def notify_jobs(kind: str = notifications.DIGEST):
    return Job.objects.filter(kind=kind)


def run_due(clock) -> list[dict]:
    """Run every notification job due at the clock's time, as a worker would: claim, handler, complete."""
    results = []
    while True:
        due = Job.objects.filter(kind__in=[notifications.DIGEST, notifications.TRIAGE], state=Job.State.QUEUED,
                                 available_at__lte=clock.now()).order_by("available_at", "pk").first()
        if due is None:
            return results
        claim = claim_first(due, now=clock.now())
        assert queue.start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
        result = kinds.get(due.kind).handler(JobContext(claim, clock=clock))
        assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result=result, now=clock.now())
        results.append(result)


def finish(accept, clock, user, state: str = "completed", *, needs_action: bool = False, batch: str = "",
           name: str = ""):
    """A job of ``user``'s finished in ``state`` now, reading as needing her action or not."""
    job = drive_to(accept(user=user, batch=batch), state, now=clock.now())
    Job.objects.filter(pk=job.pk).update(needs_action=needs_action,
                                         outcome_text="2 to correct" if needs_action else "OK")
    name_document(job.pk, name)
    return job


def test_batch_finished_sends_one_email_to_its_submitter(clock, accept, member):
    amy = member("acme", "amy")
    jobs = [accept(user=amy, batch="march") for _ in range(3)]
    notifications.schedule(user_id=amy.pk, now=clock.now())  # as her first review does when it starts
    clock.advance(seconds=1)  # the review takes a moment
    drive_to(jobs[0], "completed", now=clock.now())
    drive_to(jobs[1], "dead", now=clock.now())
    clock.advance(minutes=1)
    assert run_due(clock) == [{"sent": False, "why": "nothing new"}]  # one still under way: watch on
    assert mail.outbox == []
    drive_to(jobs[2], "completed", now=clock.now())
    clock.advance(minutes=1)
    run_due(clock)
    assert len(mail.outbox) == 1
    email = mail.outbox[0]
    assert email.to == ["amy@acme.example"]
    assert "Batch march of 3 document(s): Finished: 2 done, 1 failed." in email.body  # the batch page's words
    assert f"{SITE}{reverse('batch_detail', args=['march'])}" in email.body
    clock.advance(hours=2)
    notifications.schedule(user_id=amy.pk, now=clock.now())
    clock.advance(minutes=1)
    run_due(clock)
    assert len(mail.outbox) == 1  # told once: nothing new since
    assert not notify_jobs().filter(state=Job.State.QUEUED).exists()  # nothing under way: no more digests


def test_three_documents_within_the_window_make_one_digest(clock, accept, member):
    amy = member("acme", "amy")
    notifications.schedule(user_id=amy.pk, now=clock.now())
    clock.advance(seconds=1)  # the review takes a moment after it starts
    finish(accept, clock, amy, needs_action=True, name="first.pdf")
    clock.advance(minutes=1)
    run_due(clock)
    assert len(mail.outbox) == 1 and "first.pdf" in mail.outbox[0].body
    sent_at = clock.now()
    for minute, name in ((1, "a.pdf"), (4, "b.pdf"), (8, "c.pdf")):  # each review schedules as it starts
        clock.advance(minutes=minute)
        notifications.schedule(user_id=amy.pk, now=clock.now())
        finish(accept, clock, amy, needs_action=True, name=name)
        finish(accept, clock, amy, needs_action=False, name=f"fine-{name}")  # OK: not listed
        run_due(clock)
        assert len(mail.outbox) == 1  # within her 15 minutes: nothing yet
    clock.advance(seconds=(sent_at + timedelta(minutes=15) - clock.now()).total_seconds())
    run_due(clock)
    assert len(mail.outbox) == 2
    body = mail.outbox[1].body
    assert "3 documents need your action" in mail.outbox[1].subject
    assert [name for name in ("a.pdf", "b.pdf", "c.pdf", "first.pdf", "fine-") if name in body] == \
        ["a.pdf", "b.pdf", "c.pdf"]
    job = Job.objects.get(document__original_name="b.pdf")
    assert f"{SITE}{reverse('job_detail', args=[job.pk])}" in body
    assert f"{SITE}{reverse('notification_settings')}" in body


def test_the_window_is_each_members_own(clock, accept, member):
    amy, cara = member("acme", "amy"), member("acme", "cara")
    preference = notifications.preference(cara.pk, now=clock.now())
    preference.every_minutes = 60
    preference.save()
    for user in (amy, cara):
        notifications.schedule(user_id=user.pk, now=clock.now())
    clock.advance(seconds=1)
    for user in (amy, cara):
        finish(accept, clock, user, needs_action=True, name=f"{user.username}-1.pdf")
    clock.advance(minutes=1)
    run_due(clock)
    assert sorted(m.to[0] for m in mail.outbox) == ["amy@acme.example", "cara@acme.example"]
    clock.advance(minutes=1)
    for user in (amy, cara):
        notifications.schedule(user_id=user.pk, now=clock.now())
        finish(accept, clock, user, needs_action=True, name=f"{user.username}-2.pdf")
    clock.advance(minutes=15)
    run_due(clock)
    assert [m.to[0] for m in mail.outbox[2:]] == ["amy@acme.example"]  # her 15 minutes are over
    clock.advance(minutes=30)
    run_due(clock)
    assert len(mail.outbox) == 3  # cara's hour is not
    clock.advance(minutes=14)
    run_due(clock)
    assert [m.to[0] for m in mail.outbox[3:]] == ["cara@acme.example"]
    assert "cara-2.pdf" in mail.outbox[3].body and "cara-1.pdf" not in mail.outbox[3].body


def test_turned_off_sends_nothing(clock, accept, member):
    amy = member("acme", "amy")
    notifications.preference_update(user_id=amy.pk, enabled=False, every_minutes=15, now=clock.now())
    assert notifications.schedule(user_id=amy.pk, now=clock.now()) is None
    finish(accept, clock, amy, needs_action=True, name="a.pdf", batch="b1")
    clock.advance(minutes=1)
    # A digest queued before she turned them off finds them off when it runs.
    NotificationPreference.objects.filter(pk=amy.pk).update(enabled=True)
    notifications.schedule(user_id=amy.pk, now=clock.now())
    NotificationPreference.objects.filter(pk=amy.pk).update(enabled=False)
    clock.advance(minutes=1)
    assert run_due(clock) == [{"sent": False, "why": "turned off"}]
    assert mail.outbox == []


def test_a_member_is_told_only_of_her_own_tenants_documents(clock, accept, member):
    amy, ben = member("acme", "amy"), member("globex", "ben")
    notifications.schedule(user_id=amy.pk, now=clock.now())
    notifications.schedule(user_id=ben.pk, now=clock.now())
    clock.advance(seconds=1)
    finish(accept, clock, amy, needs_action=True, name="acme-secret.pdf", batch="shared-name")
    finish(accept, clock, ben, needs_action=True, name="globex-invoice.pdf", batch="shared-name")
    clock.advance(minutes=1)
    run_due(clock)
    by = {m.to[0]: m.body for m in mail.outbox}
    assert set(by) == {"amy@acme.example", "ben@globex.example"}
    assert "acme-secret.pdf" in by["amy@acme.example"] and "globex" not in by["amy@acme.example"]
    assert "globex-invoice.pdf" in by["ben@globex.example"] and "acme" not in by["ben@globex.example"]
    assert "1 document(s)" in by["ben@globex.example"]  # his batch counts only his tenant's jobs


def test_a_digest_retried_after_its_external_start_never_sends_twice(clock, accept, member, monkeypatch):
    amy = member("acme", "amy")
    digest = notifications.schedule(user_id=amy.pk, now=clock.now())
    clock.advance(seconds=1)
    finish(accept, clock, amy, needs_action=True, name="a.pdf")
    clock.advance(minutes=1)
    claim = claim_first(digest, now=clock.now())
    assert queue.start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
    ctx = JobContext(claim, clock=clock)

    class Crash(Exception):
        pass

    def crash(*args, **kwargs):  # the SMTP server took the message, then the worker died
        raise Crash

    monkeypatch.setattr(notifications.EmailMessage, "send", crash)
    with pytest.raises(Crash):
        notifications.send_digest(ctx)
    monkeypatch.undo()
    assert queue.fail(job_id=claim.job_id, epoch=claim.epoch, error="crashed", code="handler_error",
                      now=clock.now()).state == "unknown"
    # Whatever schedules her next digest, what the unknown one was sending is not sent again.
    notifications.schedule(user_id=amy.pk, now=clock.now())
    clock.advance(minutes=20)
    assert run_due(clock) == [{"sent": False, "why": "nothing new"}]
    assert mail.outbox == []


def test_a_digest_failing_before_its_external_start_sends_on_retry(clock, accept, member):
    amy = member("acme", "amy")
    digest = notifications.schedule(user_id=amy.pk, now=clock.now())
    clock.advance(seconds=1)
    finish(accept, clock, amy, needs_action=True, name="a.pdf")
    clock.advance(minutes=1)
    claim = claim_first(digest, now=clock.now())
    assert queue.fail(job_id=claim.job_id, epoch=claim.epoch, error="db hiccup", code="handler_error",
                      now=clock.now()).state == "queued"
    clock.advance(minutes=2)
    run_due(clock)
    assert len(mail.outbox) == 1 and "a.pdf" in mail.outbox[0].body


@pytest.fixture
def staff(make_member):
    triage = make_member("ops", "tess", staff=True)
    triage.email = "tess@ops.example"
    triage.save(update_fields=["email"])
    return triage


def triage_jobs():
    return Job.objects.filter(kind=notifications.TRIAGE)


def test_staff_are_told_once_per_rise_from_zero(clock, accept, member, staff):
    amy = member("acme", "amy")
    member("acme", "cara")  # a member, not staff: never told

    def to(state: str, job=None):
        return drive_to(job or accept(user=amy), state, now=clock.now())

    def triage_mail():
        run_due(clock)
        return [m for m in mail.outbox if "need" in m.subject and "a human" in m.subject]

    to("dead")
    assert len(triage_mail()) == 1
    assert triage_mail()[0].bcc == ["tess@ops.example"] and not triage_mail()[0].to
    assert f"{SITE}{reverse('admin:jobs_job_changelist')}?state=needs_human" in triage_mail()[0].body
    to("unknown")  # 1 -> 2: no new email
    assert len(triage_mail()) == 1 and triage_jobs().count() == 1
    for job in Job.objects.needs_human():  # staff settle both: back to zero
        assert queue.requeue(job_id=job.pk, expected_state=job.state, expected_epoch=job.epoch,
                             actor="staff:tess", reason="try again", now=clock.now())
    assert TriageAlert.objects.get().raised is False
    assert len(triage_mail()) == 1
    to("dead")  # rises again
    assert len(triage_mail()) == 2
    assert TriageAlert.objects.get().rises == 2


def test_the_triage_email_job_commits_with_the_move_that_raised_it(clock, accept, member, staff):
    """In the move's own transaction: nothing after its commit has to run (no on-commit hook
    runs in a test's transaction), and a move rolled back leaves no alert."""
    amy = member("acme", "amy")
    job = accept(user=amy)
    with pytest.raises(RuntimeError), transaction.atomic():
        drive_to(job, "dead", now=clock.now())
        assert triage_jobs().count() == 1 and TriageAlert.objects.get().raised
        raise RuntimeError("the process dies before the commit")
    assert not triage_jobs().exists() and not TriageAlert.objects.filter(raised=True).exists()
    assert Job.objects.get(pk=job.pk).state == "queued"
    drive_to(job, "dead", now=clock.now())  # the move commits: so does its email job, and nothing else ran
    alert = triage_jobs().get()
    assert alert.state == "queued" and alert.payload == {"rise": 1}
    assert alert.operation_key == f"{notifications.TRIAGE}:1"
    drive_to(accept(user=amy), "unknown", now=clock.now())  # the count was not zero: no second job
    assert triage_jobs().count() == 1 and TriageAlert.objects.get().rises == 1
    run_due(clock)
    assert [m.subject for m in mail.outbox] == ["Docket: 2 jobs need a human"]


def test_a_failing_alert_never_fails_the_move(clock, accept, member, staff, monkeypatch):
    def down():
        raise RuntimeError("no staff list")

    monkeypatch.setattr(notifications, "triage_recipients", down)
    job = drive_to(accept(user=member("acme", "amy")), "dead", now=clock.now())
    assert job.state == "dead" and not triage_jobs().exists()
    assert not TriageAlert.objects.filter(raised=True).exists()  # its savepoint rolled back: the next move tries


# --- A batch that ends without its reviews ---------------------------------------------------------


def batch_mail() -> list[str]:
    return [m.body for m in mail.outbox if "batch" in m.subject]


def test_a_batch_cancelled_before_any_review_started_is_told_once(clock, accept, member):
    amy = member("acme", "amy")
    jobs = [accept(user=amy, batch="april") for _ in range(3)]
    clock.advance(seconds=5)
    for job in jobs[:2]:
        drive_to(job, "cancelled", now=clock.now())
    assert not notify_jobs().exists()  # one still waits: the batch is not finished
    drive_to(jobs[2], "cancelled", now=clock.now())
    assert notify_jobs().count() == 1  # committed with the last cancel
    clock.advance(minutes=1)
    run_due(clock)
    assert len(batch_mail()) == 1
    assert "Batch april of 3 document(s): Finished: 3 cancelled." in \
        batch_mail()[0]
    clock.advance(hours=1)
    notifications.schedule(user_id=amy.pk, now=clock.now())  # any later digest
    clock.advance(minutes=1)
    run_due(clock)
    assert len(batch_mail()) == 1


def test_a_batch_dead_before_any_review_started_is_told(clock, accept, member):
    amy = member("acme", "amy")
    for _ in range(2):
        accept(user=amy, batch="may", deadline=timedelta(minutes=5))
    clock.advance(minutes=6)  # no worker ever came: recovery finds them past their deadline
    recovery = queue.recover(now=clock.now())
    assert len(recovery.dead) == 2 and notify_jobs().count() == 1
    clock.advance(minutes=1)
    run_due(clock)
    assert len(batch_mail()) == 1 and "Batch may of 2 document(s): Finished: 2 failed." \
        in batch_mail()[0]


def test_a_staff_decision_on_a_told_batchs_unknown_job_does_not_tell_it_again(clock, accept, member):
    amy = member("acme", "amy")
    done, unsure = accept(user=amy, batch="june"), accept(user=amy, batch="june")
    clock.advance(seconds=5)
    drive_to(done, "completed", now=clock.now())
    unsure = drive_to(unsure, "unknown", now=clock.now())  # the batch's last live job: it is finished
    clock.advance(minutes=1)
    run_due(clock)
    assert len(batch_mail()) == 1 and "Finished: 1 done; with staff: 1 needs checking." in batch_mail()[0]
    clock.advance(hours=1)
    assert queue.resolve(job_id=unsure.pk, expected_state="unknown", expected_epoch=unsure.epoch,
                         to_state="dead", actor="staff:tess", reason="discard", now=clock.now())
    notifications.schedule(user_id=amy.pk, now=clock.now())  # any later digest covers the decision's moment
    clock.advance(minutes=1)
    run_due(clock)
    assert len(batch_mail()) == 1


def test_settings_page_edits_only_her_own_preference(client, clock, member):
    amy, cara = member("acme", "amy", password="amy-pass-123"), member("acme", "cara")
    client.force_login(amy)
    page = client.get(reverse("notification_settings"))
    assert page.status_code == 200 and b'name="every_minutes"' in page.content
    response = client.post(reverse("notification_settings"),
                           {"every_minutes": "30", "user": cara.pk, "user_id": cara.pk})
    assert response.status_code == 303 and response["Location"] == reverse("notification_settings")
    mine = NotificationPreference.objects.get(pk=amy.pk)
    assert (mine.enabled, mine.every_minutes) == (False, 30)  # the box unticked: off
    assert not NotificationPreference.objects.filter(pk=cara.pk).exists()
    assert client.post(reverse("notification_settings"), {"every_minutes": "0", "enabled": "on"}).status_code == 400
    assert NotificationPreference.objects.get(pk=amy.pk).every_minutes == 30


def test_settings_page_refuses_a_post_without_its_csrf_token(clock, member):
    from django.test import Client

    amy = member("acme", "amy")
    client = Client(enforce_csrf_checks=True)
    client.force_login(amy)
    response = client.post(reverse("notification_settings"), {"every_minutes": "30", "enabled": "on"})
    assert response.status_code == 403
    assert not NotificationPreference.objects.filter(pk=amy.pk, every_minutes=30).exists()


def test_a_review_starting_schedules_its_submitters_digest_once_per_slot(clock, accept, member, make_member):
    amy, nomail = member("acme", "amy"), make_member("acme", "nomail")
    for user in (amy, amy, nomail):
        claim = claim_first(accept(user=user), now=clock.now())
        notifications.review_started(JobContext(claim, clock=clock))
    assert list(notify_jobs().values_list("payload", "available_at")) == \
        [({"user": amy.pk}, clock.now().replace(second=0) + timedelta(minutes=1))]
