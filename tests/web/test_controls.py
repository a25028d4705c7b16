"""Cancel and Cancel the unfinished ask first, without script; a batch's words once it has finished."""

from __future__ import annotations

import re
from datetime import timedelta

from jobs import queue
from jobs.models import Job
from tests.conftest import claim_first, drive_to

from .responses import HTMX


def confirm_form(client, url: str) -> tuple[str, dict[str, str]]:
    """The confirmation page's form: where it posts, and its fields."""
    html = client.get(url).content.decode()
    form = re.search(r'<form method="post" action="([^"]+)" class="actions" id="confirm-form">', html)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    return form.group(1), {"csrfmiddlewaretoken": token}


def test_cancel_on_the_job_page_leads_to_a_question_not_a_cancel(browser_client, alice, accept):
    job = accept()
    client = browser_client(alice)
    page = client.get(f"/jobs/{job.pk}").content.decode()
    assert re.search(rf'<a class="button control" href="/jobs/{job.pk}/cancel" id="cancel-job">Cancel…</a>', page)

    question = client.get(f"/jobs/{job.pk}/cancel")

    html = question.content.decode()
    assert question.status_code == 200 and Job.objects.get(pk=job.pk).state == "queued"
    assert "Cancel the review of" in html and 'id="confirm-cancel"' in html
    assert f'<a class="button" href="/jobs/{job.pk}" id="keep">No, keep it</a>' in html
    action, fields = confirm_form(client, f"/jobs/{job.pk}/cancel")
    response = client.post(action, fields)
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}"
    assert Job.objects.get(pk=job.pk).state == "cancelled"


def test_a_running_job_once_asked_shows_cancelling_and_no_second_cancel(browser_client, alice, accept, clock):
    job = accept()
    claim_first(job, now=clock.now())
    client = browser_client(alice)
    action, fields = confirm_form(client, f"/jobs/{job.pk}/cancel")
    assert "The review stops shortly" in client.get(f"/jobs/{job.pk}/cancel").content.decode()
    assert client.post(action, fields).status_code == 303

    page = client.get(f"/jobs/{job.pk}").content.decode()
    again = client.get(f"/jobs/{job.pk}/cancel").content.decode()

    assert 'id="cancel-job">Cancelling…</span>' in page and f'href="/jobs/{job.pk}/cancel"' not in page
    assert "Nothing left to cancel" in again and 'id="confirm-cancel"' not in again


def test_the_question_is_tenant_scoped_and_not_for_api_clients(browser_client, api_client, alice, bob, accept):
    job = accept()
    assert browser_client(bob).get(f"/jobs/{job.pk}/cancel").status_code == 404
    response = api_client(alice).get(f"/jobs/{job.pk}/cancel")
    assert response.status_code == 405 and response.json()["error"] == "method_not_allowed"
    assert Job.objects.get(pk=job.pk).state == "queued"


def test_cancel_the_unfinished_asks_first_then_goes_once_nothing_is_left(browser_client, alice, accept, clock):
    waiting = accept(batch="b1")
    done = drive_to(accept(batch="b1"), "completed", now=clock.now())
    client = browser_client(alice)
    page = client.get("/batches/b1").content.decode()
    assert '<a class="button control" href="/batches/b1/cancel" id="cancel-batch">Cancel the unfinished…</a>' in page

    question = client.get("/batches/b1/cancel").content.decode()

    assert "Cancel the unfinished documents?" in question and "1 document of this batch has not" in question
    assert Job.objects.get(pk=waiting.pk).state == "queued"
    action, fields = confirm_form(client, "/batches/b1/cancel")
    assert client.post(action, fields).status_code == 303
    assert (Job.objects.get(pk=waiting.pk).state, Job.objects.get(pk=done.pk).state) == ("cancelled", "completed")
    after = client.get("/batches/b1").content.decode()
    assert 'id="cancel-batch"' not in after
    assert "Nothing left to cancel" in client.get("/batches/b1/cancel").content.decode()
    assert browser_client(alice).get("/batches/b-nothing/cancel").status_code == 404


def test_the_batch_cancel_goes_from_the_polled_part_when_its_last_job_finishes(browser_client, alice, accept,
                                                                                 clock):
    job = accept(batch="b2")
    client = browser_client(alice)
    assert 'id="cancel-batch"' in client.get("/batches/b2?poll=1", headers=HTMX).content.decode()
    drive_to(job, "completed", now=clock.now())
    assert 'id="cancel-batch"' not in client.get("/batches/b2?poll=2", headers=HTMX).content.decode()


def test_a_batch_whose_jobs_are_all_asked_to_cancel_offers_no_cancel(browser_client, alice, accept, clock):
    job = accept(batch="b3")
    claim_first(job, now=clock.now())
    assert queue.cancel(job_id=job.pk, actor=f"user:{alice.pk}", reason="", now=clock.now())
    assert 'id="cancel-batch"' not in browser_client(alice).get("/batches/b3").content.decode()


def summary(client, batch: str) -> str:
    html = client.get(f"/batches/{batch}").content.decode()
    return re.search(r'id="batch-summary" data-announce>(.*?)</p>', html).group(1)


def test_a_finished_batch_says_finished_with_no_bar_and_counts_staffs_apart(browser_client, alice, accept, clock):
    ok = drive_to(accept(batch="b4", now=clock.now() - timedelta(seconds=9)), "completed", now=clock.now())
    mine = drive_to(accept(batch="b4", now=clock.now() - timedelta(seconds=8)), "dead", now=clock.now())  # "boom"
    checking = [drive_to(accept(batch="b4", now=clock.now() - timedelta(seconds=n)), "unknown", now=clock.now())
                for n in (7, 6)]
    ours = drive_to(accept(batch="b4", now=clock.now() - timedelta(seconds=5)), "leased", now=clock.now())
    assert queue.fail(job_id=ours.pk, epoch=ours.epoch, error="handler_crashed: x", code="handler_crashed",
                      now=clock.now(), retryable=False)
    assert (ok.state, mine.state, len(checking)) == ("completed", "dead", 2)
    client = browser_client(alice)

    html = client.get("/batches/b4").content.decode()

    assert summary(client, "b4") == "Finished: 1 done, 1 failed; with staff: 2 need checking, 1 failed"
    assert "<progress" not in html and "of 5 done" not in html


def test_a_live_batch_counts_checking_jobs_apart_and_keeps_its_bar(browser_client, alice, accept, clock):
    drive_to(accept(batch="b5", now=clock.now() - timedelta(seconds=9)), "unknown", now=clock.now())
    accept(batch="b5")
    client = browser_client(alice)
    assert summary(client, "b5") == "1 of 2 done; with staff: 1 needs checking"
    assert '<progress max="2" value="1"' in client.get("/batches/b5").content.decode()
