"""The triage actions: a confirmation with a reason, then a conditional move through the queue."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType

from jobs import queue
from jobs.models import Job, JobEvent

from .conftest import CHANGELIST, STATES, confirm, confirmation_fields, messages_of, start_action

# action -> (the state it moves from, the state it leaves)
ACTIONS = {
    "retry_dead": ("dead", "queued"),
    "reconcile_done": ("unknown", "completed"),
    "reconcile_not_done": ("unknown", "queued"),
    "discard_unknown": ("unknown", "dead"),
    "cancel_jobs": ("queued", "cancelled"),
}
# Cancel also takes running jobs (as a request their worker acknowledges: see test_cancel_*).
ALSO_FROM = {"cancel_jobs": {"leased"}}
ALLOWED = [(action, frm, to) for action, (frm, to) in ACTIONS.items()]
DISALLOWED = [(action, state) for action, (frm, _) in ACTIONS.items() for state in STATES
              if state != frm and state not in ALSO_FROM.get(action, set())]


def form_for(action: str, reason: str = "customer confirmed by phone") -> dict:
    form = {"reason": reason}
    if action == "reconcile_done":
        form["outcome"] = '{"review": "sent by the provider", "ticket": 42}'
    return form


def snapshot(job: Job) -> tuple:
    row = Job.objects.get(pk=job.pk)
    return row.state, row.epoch, row.attempts, row.result, row.events.count()


@pytest.mark.parametrize("action,from_state,to_state", ALLOWED)
def test_each_action_moves_a_job_from_its_state_and_records_who_and_why(
    client, triager, in_state, action, from_state, to_state
):
    job = in_state(from_state)
    client.force_login(triager)

    page = start_action(client, action, job)
    assert page.status_code == 200
    assert page.context["movable"] == [job] and page.context["skipped"] == []
    assert Job.objects.get(pk=job.pk).state == from_state  # the page alone moves nothing

    response = confirm(client, page, **form_for(action))
    assert response.status_code == 302 and response.url == CHANGELIST
    assert Job.objects.get(pk=job.pk).state == to_state

    event = JobEvent.objects.filter(job=job).last()
    assert (event.from_state, event.to_state) == (from_state, to_state)
    assert (event.actor, event.reason) == ("staff:triager", "customer confirmed by phone")
    log = LogEntry.objects.get(object_id=str(job.pk), content_type=ContentType.objects.get_for_model(Job))
    assert (log.user, log.action_flag) == (triager, CHANGE)
    assert "customer confirmed by phone" in log.get_change_message()
    assert any("1 of 1 selected job(s)" in m for m in messages_of(response))


@pytest.mark.parametrize("action,state", DISALLOWED)
def test_each_action_leaves_a_job_in_any_other_state_alone(client, triager, in_state, action, state):
    job = in_state(state)
    before = snapshot(job)
    client.force_login(triager)

    page = start_action(client, action, job)
    assert page.status_code == 200
    assert page.context["movable"] == [] and page.context["skipped"] == [job]
    assert b"nothing to do" in page.content

    # Even a hand-made confirmation naming the job and its epoch moves nothing.
    response = client.post(CHANGELIST, {
        "action": action, "post": "yes", "_selected_action": [job.pk], "seen": [f"{job.pk}:{job.epoch}"],
        **form_for(action),
    })
    assert response.status_code == 302
    assert snapshot(job) == before
    assert not LogEntry.objects.exists()
    assert any("Skipped 1 job(s)" in m for m in messages_of(response))


def test_the_confirmation_page_counts_what_moves_and_what_is_skipped(client, triager, in_state):
    dead1, dead2, done = in_state("dead"), in_state("dead"), in_state("completed")
    client.force_login(triager)

    page = start_action(client, "retry_dead", dead1, dead2, done)
    text = page.content.decode()
    assert 'class="movable-count">2</strong>' in text and "of 3 selected jobs" in text
    assert f"#{done.pk}</a> is completed" in text
    # In the page's order, by id (not as strings: job 99 comes before job 100).
    by_id = sorted((dead1, dead2), key=lambda j: j.pk)
    assert confirmation_fields(page)["seen"] == [f"{j.pk}:{j.epoch}" for j in by_id]

    response = confirm(client, page, reason="deploy fixed the parser")
    assert [Job.objects.get(pk=j.pk).state for j in (dead1, dead2, done)] == ["queued", "queued", "completed"]
    shown = messages_of(response)
    assert any("2 of 3 selected job(s) retried" in m for m in shown)
    assert any(f"Skipped 1 job(s) no longer dead as you saw them: #{done.pk}" in m for m in shown)
    assert LogEntry.objects.count() == 2


@pytest.mark.parametrize("action", list(ACTIONS))
def test_the_reason_is_required(client, triager, in_state, action):
    job = in_state(ACTIONS[action][0])
    before = snapshot(job)
    client.force_login(triager)

    page = start_action(client, action, job)
    response = confirm(client, page, **form_for(action, reason="   "))
    assert response.status_code == 200  # the confirmation again, with the error
    assert response.context["form"].errors["reason"]
    assert snapshot(job) == before


def test_reconciling_as_done_saves_a_json_outcome_as_the_result(client, triager, in_state):
    job = in_state("unknown")
    client.force_login(triager)
    confirm(client, start_action(client, "reconcile_done", job), reason="provider shows it sent",
            outcome=json.dumps({"review": "ok", "supplier": "ACME"}))
    job.refresh_from_db()
    assert (job.state, job.result) == ("completed", {"review": "ok", "supplier": "ACME"})
    assert job.finished_at is not None


def test_reconciling_as_done_saves_plain_text_as_a_note(client, triager, in_state):
    job = in_state("unknown")
    client.force_login(triager)
    confirm(client, start_action(client, "reconcile_done", job), reason="checked", outcome="Email went out at 10:02.")
    assert Job.objects.get(pk=job.pk).result == {"note": "Email went out at 10:02."}


@pytest.mark.parametrize("outcome", ["", "{not json", '{"a": 1'])
def test_reconciling_as_done_needs_a_usable_outcome(client, triager, in_state, outcome):
    job = in_state("unknown")
    client.force_login(triager)
    response = confirm(client, start_action(client, "reconcile_done", job), reason="checked", outcome=outcome)
    assert response.status_code == 200 and response.context["form"].errors["outcome"]
    assert Job.objects.get(pk=job.pk).state == "unknown"


@pytest.mark.parametrize("depth", [600, 9000])
def test_an_outcome_nested_too_deep_is_a_form_error_not_a_500_now_or_on_the_tenants_page(
        client, triager, in_state, depth):
    job = in_state("unknown")
    client.force_login(triager)
    outcome = '{"a": ' + "[" * depth + "]" * depth + "}"  # 9,000 deep fits the field's 20,000 characters
    response = confirm(client, start_action(client, "reconcile_done", job), reason="checked", outcome=outcome)
    assert response.status_code == 200
    assert "nests deeper than 32 levels" in str(response.context["form"].errors["outcome"])
    assert Job.objects.get(pk=job.pk).state == "unknown"


def test_an_outcome_the_database_cannot_keep_is_a_form_error(client, triager, in_state):
    job = in_state("unknown")
    client.force_login(triager)
    response = confirm(client, start_action(client, "reconcile_done", job), reason="checked",
                       outcome='{"note": "a\\u0000b"}')
    assert "NUL" in str(response.context["form"].errors["outcome"])
    assert Job.objects.get(pk=job.pk).state == "unknown"


def test_a_job_a_worker_completed_after_the_page_was_shown_is_skipped_not_overwritten(
    client, triager, in_state, clock
):
    job = in_state("dead")
    client.force_login(triager)
    page = start_action(client, "retry_dead", job)

    # Meanwhile: someone else retries it, and a worker claims and completes it.
    assert queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=job.epoch, actor="staff:other",
                         reason="r", now=clock.now())
    c = queue.claim(now=clock.now(), worker="w2")
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={"review": "done"}, now=clock.now())
    before = snapshot(job)

    response = confirm(client, page, reason="retry after the fix")
    assert snapshot(job) == before
    assert Job.objects.get(pk=job.pk).result == {"review": "done"}
    assert not JobEvent.objects.filter(job=job, actor="staff:triager").exists()
    assert not LogEntry.objects.exists()
    shown = messages_of(response)
    assert any("0 of 1 selected job(s) retried" in m for m in shown)
    assert any(f"Skipped 1 job(s) no longer dead as you saw them: #{job.pk}" in m for m in shown)


def test_an_unknown_job_another_staff_member_discarded_meanwhile_is_not_reconciled(client, triager, in_state, clock):
    job = in_state("unknown")
    client.force_login(triager)
    page = start_action(client, "reconcile_done", job)
    assert queue.resolve(job_id=job.pk, expected_state="unknown", expected_epoch=job.epoch, to_state="dead",
                         actor="staff:other", reason="duplicate", now=clock.now())

    confirm(client, page, reason="it was sent", outcome="sent")
    job.refresh_from_db()
    assert (job.state, job.result) == ("dead", None)


def test_a_job_that_died_again_since_the_page_was_shown_is_skipped(client, triager, in_state, clock):
    """Dead again, but not the dead the staff member saw: a worker held it in between."""
    job = in_state("dead")
    client.force_login(triager)
    page = start_action(client, "retry_dead", job)

    assert queue.requeue(job_id=job.pk, expected_state="dead", expected_epoch=job.epoch, actor="staff:other",
                         reason="r", now=clock.now())
    c = queue.claim(now=clock.now(), worker="w2")
    assert queue.fail(job_id=c.job_id, epoch=c.epoch, error="again", code="handler_failed", now=clock.now(),
                      retryable=False).state == "dead"
    before = snapshot(job)

    response = confirm(client, page, reason="retry")
    assert snapshot(job) == before
    assert any("Skipped 1 job(s)" in m for m in messages_of(response))


def test_a_retry_gives_fresh_attempts_and_a_new_deadline(client, triager, in_state, clock):
    job = in_state("dead")
    clock.advance(minutes=30)  # long past the first deadline
    client.force_login(triager)
    confirm(client, start_action(client, "retry_dead", job), reason="transient outage")

    job.refresh_from_db()
    assert (job.state, job.attempts, job.available_at) == ("queued", 0, clock.now())
    assert job.deadline == clock.now() + timedelta(minutes=10)  # diagnostic.sleep's deadline
    assert queue.claim(now=clock.now(), worker="w9").job_id == job.pk


def test_a_requeue_never_lowers_the_epoch(client, triager, clock, accept):
    job = accept("diagnostic.sleep", {"seconds": 1})
    held = []
    for _ in range(3):  # three safe failures: dead, having been held at epochs 1, 2, 3
        c = queue.claim(now=clock.now(), worker="w1")
        held.append(c)
        queue.fail(job_id=c.job_id, epoch=c.epoch, error="boom", code="handler_failed", now=clock.now())
        clock.advance(minutes=2)
    assert Job.objects.get(pk=job.pk).state == "dead"

    client.force_login(triager)
    confirm(client, start_action(client, "retry_dead", job), reason="fixed")
    again = queue.claim(now=clock.now(), worker="w2")
    assert again.job_id == job.pk
    assert again.epoch > max(c.epoch for c in held)
    # No token a worker ever held is valid again.
    for old in held:
        assert not queue.complete(job_id=job.pk, epoch=old.epoch, result={}, now=clock.now())
    assert queue.complete(job_id=job.pk, epoch=again.epoch, result={"ok": True}, now=clock.now())


def test_reconciling_as_not_done_clears_the_external_start_marker(client, triager, in_state, clock):
    job = in_state("unknown")
    assert job.external_started_at is not None
    client.force_login(triager)
    confirm(client, start_action(client, "reconcile_not_done", job), reason="provider has no record")
    job.refresh_from_db()
    assert (job.state, job.attempts, job.external_started_at) == ("queued", 0, None)


@pytest.mark.parametrize("action,from_state,to_state", ALLOWED)
def test_the_job_page_buttons_open_the_same_confirmation(client, triager, in_state, action, from_state, to_state):
    job = in_state(from_state)
    client.force_login(triager)
    page = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert f'name="action" value="{action}"'.encode() in page.content

    # The button's form: the job, index 0, the action.
    confirmation = client.post(CHANGELIST, {"_selected_action": job.pk, "index": "0", "action": action})
    assert confirmation.status_code == 200 and confirmation.context["movable"] == [job]
    confirm(client, confirmation, **form_for(action))
    assert Job.objects.get(pk=job.pk).state == to_state


def test_the_job_page_offers_only_the_actions_for_its_state(client, triager, in_state):
    client.force_login(triager)
    dead = client.get(f"{CHANGELIST}{in_state('dead').pk}/change/").content.decode()
    unknown = client.get(f"{CHANGELIST}{in_state('unknown').pk}/change/").content.decode()
    queued = client.get(f"{CHANGELIST}{in_state('queued').pk}/change/").content.decode()
    assert 'value="retry_dead"' in dead and 'value="discard_unknown"' not in dead
    assert all(f'value="{a}"' in unknown for a in ("reconcile_done", "reconcile_not_done", "discard_unknown"))
    assert 'value="retry_dead"' not in unknown and 'value="cancel_jobs"' not in unknown
    assert 'value="cancel_jobs"' in queued and 'value="retry_dead"' not in queued


def test_staff_cancel_a_running_job_as_a_request_its_worker_answers(client, triager, in_state):
    from jobs.models import JobEvent

    job = in_state("leased")
    client.force_login(triager)
    page = start_action(client, "cancel_jobs", job)
    confirm(client, page, reason="the customer withdrew it")
    job.refresh_from_db()
    assert job.state == "leased" and job.cancel_requested_at is not None
    assert JobEvent.objects.filter(job=job, actor="staff:triager",
                                   reason="cancel requested: the customer withdrew it").exists()
