"""POST /jobs/<id>/cancel and the waiting limit's 429, as API clients and browsers see them."""

from __future__ import annotations

import json

from accounts.models import Tenant
from jobs.models import Job, JobEvent
from tests.conftest import claim_first, drive_to

from .conftest import key


def cancel(client, job):
    return client.post(f"/jobs/{job.pk}/cancel")


def test_a_waiting_job_is_cancelled_at_once_200_with_the_job(api_client, alice, accept):
    job = accept()
    response = cancel(api_client(alice), job)
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    assert JobEvent.objects.filter(job=job, to_state="cancelled", actor=f"user:{alice.pk}").exists()


def test_a_running_job_gets_a_request_202_and_stays_running_until_its_worker_answers(api_client, alice, accept,
                                                                                    clock):
    job = accept()
    claim_first(job, now=clock.now())
    client = api_client(alice)
    first, again = cancel(client, job), cancel(client, job)
    assert (first.status_code, first.json()["state"]) == (202, "leased")
    assert again.status_code == 202  # asking twice is harmless
    assert JobEvent.objects.filter(job=job, reason="cancel requested").count() == 1


def test_a_finished_job_is_not_cancellable_409_with_its_state(api_client, alice, accept, clock):
    job = drive_to(accept(), "completed", now=clock.now())
    response = cancel(api_client(alice), job)
    assert response.status_code == 409
    assert response.json() == {"error": "not_cancellable", "detail": "a completed job cannot be cancelled",
                               "state": "completed"}


def test_another_tenants_job_answers_byte_for_byte_like_an_unknown_one(api_client, alice, bob, accept):
    theirs = accept(user=bob)
    client = api_client(alice)
    foreign, unknown = cancel(client, theirs), client.post("/jobs/999999/cancel")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.content == unknown.content
    assert Job.objects.get(pk=theirs.pk).state == "queued"


def test_a_session_must_pass_the_csrf_check_and_is_sent_back_to_the_job(browser_client, alice, accept):
    job = accept()
    browser = browser_client(alice)
    assert cancel(browser, job).status_code == 403  # no CSRF token
    assert Job.objects.get(pk=job.pk).state == "queued"
    page = browser.get(f"/jobs/{job.pk}")
    token = page.cookies["csrftoken"].value
    response = browser.post(f"/jobs/{job.pk}/cancel", headers={"X-CSRFToken": token})
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}"
    assert Job.objects.get(pk=job.pk).state == "cancelled"
    assert b'id="cancel-job"' in page.content


def test_a_batch_page_cancels_what_has_not_finished(browser_client, alice, accept, clock):
    waiting, done = accept(batch="b1"), accept(batch="b1")
    drive_to(done, "completed", now=clock.now())
    browser = browser_client(alice)
    page = browser.get("/batches/b1")
    assert b'id="cancel-batch"' in page.content
    response = browser.post("/batches/b1/cancel", headers={"X-CSRFToken": page.cookies["csrftoken"].value})
    assert response.status_code == 303
    assert (Job.objects.get(pk=waiting.pk).state, Job.objects.get(pk=done.pk).state) == ("cancelled", "completed")


def test_a_tenant_at_its_waiting_limit_gets_429_and_nothing_is_written(api_client, alice, accept):
    Tenant.objects.filter(pk=alice.tenant_id).update(max_waiting=2)
    accept(), accept()
    before = Job.objects.count()
    response = api_client(alice).post("/jobs", json.dumps({"kind": "diagnostic.noop", "payload": {}}),
                                      content_type="application/json", headers={"Idempotency-Key": key()})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert response.json()["error"] == "tenant_queue_full"
    assert Job.objects.count() == before


def test_the_submit_page_says_so_in_plain_words(browser_client, alice, accept):
    Tenant.objects.filter(pk=alice.tenant_id).update(max_waiting=1)
    accept()
    browser = browser_client(alice)
    form = browser.get("/jobs/new")
    response = browser.post("/jobs", {"kind": "document_review", "text": "Supplier: Initech",
                                      "idempotency_key": key()},
                            headers={"X-CSRFToken": form.cookies["csrftoken"].value})
    assert response.status_code == 429
    assert b"already has as many documents waiting as it may" in response.content
