"""Submit again links the two jobs both ways, on their pages and in their JSON; only within the tenant.

A document problem keeps Submit again on its page; a failure on our side (FailureCause.SERVICE)
offers none while staff have it.
"""

from __future__ import annotations

import re

from documents.errors import DamagedDocument
from jobs import queue
from jobs.models import Job
from tests.conftest import drive_to
from web.openapi import openapi


def again_form(client, job) -> dict[str, str]:
    html = client.get(f"/jobs/{job.pk}").content.decode()
    assert 'id="submit-again"' in html
    return {"idempotency_key": re.search(r'name="idempotency_key" value="([^"]+)"', html).group(1),
            "csrfmiddlewaretoken": re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)}


def failed(accept, clock, code: str):
    job = drive_to(accept("webtest.echo", {"text": "x"}), "leased", now=clock.now())
    assert queue.fail(job_id=job.pk, epoch=job.epoch, error=f"{code}: the file is damaged", code=code,
                      now=clock.now(), retryable=False)
    return job


def test_a_document_problem_keeps_submit_again_and_both_pages_link_each_other(browser_client, alice, accept,
                                                                              clock):
    client = browser_client(alice)
    old = failed(accept, clock, DamagedDocument.code)

    response = client.post(f"/jobs/{old.pk}/again", again_form(client, old))

    new = Job.objects.exclude(pk=old.pk).get()
    assert response.status_code == 303 and response["Location"] == f"/jobs/{new.pk}"
    old_page = client.get(f"/jobs/{old.pk}").content.decode()
    new_page = client.get(f"/jobs/{new.pk}").content.decode()
    assert re.search(rf'id="resubmitted-as">Sent again as <a href="/jobs/{new.pk}">#{new.pk}</a>', old_page)
    assert re.search(rf'id="resubmitted-from">Sent again from <a href="/jobs/{old.pk}">#{old.pk}</a>', new_page)
    assert 'id="resubmitted-from"' not in old_page and 'id="resubmitted-as"' not in new_page
    assert 'id="submit-again"' in old_page  # still offered: a better copy may follow


def test_the_json_carries_both_ids(browser_client, api_client, alice, accept, clock):
    client = browser_client(alice)
    old = failed(accept, clock, DamagedDocument.code)
    client.post(f"/jobs/{old.pk}/again", again_form(client, old))
    new = Job.objects.exclude(pk=old.pk).get()
    api = api_client(alice)

    old_json, new_json = api.get(f"/jobs/{old.pk}").json(), api.get(f"/jobs/{new.pk}").json()

    assert (old_json["resubmitted_as"], old_json["resubmitted_from"]) == (new.pk, None)
    assert (new_json["resubmitted_as"], new_json["resubmitted_from"]) == (None, old.pk)
    job_schema = openapi()["components"]["schemas"]["Job"]["properties"]
    assert {"resubmitted_as", "resubmitted_from"} <= set(job_schema)


def test_another_tenant_sees_neither_end(browser_client, api_client, alice, bob, accept, clock):
    client = browser_client(alice)
    old = failed(accept, clock, DamagedDocument.code)
    client.post(f"/jobs/{old.pk}/again", again_form(client, old))
    new = Job.objects.exclude(pk=old.pk).get()

    for job in (old, new):
        assert browser_client(bob).get(f"/jobs/{job.pk}").status_code == 404
        assert api_client(bob).get(f"/jobs/{job.pk}").status_code == 404


def test_a_job_never_sent_again_links_nothing(browser_client, api_client, alice, accept, clock):
    old = failed(accept, clock, DamagedDocument.code)
    html = browser_client(alice).get(f"/jobs/{old.pk}").content.decode()
    body = api_client(alice).get(f"/jobs/{old.pk}").json()
    assert "Sent again" not in html and body["resubmitted_as"] is None and body["resubmitted_from"] is None


def test_a_service_failure_offers_no_submit_again_while_staff_have_it(browser_client, alice, accept, clock):
    job = failed(accept, clock, queue.FailureCode.HANDLER_CRASHED)
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert "staff have been told" in html
    assert 'id="submit-again"' not in html and "Submit again" not in html
