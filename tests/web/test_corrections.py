"""Correcting and confirming a finished review's fields on the web: the job page's forms (CSRF,
POST-redirect-GET, htmx, the reason at the form), the API's PATCH, the same 404 for other
tenants' jobs everywhere, and the corrected values in the page, its history, the note, the
.json, the CSV, the list and GET /jobs/<id>."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from agent.models import FieldCorrection

from .conftest import review_result
from .responses import read_csv

pytestmark = pytest.mark.django_db

GOOD_IBAN = "DE89 3704 0044 0532 0130 00"
BAD_IBAN = "DE89 3704 0044 0532 0130 01"


def csrf_client(user) -> tuple[Client, str]:
    """A logged-in browser that enforces CSRF, and the token its job pages carry."""
    client = Client(headers={"Accept": "text/html"}, enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/jobs")
    return client, client.cookies["csrftoken"].value


def patch(client, job_id, body, field="iban"):
    return client.patch(f"/jobs/{job_id}/fields/{field}", data=json.dumps(body), content_type="application/json")


def test_the_page_offers_to_correct_each_field_and_to_confirm_the_values_read(browser_client, alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"))
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    forms = re.findall(rf'<form method="post" action="/jobs/{job.pk}/fields/(\w+)" class="(\S+)"', html)
    corrects = [name for name, cls in forms if cls == "correct-form"]
    confirms = [name for name, cls in forms if cls == "inline-form"]
    assert corrects == ["supplier_name", "vat_id", "invoice_number", "invoice_date", "currency", "total_amount",
                        "iban"]
    assert "iban" not in confirms and "currency" in confirms  # a value that fails its check is corrected, not confirmed
    assert 'name="csrfmiddlewaretoken"' in html and f'hx-post="/jobs/{job.pk}/fields/iban"' in html
    assert '<input type="text" id="correct-iban" name="value" value="DE00 1234"' in html


def test_a_correction_from_the_form_redirects_to_the_field_and_shows_everywhere(alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"), name="invoice-bad-iban.pdf")
    client, token = csrf_client(alice)
    assert client.post(f"/jobs/{job.pk}/fields/iban", {"value": GOOD_IBAN}).status_code == 403  # no CSRF token
    response = client.post(f"/jobs/{job.pk}/fields/iban", {"value": GOOD_IBAN, "csrfmiddlewaretoken": token})
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}#field-iban"

    html = client.get(f"/jobs/{job.pk}").content.decode()
    row = html.split('id="field-iban"')[1].split("</tr>")[0]
    assert 'badge-present">OK<' in row and GOOD_IBAN in row and "Corrected by alice" in row
    assert "The review read DE00 1234" in row
    assert "Done</span><span class=\"status-detail\"> — OK" in html
    history = html.split('id="events"')[1].split("</ol>")[0]
    assert f"IBAN / bank account corrected by you: {GOOD_IBAN} (was DE00 1234); passes its check" in history
    assert 'id="supplier-message"' not in html  # nothing left to ask the supplier

    note = client.get(f"/jobs/{job.pk}/note.txt").content.decode()
    assert f"- IBAN / bank account: {GOOD_IBAN}" in note and "corrected by alice" in note
    result = json.loads(client.get(f"/jobs/{job.pk}/result.json").content)
    assert result["fields"]["iban"]["value"] == GOOD_IBAN
    assert result["fields"]["iban"]["correction"]["review"] == {
        "status": "malformed", "value": "DE00 1234", "detail": "not a valid IBAN: checksum"}
    row = next(r for r in read_csv(client.get("/jobs/export.csv")) if r["Job"] == str(job.pk))
    assert (row["Outcome"], row["IBAN / bank account"], row["Issues"]) == ("OK", GOOD_IBAN, "")
    # The list no longer counts it as needing action.
    assert "invoice-bad-iban.pdf" not in client.get("/jobs?needs_action=1").content.decode()


def test_confirming_from_the_form(alice, reviewed):
    job = reviewed(review_result())
    client, token = csrf_client(alice)
    response = client.post(f"/jobs/{job.pk}/fields/currency", {"confirm": "1", "csrfmiddlewaretoken": token})
    assert response.status_code == 303
    record = FieldCorrection.objects.get(job=job)
    assert (record.field, record.value, record.confirmed, record.by_id) == ("currency", "EUR", True, alice.pk)
    html = client.get(f"/jobs/{job.pk}").content.decode()
    assert "Confirmed by alice" in html.split('id="field-currency"')[1].split("</tr>")[0]
    assert "Currency confirmed by you: EUR" in html


def test_a_refused_value_comes_back_at_its_form(alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"))
    client, token = csrf_client(alice)
    response = client.post(f"/jobs/{job.pk}/fields/iban", {"value": "  ", "csrfmiddlewaretoken": token})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'aria-invalid="true" aria-describedby="correct-iban-error"' in html
    assert '<p class="field-error" id="correct-iban-error">Type the value, or confirm the one the review read.</p>' \
        in html
    assert '<details class="correct" open>' in html
    assert not FieldCorrection.objects.exists()


def test_htmx_gets_the_pages_status_part(alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"))
    client, token = csrf_client(alice)
    response = client.post(f"/jobs/{job.pk}/fields/iban", {"value": BAD_IBAN},
                           headers={"HX-Request": "true", "X-CSRFToken": token})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="status"') and "<html" not in html
    assert 'badge-malformed">To correct<' in html.split('id="field-iban"')[1].split("</tr>")[0]
    refused = client.post(f"/jobs/{job.pk}/fields/nope", {"value": "x"},
                          headers={"HX-Request": "true", "X-CSRFToken": token})
    assert refused.status_code == 400 and refused.content.decode().lstrip().startswith('<section id="status"')


def test_the_api_corrects_and_confirms_and_the_job_answers_with_the_corrected_result(api_client, alice, reviewed):
    job = reviewed(review_result(iban_status="malformed"))
    client = api_client(alice)
    response = patch(client, job.pk, {"value": BAD_IBAN})
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("field", "value", "status", "confirmed", "previous_value", "review_value",
                                 "review_status", "by", "outcome", "outcome_text", "needs_action")} == {
        "field": "iban", "value": BAD_IBAN, "status": "malformed", "confirmed": False, "previous_value": "DE00 1234",
        "review_value": "DE00 1234", "review_status": "malformed", "by": "alice", "outcome": "to_correct",
        "outcome_text": "1 to correct", "needs_action": True}
    body = patch(client, job.pk, {"value": GOOD_IBAN}).json()
    assert (body["status"], body["previous_value"], body["outcome_text"]) == ("present", BAD_IBAN, "OK")
    assert patch(client, job.pk, {"confirm": True}, "supplier_name").json()["confirmed"] is True
    answer = client.get(f"/jobs/{job.pk}").json()
    assert answer["result"]["fields"]["iban"]["value"] == GOOD_IBAN
    assert answer["result"]["fields"]["iban"]["correction"]["review"]["value"] == "DE00 1234"
    assert (answer["outcome_text"], answer["needs_action"]) == ("OK", False)


@pytest.mark.parametrize(("field", "body", "code", "at_fault"), [
    ("nope", {"value": "x"}, "unknown_field", "field"),
    ("iban", {"value": ""}, "empty_value", "value"),
    ("iban", {}, "empty_value", "value"),
    ("iban", {"value": "x", "confirm": True}, "invalid", "confirm"),
    ("iban", {"value": 12}, "invalid", "value"),
])
def test_the_api_says_which_input_is_wrong(api_client, alice, reviewed, field, body, code, at_fault):
    job = reviewed(review_result(iban_status="malformed"))
    response = patch(api_client(alice), job.pk, body, field)
    assert response.status_code == 400
    assert (response.json()["error"], response.json()["field"]) == (code, at_fault)


def test_the_api_refuses_a_job_that_is_not_done(api_client, alice, accept):
    waiting = accept("document_review", {"text": "Invoice"})
    response = patch(api_client(alice), waiting.pk, {"value": GOOD_IBAN})
    assert response.status_code == 409
    assert (response.json()["error"], response.json()["state"]) == ("not_completed", "queued")


def test_another_tenants_job_is_the_same_404_on_the_page_the_form_and_the_api(alice, bob, reviewed, api_client):
    job = reviewed(review_result(iban_status="malformed"))
    unknown = job.pk + 1000
    client, token = csrf_client(bob)
    form = {"value": GOOD_IBAN, "csrfmiddlewaretoken": token}
    for path, call in (
            ("page", lambda pk: client.get(f"/jobs/{pk}")),
            ("form", lambda pk: client.post(f"/jobs/{pk}/fields/iban", form)),
            ("confirm", lambda pk: client.post(f"/jobs/{pk}/fields/iban", {**form, "confirm": "1"})),
            ("api", lambda pk: patch(api_client(bob), pk, {"value": GOOD_IBAN})),
            ("api, unknown field", lambda pk: patch(api_client(bob), pk, {"value": "x"}, "nope")),
            ("note", lambda pk: client.get(f"/jobs/{pk}/note.txt")),
            ("json", lambda pk: client.get(f"/jobs/{pk}/result.json"))):
        foreign, missing = call(job.pk), call(unknown)
        assert foreign.status_code == missing.status_code == 404, path
        assert foreign.content == missing.content, path
    assert not FieldCorrection.objects.exists()


def test_corrections_never_leak_into_another_tenants_answers(alice, bob, reviewed, api_client):
    alices = reviewed(review_result(iban_status="malformed"), name="alice.pdf")
    bobs = reviewed(review_result(iban_status="malformed"), name="bob.pdf", user=bob)
    assert patch(api_client(alice), alices.pk, {"value": "ALICE-ONLY-IBAN"}).status_code == 200
    assert patch(api_client(bob), bobs.pk, {"value": GOOD_IBAN}).status_code == 200
    bob_client, _ = csrf_client(bob)
    seen = [bob_client.get(url).content.decode() for url in (
        f"/jobs/{bobs.pk}", f"/jobs/{bobs.pk}/note.txt", f"/jobs/{bobs.pk}/result.json", "/jobs/export.csv",
        "/jobs?scope=team")]
    seen.append(json.dumps(api_client(bob).get(f"/jobs/{bobs.pk}").json()))
    assert not any("ALICE-ONLY-IBAN" in text or "alice" in text for text in seen)
    assert GOOD_IBAN in seen[0] and "corrected by you" in seen[0]


def test_a_real_reviews_note_is_written_again_with_the_correction(api_client, alice):
    from agent import samples

    from .conftest import review_document

    job = review_document(alice, samples.BAD_IBAN_PDF.read_bytes(), "invoice-bad-iban.pdf")
    client = api_client(alice)
    before = client.get(f"/jobs/{job.pk}/note.txt").content.decode()
    assert patch(client, job.pk, {"value": GOOD_IBAN}).json()["outcome_text"] == "OK"
    after = client.get(f"/jobs/{job.pk}/note.txt").content.decode()
    # The same note (its document, page count, counts and found values), with the IBAN corrected.
    assert before.splitlines()[0] == after.splitlines()[0] == "Review of invoice-bad-iban.pdf (1 page)"
    assert "7 of 7 required fields found and valid." in after and "1 to correct" in before
    assert f"- IBAN / bank account: {GOOD_IBAN} (checksum (mod 97) and country format valid) (corrected by alice; " \
           "the review read DE89 3704 0044 0532 0130 01)" in after
    assert "To ask the supplier" in before and "To ask the supplier" not in after
    assert client.get(f"/jobs/{job.pk}/result.json").json()["review_draft"] == before.rstrip("\n")
