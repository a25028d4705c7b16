"""The htmx pages: log in, submit once, watch a job, list jobs; CSRF and escaping hold."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jobs.models import Job
from tests.conftest import name_document

from .responses import HTMX, csrf_token, form_key

# --- Log in, identity ------------------------------------------------------------------------


def test_pages_send_anonymous_browsers_to_the_login_page():
    client = Client(headers={"Accept": "text/html"})
    for url in ("/jobs", "/jobs/new", "/jobs/1"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_an_expired_session_on_an_htmx_poll_redirects_the_whole_page_to_log_in():
    response = Client().get("/jobs/1?poll=2", headers=HTMX)
    assert response.status_code == 204 and response["HX-Redirect"].startswith("/accounts/login/")


def test_alice_logs_in_with_her_password_and_lands_on_her_list(alice):
    client = Client(enforce_csrf_checks=True, headers={"Accept": "text/html"})
    page = client.get("/accounts/login/")
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-pass-123",
                                                "csrfmiddlewaretoken": csrf_token(client, page)}, follow=True)
    assert response.redirect_chain[-1][0] == "/jobs"
    html = response.content.decode()
    assert "<h1>My documents</h1>" in html and "alice <span class=\"team\">· Acme</span>" in html
    assert 'class="button button-primary" href="/jobs/new">Review documents</a>' in html


# --- Submit ------------------------------------------------------------------------------------


def test_each_rendered_form_carries_its_own_operation_key(browser_client, alice):
    client = browser_client(alice)
    assert form_key(client.get("/jobs/new")) != form_key(client.get("/jobs/new"))


def test_submitting_the_form_redirects_to_the_job_page(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    response = client.post("/jobs", {"kind": "webtest.echo", "text": "hello", "idempotency_key": form_key(page),
                                     "csrfmiddlewaretoken": csrf_token(client, page)})
    job = Job.objects.get()
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}"
    assert job.payload == {"text": "hello"} and job.submitted_by == alice


def test_a_double_click_or_resubmission_makes_one_job(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    form = {"kind": "webtest.echo", "text": "hello", "idempotency_key": form_key(page),
            "csrfmiddlewaretoken": csrf_token(client, page)}
    first = client.post("/jobs", form)
    second = client.post("/jobs", form)
    assert first["Location"] == second["Location"]
    assert Job.objects.count() == 1


def test_an_uploaded_document_is_accepted_through_htmx_with_a_client_redirect(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    response = client.post("/jobs", {
        "kind": "webtest.echo", "idempotency_key": form_key(page),
        "document": SimpleUploadedFile("invoice.txt", b"Supplier: ACME", content_type="text/plain"),
    }, headers={**HTMX, "X-CSRFToken": csrf_token(client, page)})
    job = Job.objects.get()
    assert response["HX-Redirect"] == f"/jobs/{job.pk}"
    assert job.document.original_name == "invoice.txt"


def test_an_htmx_post_without_the_csrf_token_is_refused(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    response = client.post("/jobs", {"kind": "webtest.echo", "text": "x", "idempotency_key": form_key(page)},
                           headers=HTMX)
    assert response.status_code == 403
    assert not Job.objects.exists()


def test_a_browser_post_with_a_wrong_csrf_token_gets_the_error_page(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    response = client.post("/jobs", {"kind": "webtest.echo", "text": "x", "idempotency_key": form_key(page),
                                     "csrfmiddlewaretoken": "x" * 64})
    assert response.status_code == 403 and b"<h1>This page has expired</h1>" in response.content
    assert b"reload the page" in response.content and b"CSRF check failed" not in response.content
    assert not Job.objects.exists()


def test_a_session_json_post_without_the_csrf_token_is_refused_as_json(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/jobs", {"kind": "diagnostic.noop", "payload": {}}, content_type="application/json",
                           headers={"Idempotency-Key": "k"})
    assert response.status_code == 403 and response.json()["error"] == "csrf_failed"
    assert not Job.objects.exists()


def test_an_invalid_form_comes_back_with_the_error_and_the_same_key(browser_client, alice):
    client = browser_client(alice)
    page = client.get("/jobs/new")
    response = client.post("/jobs", {"kind": "diagnostic.sleep", "payload": '{"seconds": "soon"}',
                                     "idempotency_key": form_key(page)},
                           headers={**HTMX, "X-CSRFToken": csrf_token(client, page)})
    assert response.status_code == 400
    assert b'id="form-error"' in response.content and b"payload.seconds" in response.content
    assert form_key(response) == form_key(page)
    assert b"<html" not in response.content  # the form partial only, for htmx to swap
    assert not Job.objects.exists()


@pytest.mark.parametrize("document_bytes", [0, None])
def test_a_form_over_the_size_limits_comes_back_as_413_with_the_form(browser_client, alice, settings,
                                                                      document_bytes):
    """Fields over DATA_UPLOAD_MAX_MEMORY_SIZE (found by the CSRF check, which reads the form),
    and a body declared larger than any document (refused before anything reads it)."""
    from web import edge

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100  # smaller than the form's own fields
    client = browser_client(alice)
    page = client.get("/jobs/new")
    form = {"kind": "webtest.echo", "idempotency_key": form_key(page), "text": "y" * 300,
            "csrfmiddlewaretoken": csrf_token(client, page)}
    size = edge.max_request_bytes() + 1 if document_bytes is None else document_bytes
    if size:
        form["document"] = SimpleUploadedFile("big.txt", b"x" * size, content_type="text/plain")
    response = client.post("/jobs", form, headers=HTMX)
    assert response.status_code == 413, response.content[:300]
    assert b'id="form-error"' in response.content and b"<html" not in response.content
    assert form_key(response) != form_key(page)  # the refused body was not read back into the form
    assert not Job.objects.exists()


def test_after_back_a_changed_form_makes_a_new_job_and_the_same_form_finds_the_first(browser_client, alice):
    """The form's key is spent by the first send; what it carries decides which job it means."""
    client = browser_client(alice)
    page = client.get("/jobs/new")
    base = {"kind": "webtest.echo", "idempotency_key": form_key(page), "csrfmiddlewaretoken": csrf_token(client, page)}
    first = client.post("/jobs", {**base, "text": "first"})
    changed = client.post("/jobs", {**base, "text": "changed after going back"})
    again = client.post("/jobs", {**base, "text": "first"})
    assert first.status_code == changed.status_code == again.status_code == 303
    assert again["Location"] == first["Location"] != changed["Location"]
    assert sorted(Job.objects.values_list("payload__text", flat=True)) == ["changed after going back", "first"]


# --- The job page ---------------------------------------------------------------------------------


def test_the_job_page_polls_its_status_starting_at_one_second(browser_client, alice, accept):
    job = accept()
    response = browser_client(alice).get(f"/jobs/{job.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'hx-get="/jobs/{job.pk}?poll=1"' in html and 'hx-trigger="load delay:1s, poll-retry"' in html
    assert "data-poll" in html  # static/jobs.js re-arms a poll that failed (poll-retry)
    assert 'src="/static/htmx.min.js"' in html and "unpkg" not in html and "cdn" not in html.lower()


@pytest.mark.parametrize("poll, delay", [(1, 1), (2, 2), (3, 3), (4, 5), (5, 5), (50, 5)])
def test_each_poll_backs_off_until_five_seconds(browser_client, alice, accept, poll, delay):
    job = accept()
    response = browser_client(alice).get(f"/jobs/{job.pk}?poll={poll}", headers=HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="status"')
    assert f'?poll={poll + 1}"' in html and f'hx-trigger="load delay:{delay}s, poll-retry"' in html


def test_a_terminal_job_stops_polling(browser_client, alice, completed_job):
    job = completed_job({"ok": True})
    response = browser_client(alice).get(f"/jobs/{job.pk}?poll=3", headers=HTMX)
    assert b'id="status"' in response.content
    assert b"hx-trigger" not in response.content and b"hx-get" not in response.content
    assert b"data-poll" not in response.content


REVIEW = {
    "fields": {
        "supplier_name": {"status": "present", "value": "ACME GmbH", "detail": None},
        "vat_id": {"status": "malformed", "value": "DE123", "detail": "bad check digit"},
        "invoice_date": {"status": "present", "value": "2026-03-14", "detail": ""},
        "currency": {"status": "present", "value": "EUR", "detail": ""},
        "total_amount": {"status": "present", "value": "1234.5", "detail": ""},
        "iban": {"status": "missing", "value": None, "detail": "not found"},
    },
    "draft": "Review of invoice.pdf (1 page)\n\nTo ask the supplier (ready to paste into your email):\n"
             "Regarding your invoice: please send your VAT id.\nThank you.",
    "steps": [{"tool": "extract", "at": "t"}, {"tool": "validate", "at": "t"}, {"tool": "draft", "at": "t"}],
    "warnings": ["vat_id has a bad check digit"],
    "pages": 1,
}


def review_job(completed_job, result):
    return completed_job(result, kind="document_review", payload={"text": "Supplier: ACME GmbH"})


def test_a_review_result_shows_the_fields_table_and_the_draft_with_a_copy_button(browser_client, alice,
                                                                                   completed_job):
    job = review_job(completed_job, REVIEW)
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert 'id="fields"' in html and "ACME GmbH" in html and "bad check digit" in html
    # Labels and checks in words; dates and amounts formatted for people.
    fields_table = html.split('id="fields"')[1].split("</table>")[0]
    shown = re.sub(r"<[^>]+>", " ", fields_table)  # what is read, not the ids and URLs the forms use
    assert "VAT / tax id" in html and "IBAN / bank account" in html and "vat_id" not in shown
    assert 'badge-malformed">To correct<' in html and 'badge-missing">Not found<' in html
    assert 'badge-present">OK<' in html
    assert "14 March 2026" in html and "EUR 1,234.50" in html
    # The message for the supplier alone, with its own Copy button; the whole note behind it.
    message = re.search(r'<pre id="supplier-message" class="draft">(.*?)</pre>', html, re.S).group(1)
    assert message == "Regarding your invoice: please send your VAT id.\nThank you."
    assert 'data-copy="#supplier-message">Copy message to supplier</button>' in html
    assert 'id="draft"' in html and "Review of invoice.pdf" in html and 'data-copy="#draft"' in html
    assert f'href="/jobs/{job.pk}/note.txt" download' in html and f'href="/jobs/{job.pk}/result.json" download' in html
    assert 'id="result"' not in html


def test_a_review_with_nothing_to_ask_has_no_message_to_copy(browser_client, alice, completed_job):
    clean = {**REVIEW, "fields": {"supplier_name": REVIEW["fields"]["supplier_name"]},
             "draft": "Review of invoice.pdf (1 page)\nAll required fields are present and pass their checks."}
    html = browser_client(alice).get(f"/jobs/{review_job(completed_job, clean).pk}").content.decode()
    assert "supplier-message" not in html and "Nothing to ask the supplier" in html


def test_the_kind_presents_its_result_so_another_kinds_review_shaped_result_is_json(browser_client, alice,
                                                                                    completed_job):
    """The job page knows no result shape: only the kind that made a result chooses its template."""
    job = completed_job(REVIEW, kind="webtest.echo")
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert 'id="result"' in html and "&quot;supplier_name&quot;" in html
    assert 'id="fields"' not in html and 'id="draft"' not in html


def test_a_kind_is_shown_by_the_pages_its_app_registered_and_by_no_other_kinds(browser_client, api_client, alice,
                                                                               completed_job):
    """The pages ask what the kind's app registered (web.kind_pages); a kind that registered nothing
    offers no note and no corrections, whatever shape its result has."""
    from web import kind_pages

    class EchoPages(kind_pages.GenericPages):
        def note(self, result: dict) -> str:
            return f"echoed {len(result)} keys"

    job = completed_job(REVIEW, kind="webtest.echo")
    client = browser_client(alice)
    assert client.get(f"/jobs/{job.pk}/note.txt").status_code == 404
    refused = api_client(alice).patch(f"/jobs/{job.pk}/fields/iban", data='{"value": "x"}',
                                      content_type="application/json")
    assert refused.status_code == 409 and refused.json()["error"] == "not_correctable"
    with kind_pages.registered("webtest.echo", EchoPages()):
        assert client.get(f"/jobs/{job.pk}/note.txt").content == f"echoed {len(REVIEW)} keys\n".encode()


def test_a_review_reconciled_by_staff_with_a_note_is_shown_as_json(browser_client, alice, completed_job):
    job = review_job(completed_job, {"note": "paid by phone"})
    html = browser_client(alice).get(f"/jobs/{job.pk}?poll=2", headers=HTMX).content.decode()
    assert 'id="result"' in html and "paid by phone" in html and 'id="fields"' not in html


def test_the_jobs_app_never_imports_the_agent():
    """Dependencies point one way: agent/ registers its kind (and its result template) with jobs/."""
    import ast
    from pathlib import Path

    import jobs

    imported = set()
    for path in Path(jobs.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {(path.name, alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add((path.name, node.module or ""))
    assert imported and not [(f, m) for f, m in imported if m == "agent" or m.startswith("agent.")]


def test_another_result_shape_is_shown_as_json(browser_client, alice, completed_job):
    job = completed_job({"slept": 1.5, "attempt": 1})
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert 'id="result"' in html and "&quot;slept&quot;: 1.5" in html and 'id="fields"' not in html


def test_document_derived_text_is_escaped(browser_client, alice, completed_job):
    evil = "<script>alert(1)</script>"
    job = review_job(completed_job, {"fields": {"supplier_name": {"status": "present", "value": evil, "detail": evil}},
                                     "draft": evil})
    name_document(job.pk, evil)
    html = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert 'id="fields"' in html and 'id="draft"' in html  # shown by the review's own template
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_another_tenants_job_page_is_the_same_404_as_an_unknown_one(browser_client, bob, accept):
    job = accept()  # alice's
    client = browser_client(bob)
    foreign, unknown = client.get(f"/jobs/{job.pk}"), client.get(f"/jobs/{job.pk + 1000}")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.content == unknown.content and b"ACME" not in foreign.content


# --- The list ---------------------------------------------------------------------------------


def test_the_list_shows_the_tenants_jobs_newest_first_with_state_badges(browser_client, alice, bob, accept,
                                                                       completed_job):
    done = completed_job({"ok": True})
    queued = accept()
    bobs = accept(user=bob)
    html = browser_client(alice).get("/jobs").content.decode()
    assert html.index(f'id="job-{queued.pk}"') < html.index(f'id="job-{done.pk}"')
    assert f'id="job-{bobs.pk}"' not in html
    assert 'badge state state-queued">Waiting<' in html and 'badge state state-completed">Done<' in html


def test_the_list_polls_its_rows_while_a_job_runs_and_stops_when_none_does(browser_client, alice, accept,
                                                                          completed_job):
    client = browser_client(alice)
    done = completed_job({"ok": True})
    rows = client.get("/jobs?state=completed", headers=HTMX).content.decode()
    assert rows.lstrip().startswith('<tbody id="rows"') and "hx-trigger" not in rows and f"job-{done.pk}" in rows
    accept()
    rows = client.get("/jobs", headers=HTMX).content.decode()
    assert 'hx-get="/jobs?page=1"' in rows and 'hx-trigger="load delay:3s, poll-retry"' in rows
    rows = client.get("/jobs?q=inv&needs_action=1", headers=HTMX).content.decode()
    assert "hx-trigger" not in rows  # the waiting job needs no action: nothing live on this page
    rows = client.get("/jobs?state=queued&q=", headers=HTMX).content.decode()
    assert 'hx-get="/jobs?state=queued&amp;page=1"' in rows  # the poll keeps the filters


def test_the_list_filters_by_state_and_pages(browser_client, alice, accept, completed_job):
    from web.status import PAGE_SIZE

    done = completed_job({"ok": True})
    for _ in range(PAGE_SIZE):
        accept()
    client = browser_client(alice)
    assert f'id="job-{done.pk}"'.encode() not in client.get("/jobs").content
    assert f'id="job-{done.pk}"'.encode() in client.get("/jobs?page=2").content
    filtered = client.get("/jobs?state=completed").content.decode()
    assert f'id="job-{done.pk}"' in filtered and filtered.count('id="job-') == 1


def test_the_openapi_description_is_served(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200 and response.json()["openapi"].startswith("3.1")
