"""Every admin page for jobs, tenants, members and tokens renders, and shows what triage needs."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.admin.models import LogEntry

from accounts import tokens
from accounts.models import ApiToken, Tenant, User
from documents import store as document_store
from jobs.models import Job
from tests.conftest import name_document

from .conftest import CHANGELIST, STATES, Triage, confirm, start_action

TRIAGE_ACTIONS = {"retry_dead": "dead", "reconcile_done": "unknown", "reconcile_not_done": "unknown",
                  "discard_unknown": "unknown"}


@pytest.fixture
def one_of_each(in_state):
    return {state: in_state(state) for state in ["dead", "unknown", "completed", "leased", "queued"]}


def test_every_job_admin_page_renders(client, triager, one_of_each):
    client.force_login(triager)
    job = one_of_each["dead"]
    urls = [
        "/admin/", "/admin/jobs/", CHANGELIST, f"{CHANGELIST}?state=needs_human",
        *[f"{CHANGELIST}?state={s}" for s in STATES],
        f"{CHANGELIST}?scope__id__exact={job.scope_id}", f"{CHANGELIST}?kind=diagnostic.sleep",
        *[f"{CHANGELIST}?age={band}" for band in ["1h", "1d", "7d", "old"]],
        f"{CHANGELIST}?q={job.pk}", f"{CHANGELIST}?q={job.operation_key}", f"{CHANGELIST}?q=no-such-key",
        f"{CHANGELIST}?o=4", f"{CHANGELIST}?o=-8",
        *[f"{CHANGELIST}{j.pk}/change/" for j in one_of_each.values()],
        f"{CHANGELIST}{job.pk}/history/",
    ]
    for url in urls:
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("action,state", TRIAGE_ACTIONS.items())
def test_every_confirmation_page_renders_with_its_form(client, triager, in_state, action, state):
    job = in_state(state)
    client.force_login(triager)
    page = start_action(client, action, job)
    assert page.status_code == 200
    assert page.template_name == "admin/jobs/job/triage_confirmation.html"
    assert b'name="reason"' in page.content
    assert (b'name="outcome"' in page.content) == (action == "reconcile_done")


def test_every_tenant_member_group_and_token_page_renders_for_a_superuser(client, superuser, alice, triager):
    secret = tokens.issue(alice)
    token = ApiToken.objects.get(digest=tokens.digest(secret))
    group = triager.groups.get()
    client.force_login(superuser)
    urls = [
        "/admin/accounts/tenant/", "/admin/accounts/tenant/add/", f"/admin/accounts/tenant/{alice.tenant_id}/change/",
        "/admin/accounts/user/", "/admin/accounts/user/add/", f"/admin/accounts/user/{alice.pk}/change/",
        f"/admin/accounts/user/{alice.pk}/password/",
        "/admin/auth/group/", "/admin/auth/group/add/", f"/admin/auth/group/{group.pk}/change/",
        "/admin/accounts/apitoken/", "/admin/accounts/apitoken/add/", f"/admin/accounts/apitoken/{token.pk}/change/",
        *[f"/admin/accounts/apitoken/?status={status}" for status in ("live", "expired", "revoked")],
        f"/admin/accounts/apitoken/{token.pk}/delete/",
        *[f"{CHANGELIST}{job.pk}/change/" for job in Job.objects.all()],
    ]
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_the_list_opens_on_unknown_then_dead_jobs(client, triager, in_state):
    queued, dead, completed, unknown = (in_state(s) for s in ["queued", "dead", "completed", "unknown"])
    client.force_login(triager)
    shown = list(client.get(CHANGELIST).context["cl"].result_list)
    assert shown[:2] == [unknown, dead]
    assert set(shown[2:]) == {queued, completed}


def test_the_list_shows_counts_per_state_at_the_top(client, triager, in_state):
    for state in ["dead", "dead", "unknown", "queued"]:
        in_state(state)
    client.force_login(triager)
    text = client.get(CHANGELIST).content.decode()
    for state, n in [("needs_human", 3), ("dead", 2), ("unknown", 1), ("queued", 1), ("completed", 0)]:
        assert f'<span class="count" data-state="{state}">{n}</span>' in text
    assert f'href="{CHANGELIST}?state=dead"' in text
    assert text.index('data-state="unknown"') < text.index('data-state="dead"') < text.index('data-state="queued"')


def test_the_list_columns_say_what_triage_needs(client, triager, in_state, clock):
    job = in_state("dead")
    Job.objects.filter(pk=job.pk).update(created_at=clock.now())  # in_state backdates each job a little more
    clock.advance(hours=2, minutes=5)
    Job.objects.filter(pk=job.pk).update(last_error="x" * 500 + "\nsecond line")
    name_document(job.pk, "invoice-0142.pdf")
    client.force_login(triager)
    text = client.get(CHANGELIST).content.decode()
    assert '<td class="field-scope_column"><span class="job-who">acme</span></td>' in text and "1/3" in text
    # Shortened to its first line (jobs-admin.css keeps it on one), the whole error on hover and on the job's page.
    assert f'<span class="job-error" title="{"x" * 500}\nsecond line">{"x" * 47}…</span>' in text
    assert "2h 5m" in text
    assert ('<td class="field-document_column"><span class="job-document" title="invoice-0142.pdf">'
            'invoice-0142.pdf</span><span class="job-kind">diagnostic.sleep</span></td>') in text
    assert f'<td class="field-submitter"><span class="job-who">{job.submitted_by.username}</span></td>' in text
    # The epoch and the operation key are on the job's page, not in the list's columns.
    head = text[text.index('<table id="result_list">'):text.index("</thead>")]
    assert [h.lower() for h in re.findall(r'<a href="\?o=[^"]*">([^<]+)</a>', head)] == [
        "id", "document / kind", "scope", "submitter", "state", "attempts", "age"]
    assert "<span>Last error</span>" in head and "epoch" not in head.lower() and job.operation_key not in text
    page = client.get(f"{CHANGELIST}{job.pk}/change/").content.decode()
    assert "x" * 500 + "<br>second line" in page


def test_the_admin_carries_the_products_name(client, triager):
    client.force_login(triager)
    text = client.get("/admin/").content.decode()
    assert "Docket staff" in text and "Django administration" not in text


def test_search_finds_a_job_by_its_documents_name_and_the_list_filters_by_submitter(client, triager, in_state,
                                                                                  make_member):
    carol = make_member("acme", "carol")
    mine, carols = in_state("dead"), in_state("dead", user=carol)
    name_document(mine.pk, "Rechnung-Nordlicht-0142.pdf")
    client.force_login(triager)
    assert list(client.get(CHANGELIST, {"q": "nordlicht"}).context["cl"].result_list) == [Job.objects.get(pk=mine.pk)]
    by_carol = client.get(CHANGELIST, {"submitted_by__id__exact": carol.pk}).context["cl"].result_list
    assert list(by_carol) == [carols]


def test_search_finds_a_job_by_id_or_operation_key(client, triager, in_state):
    one, other = in_state("dead"), in_state("dead")
    client.force_login(triager)
    assert list(client.get(CHANGELIST, {"q": str(one.pk)}).context["cl"].result_list) == [one]
    assert list(client.get(CHANGELIST, {"q": f"#{other.pk}"}).context["cl"].result_list) == [other]
    assert list(client.get(CHANGELIST, {"q": other.operation_key}).context["cl"].result_list) == [other]
    assert list(client.get(CHANGELIST, {"q": "nothing-like-it"}).context["cl"].result_list) == []


def test_the_state_filter_has_a_needs_a_human_choice(client, triager, in_state):
    dead, unknown, queued = in_state("dead"), in_state("unknown"), in_state("queued")
    client.force_login(triager)
    assert set(client.get(CHANGELIST, {"state": "needs_human"}).context["cl"].result_list) == {dead, unknown}
    assert list(client.get(CHANGELIST, {"state": "queued"}).context["cl"].result_list) == [queued]


def test_the_age_filter_uses_the_time_since_acceptance(client, triager, in_state, clock):
    old = in_state("dead")
    clock.advance(days=3)
    new = in_state("dead")
    client.force_login(triager)
    assert list(client.get(CHANGELIST, {"age": "1h"}).context["cl"].result_list) == [new]
    assert list(client.get(CHANGELIST, {"age": "7d"}).context["cl"].result_list) == [old]
    assert list(client.get(CHANGELIST, {"age": "old"}).context["cl"].result_list) == []


@pytest.fixture
def reviewed(in_state, progress_kind):
    """An unknown review job with inline text and a stored document."""
    upload = document_store.Upload(b"%PDF-1.4 supplier ACME GmbH IBAN DE89", "invoice.pdf", "application/pdf")
    return in_state("unknown", kind="test.review", payload={"text": "Confidential supplier letter", "pages": 2},
                    document=upload)


def test_the_job_page_shows_triage_the_input_metadata_but_never_the_text_nor_a_way_to_it(client, triager, reviewed):
    job = reviewed
    client.force_login(triager)
    text = client.get(f"{CHANGELIST}{job.pk}/change/").content.decode()
    assert "Confidential supplier letter" not in text and "ACME GmbH" not in text
    assert "text, 28 characters" in text and "<code>pages</code>: 2" in text
    assert "invoice.pdf" in text and job.document.sha256 in text
    assert "/document/" not in text and "/payload/" not in text
    assert client.get(f"{CHANGELIST}{job.pk}/document/").status_code == 403
    assert client.get(f"{CHANGELIST}{job.pk}/payload/").status_code == 403
    assert not LogEntry.objects.exists()


def test_a_superuser_downloads_the_input_as_attachments_and_each_download_is_logged(client, superuser, reviewed):
    job = reviewed
    client.force_login(superuser)
    text = client.get(f"{CHANGELIST}{job.pk}/change/").content.decode()
    assert "Confidential supplier letter" not in text  # the page itself still shows no text
    assert f"{CHANGELIST}{job.pk}/document/" in text and f"{CHANGELIST}{job.pk}/payload/" in text

    response = client.get(f"{CHANGELIST}{job.pk}/document/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"%PDF-1.4 supplier ACME GmbH IBAN DE89"
    assert response["Content-Disposition"].startswith('attachment; filename="invoice.pdf"')
    payload = client.get(f"{CHANGELIST}{job.pk}/payload/")
    assert payload["Content-Disposition"].startswith("attachment") and "no-store" in payload["Cache-Control"]
    assert json.loads(payload.content) == {"text": "Confidential supplier letter", "pages": 2}

    logged = LogEntry.objects.filter(object_id=str(job.pk)).order_by("id")
    assert [(e.user, e.change_message) for e in logged] == [
        (superuser, "Downloaded the document (invoice.pdf)."), (superuser, "Downloaded the payload."),
    ]
    assert b"Downloaded the payload." in client.get(f"{CHANGELIST}{job.pk}/history/").content


def test_a_download_of_a_job_without_a_document_is_a_404_and_not_logged(client, superuser, in_state):
    client.force_login(superuser)
    assert client.get(f"{CHANGELIST}{in_state('dead').pk}/document/").status_code == 404
    assert client.get(f"{CHANGELIST}999999/document/").status_code == 404
    assert client.get(f"{CHANGELIST}999999/payload/").status_code == 404
    assert not LogEntry.objects.exists()


def test_the_job_page_shows_the_timeline_checkpoint_and_result(client, triager, in_state, progress_kind, clock):
    job = in_state("completed", kind="test.review", payload={"text": "abc"})
    progress_kind[job.pk] = {"step": 2, "next_step": "draft", "latest_safe_output": {"supplier": "ACME"}}
    client.force_login(triager)
    text = client.get(f"{CHANGELIST}{job.pk}/change/").content.decode()
    assert "next_step" in text and "draft" in text and "&quot;supplier&quot;: &quot;ACME&quot;" in text
    assert "&quot;ok&quot;: 1" in text  # the result
    timeline = text[text.index('<table class="job-timeline">'):].split("</table>")[0]
    assert timeline.count('<tr><td class="at">') == job.events.count() == 3
    first = job.events.order_by("id").first()
    assert first.actor == f"user:{job.submitted_by_id}"  # said with the member's name, never its id
    assert (f'<td class="at">{first.at:%Y-%m-%d %H:%M:%S}.000</td><td class="from">—</td><td class="to">queued</td>'
            f'<td class="claim">—</td><td class="by">alice</td>') in timeline
    assert '<td class="by">worker:w1</td>' in timeline and "user:" not in text


def test_the_job_page_says_when_a_kind_keeps_no_checkpoint(client, triager, in_state):
    job = in_state("dead")
    client.force_login(triager)
    assert b"this kind keeps no checkpoint" in client.get(f"{CHANGELIST}{job.pk}/change/").content


def test_a_broken_checkpoint_hook_does_not_hide_the_job_page(client, triager, in_state, progress_kind,
                                                              register_triage):
    job = in_state("dead", kind="test.review", payload={})

    def broken(job_id):
        raise RuntimeError("agent table missing")

    register_triage("test.review", Triage(checkpoint_of=broken))
    client.force_login(triager)
    response = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert response.status_code == 200 and b"unavailable: RuntimeError: agent table missing" in response.content


def test_the_history_page_lists_the_triage_log_entries(client, triager, in_state):
    job = in_state("dead")
    client.force_login(triager)
    confirm(client, start_action(client, "retry_dead", job), reason="upstream fixed")
    history = client.get(f"{CHANGELIST}{job.pk}/history/")
    assert history.status_code == 200 and b"upstream fixed" in history.content
    assert LogEntry.objects.get().user == triager


def test_a_superuser_adds_a_tenant_and_a_member_in_it(client, superuser):
    client.force_login(superuser)
    added = client.post("/admin/accounts/tenant/add/", {"slug": "initech", "name": "Initech", "weight": 1})
    assert added.status_code == 302
    tenant = Tenant.objects.get(slug="initech")
    response = client.post("/admin/accounts/user/add/", {
        "username": "peter", "usable_password": "true", "password1": "tps-report-99", "password2": "tps-report-99",
        "tenant": tenant.pk,
    })
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else None
    assert User.objects.get(username="peter").tenant == tenant


def test_a_document_review_job_page_renders_without_its_inline_text(client, triager, in_state):
    job = in_state("queued", kind="document_review", payload={"text": "Invoice 2026-17 from ACME GmbH"})
    client.force_login(triager)
    response = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert response.status_code == 200
    assert b"ACME GmbH" not in response.content and b"text, 30 characters" in response.content
    assert b"none yet" in response.content  # the agent's hook answers; no checkpoint before a claim


def test_staff_set_a_tenants_weight_and_limits_and_its_running_count_follows(client, superuser, alice, clock):
    from accounts.models import Tenant
    from jobs import queue

    job = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                       operation_key="k1", now=clock.now(), offered_only=False).job
    assert queue.claim(now=clock.now(), worker="w1").job_id == job.pk  # one running, while unlimited
    client.force_login(superuser)
    response = client.post(f"/admin/accounts/tenant/{alice.tenant_id}/change/", {
        "slug": "acme", "name": "Acme", "weight": 3, "max_running": 2, "max_waiting": 50})
    assert response.status_code == 302
    tenant = Tenant.objects.get(pk=alice.tenant_id)
    assert (tenant.weight, tenant.max_running, tenant.max_waiting, tenant.running) == (3, 2, 50, 1)
