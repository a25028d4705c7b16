"""Possible duplicates: the same invoice sent again (the same file, or the same supplier and invoice
number in another file) is flagged on its page, in the list and its filter, in the CSV and in the
API, against the earliest earlier review of the same tenant, and never against another tenant's."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import jsonschema
import pytest
from django.db import connection

from agent import samples
from agent.models import DocumentFingerprint
from agent.review import duplicates, workflow
from agent.review.planner import LocalPlanner
from agent.samples.make_samples import invoice_lines
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.context import JobContext
from tests.conftest import claim_first, drive_to
from web import status
from web.openapi import openapi

CLEAN = samples.CLEAN_PDF.read_bytes()  # Nordlicht Bürobedarf GmbH, VAT DE136695976, INV-2026-0142


def text_invoice(**changes) -> bytes:
    """The sample invoice as a text file: another file than the PDF, the same invoice unless changed."""
    return ("\n".join(invoice_lines(**changes)) + "\n").encode()


@pytest.fixture
def submit(clock, alice):
    """Accept a document_review job for ``content`` (a PDF or a text file), as ``user``."""
    counter = iter(range(1, 10_000))

    def submit_(content: bytes, *, user=None, name: str | None = None):
        user = user or alice
        pdf = content.startswith(b"%PDF")
        name = name or ("invoice.pdf" if pdf else "invoice.txt")
        return acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                                 operation_key=f"dup-{next(counter)}", now=clock.now(),
                                 document=Upload(content, name, "application/pdf" if pdf else "text/plain")).job

    return submit_


@pytest.fixture
def review(clock):
    """Run the real review of an accepted job in-process, as a worker would, and complete it."""

    def review_(job):
        claim = claim_first(job, now=clock.now())
        ctx = JobContext(claim, clock=clock)
        result = workflow.run(ctx, planner=LocalPlanner())
        summary = kinds.get("document_review").summarize(result)
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now(), summary=summary)
        job.refresh_from_db()
        return job

    return review_


@pytest.fixture
def reviewed(submit, review, clock):
    def reviewed_(content: bytes, **kwargs):
        clock.advance(seconds=1)
        return review(submit(content, **kwargs))

    return reviewed_


def duplicate_of(job):
    return status.duplicates_of([job]).get(job.pk)


# --- What is flagged ------------------------------------------------------------------------------


def test_the_same_file_sent_again_is_a_possible_duplicate_of_the_first(reviewed, alice, make_member):
    colleague = make_member("acme", "carol")
    first = reviewed(CLEAN)
    again = reviewed(CLEAN, user=colleague, name="copy.pdf")
    third = reviewed(CLEAN)
    assert duplicate_of(first) is None
    found = duplicate_of(again)
    assert (found.job_id, found.match, found.by, found.by_id) == (first.pk, "same file", "alice", alice.pk)
    assert found.sent_at == first.created_at and found.document_name == "invoice.pdf"
    assert duplicate_of(third).job_id == first.pk  # the earliest, not the last one


def test_another_file_with_the_same_vat_id_and_number_is_flagged(reviewed):
    first = reviewed(CLEAN)
    # The supplier's name spelt otherwise: the VAT id names the supplier.
    other = reviewed(text_invoice(), name="nordlicht-copy.txt")
    assert other.document.sha256 != first.document.sha256
    assert other.result["fields"]["vat_id"]["value"] == "DE136695976"
    found = duplicate_of(other)
    assert (found.job_id, found.match) == (first.pk, "same supplier and invoice number")


def test_another_number_from_the_same_supplier_is_not_flagged(reviewed):
    reviewed(CLEAN)
    other = reviewed(text_invoice(number="INV-2026-0199"))
    assert other.result["fields"]["invoice_number"]["value"] == "INV-2026-0199"
    assert duplicate_of(other) is None


def test_without_a_vat_id_the_suppliers_name_decides_in_any_case(reviewed):
    first = reviewed(text_invoice(vat=None))
    same = reviewed(text_invoice(vat=None).replace(b"Supplier: Nordlicht B\xc3\xbcrobedarf GmbH",
                                                   "Supplier: NORDLICHT BÜROBEDARF gmbh".encode()))
    assert same.result["fields"]["supplier_name"]["value"] != first.result["fields"]["supplier_name"]["value"]
    assert duplicate_of(same).job_id == first.pk


def test_the_supplier_key_and_the_number_are_normalised():
    assert duplicates.supplier_key({"vat_id": {"value": "de 136.695-976"}}) == "vat:DE136695976"
    assert duplicates.supplier_key({"vat_id": {"value": ""}, "supplier_name": {"value": " Acme\tB.V. "}}) == (
        "name:acme b.v.")
    assert duplicates.supplier_key({"vat_id": {"value": None}, "supplier_name": {"status": "missing"}}) == ""
    assert duplicates.invoice_number_key({"invoice_number": {"value": " INV  2026-0142 "}}) == "inv 2026-0142"


def test_another_tenants_identical_file_is_never_a_duplicate(reviewed, api_client, alice, bob):
    alices = reviewed(CLEAN)
    bobs = reviewed(CLEAN, user=bob)
    bobs_again = reviewed(CLEAN, user=bob)
    assert duplicate_of(bobs) is None
    assert duplicate_of(bobs_again).job_id == bobs.pk  # his own earlier one, not alice's
    assert duplicates.of_jobs([bobs.pk, bobs_again.pk]).keys() == {bobs_again.pk}
    # Where ids appear, another tenant's id is the usual 404, the same as an unknown one.
    client = api_client(bob)
    foreign, unknown = client.get(f"/jobs/{alices.pk}"), client.get(f"/jobs/{alices.pk + 1000}")
    assert foreign.status_code == 404 and foreign.content == unknown.content
    listed = client.get("/jobs?duplicates=1").json()["jobs"]
    assert [(job["id"], job["duplicate_of"]["id"]) for job in listed] == [(bobs_again.pk, bobs.pk)]
    assert api_client(alice).get("/jobs?duplicates=1").json()["jobs"] == []


def test_a_later_copy_finished_first_is_flagged_when_the_earlier_one_finishes(submit, review, clock):
    earlier = submit(CLEAN)
    clock.advance(seconds=1)
    later = submit(CLEAN)
    review(later)  # a second worker was quicker
    assert duplicate_of(later) is None
    review(earlier)
    assert duplicate_of(earlier) is None
    assert (duplicate_of(later).job_id, duplicate_of(later).match) == (earlier.pk, "same file")


def test_jobs_never_reviewed_are_no_originals(submit, reviewed, clock, accept):
    """A document cancelled before its review read it, or whose review failed, was never reviewed,
    so never paid from Docket: the copy sent again is not flagged against it."""
    cancelled = submit(CLEAN)
    drive_to(cancelled, "cancelled", now=clock.now())
    failed = submit(CLEAN)
    drive_to(failed, "dead", now=clock.now())
    again = reviewed(CLEAN)
    assert duplicate_of(again) is None
    assert not DocumentFingerprint.objects.filter(job_id__in=[cancelled.pk, failed.pk]).exists()


def test_submit_again_of_a_failed_job_is_flagged_only_against_an_earlier_review(
        submit, reviewed, review, browser_client, alice, clock):
    original = reviewed(CLEAN)
    failed = submit(CLEAN, name="resent.pdf")
    drive_to(failed, "dead", now=clock.now())
    client = browser_client(alice)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(f"/jobs/{failed.pk}").content.decode())
    response = client.post(f"/jobs/{failed.pk}/again", {"idempotency_key": "again-1",
                                                        "csrfmiddlewaretoken": token.group(1)})
    assert response.status_code == 303
    resubmitted = failed.__class__.objects.get(pk=int(response["Location"].rsplit("/", 1)[1]))
    clock.advance(seconds=(resubmitted.created_at - clock.now()).total_seconds() + 1)  # the web's clock sent it
    review(resubmitted)
    assert duplicate_of(resubmitted).job_id == original.pk


def test_the_look_ups_use_their_indexes(reviewed, alice):
    fingerprint = DocumentFingerprint.objects.get(job=reviewed(CLEAN))
    earlier = DocumentFingerprint.objects.filter(tenant_id=alice.tenant_id, job_id__lt=fingerprint.job_id + 1)
    by_file = earlier.filter(sha256=fingerprint.sha256).order_by("job_id").values_list("job_id")[:1]
    by_invoice = earlier.filter(supplier_key=fingerprint.supplier_key,
                                invoice_number=fingerprint.invoice_number).order_by("job_id").values_list("job_id")[:1]
    flagged = duplicates.flagged(alice.tenant_id)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # tiny tables: ask whether an index *can* serve
        plans = [query.explain() for query in (by_file, by_invoice, flagged)]
    if connection.vendor == "sqlite":
        for plan, index in zip(plans, ("fingerprint_file_idx", "fingerprint_invoice_idx", "fingerprint_duplicate_idx"),
                               strict=True):
            assert index in plan, plan
    else:
        assert all("Index" in plan and "Seq Scan" not in plan for plan in plans), plans


# --- Where it is shown ----------------------------------------------------------------------------


def test_the_job_page_says_which_earlier_job_and_when_and_by_whom(reviewed, browser_client, alice, make_member):
    colleague = make_member("acme", "bob-of-acme")
    first = reviewed(CLEAN, user=colleague)
    again = reviewed(CLEAN)
    html = browser_client(alice).get(f"/jobs/{again.pk}").content.decode()
    assert 'id="duplicate"' in html
    assert f'<a href="/jobs/{first.pk}">#{first.pk} invoice.pdf</a> (sent <time datetime=' in html
    assert "by bob-of-acme): same file." in html
    mine = reviewed(text_invoice())
    html = browser_client(alice).get(f"/jobs/{mine.pk}").content.decode()
    assert "by bob-of-acme): same supplier and invoice number." in html
    own = browser_client(colleague).get(f"/jobs/{reviewed(CLEAN, user=colleague).pk}").content.decode()
    assert "by you): same file." in own
    assert 'id="duplicate"' not in browser_client(colleague).get(f"/jobs/{first.pk}").content.decode()


def test_the_list_marks_duplicates_and_filters_them(reviewed, browser_client, api_client, alice):
    first = reviewed(CLEAN)
    other = reviewed(text_invoice(number="INV-2026-0199"))
    again = reviewed(CLEAN)
    page = browser_client(alice).get("/jobs").content.decode()
    assert page.count('class="flag-duplicate"') == 1
    assert f'<span class="flag-duplicate">Possible duplicate of #{first.pk}</span>' in page
    assert 'href="?duplicates=1" id="duplicates-filter">Possible duplicates</a>' in page
    filtered = browser_client(alice).get("/jobs?duplicates=1").content.decode()
    assert f'id="job-{again.pk}"' in filtered and f'id="job-{first.pk}"' not in filtered
    assert f'id="job-{other.pk}"' not in filtered
    assert '<input type="hidden" name="duplicates" value="1">' in filtered
    assert 'id="duplicates-filter" aria-current="true"' in filtered
    listed = api_client(alice).get("/jobs?duplicates=1").json()
    assert [job["id"] for job in listed["jobs"]] == [again.pk]
    every = {job["id"]: job["duplicate_of"] for job in api_client(alice).get("/jobs").json()["jobs"]}
    assert every[first.pk] is None and every[other.pk] is None and every[again.pk]["id"] == first.pk


def test_the_csv_has_a_column_for_it(reviewed, browser_client, alice):
    first = reviewed(CLEAN)
    again = reviewed(CLEAN)
    response = browser_client(alice).get("/jobs/export.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8")[1:])))
    assert list(rows[0])[-8:] == ["Possible duplicate of", "Work state", "Assignee", "Job", "Link", "State",
                                  "Submitted (UTC)", "Reviewed at (UTC)"]
    by_job = {row["Job"]: row["Possible duplicate of"] for row in rows}
    sent = first.created_at.strftime("%Y-%m-%d %H:%M")
    assert by_job == {str(first.pk): "", str(again.pk): f"#{first.pk} (same file; sent {sent} UTC by alice)"}


def test_the_api_gives_duplicate_of_as_documented(reviewed, api_client, alice):
    first = reviewed(CLEAN)
    again = reviewed(text_invoice())
    client = api_client(alice)
    doc = openapi()
    body = client.get(f"/jobs/{again.pk}").json()
    assert body["duplicate_of"] == {"id": first.pk, "sent_at": first.created_at.isoformat(), "by": "alice",
                                    "match": "same supplier and invoice number", "status_url": f"/jobs/{first.pk}"}
    assert client.get(f"/jobs/{first.pk}").json()["duplicate_of"] is None
    for path, answer in (("/jobs/{id}", body), ("/jobs", client.get("/jobs").json())):
        schema = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        jsonschema.Draft202012Validator({**schema, "components": doc["components"]}).validate(answer)
    assert "duplicates" in {p["name"] for p in doc["paths"]["/jobs"]["get"]["parameters"]}
    assert set(doc["components"]["schemas"]["DuplicateOf"]["properties"]) == {
        "id", "sent_at", "by", "match", "status_url"}


def test_a_retention_deleting_the_earlier_job_drops_the_flag(reviewed, clock):
    first = reviewed(CLEAN)
    again = reviewed(CLEAN)
    queue.delete_finished(ids=[first.pk], cutoff=clock.now() + timedelta(days=1))
    assert duplicate_of(again) is None and DocumentFingerprint.objects.filter(job=again).exists()


@pytest.mark.django_db(transaction=True)
def test_two_copies_recorded_at_once_on_postgresql_do_not_miss_each_other(accept, clock):
    """A record sees only what has committed: without the tenant's lock, two copies recorded at
    the same moment would each find no other, and neither be flagged. With it, the second waits
    for the first to commit, then finds it."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time: the fenced transactions take turns already")
    import threading

    from django.db import connections, transaction

    earlier, later = (accept("document_review", {"text": "Invoice INV-1"}) for _ in range(2))
    fields = {"vat_id": {"value": "DE136695976"}, "invoice_number": {"value": "INV-1"}}
    recorded, second_done = threading.Event(), threading.Event()

    def someone_waits_for_an_advisory_lock() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                           "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
            return cursor.fetchone()[0] > 0

    def first():
        try:
            with transaction.atomic():
                duplicates.record(job_id=earlier.pk, tenant_id=earlier.scope_id, sha256="", fields=fields,
                                  now=clock.now())
                recorded.set()
                # Commit once the second record waits for the lock (or, without one, has finished).
                while not (second_done.is_set() or someone_waits_for_an_advisory_lock()):
                    second_done.wait(0.01)
        finally:
            connections.close_all()

    def second():
        try:
            duplicates.record(job_id=later.pk, tenant_id=later.scope_id, sha256="", fields=fields, now=clock.now())
        finally:
            second_done.set()
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=lambda: recorded.wait(30) and second())]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert recorded.is_set() and second_done.is_set()
    assert DocumentFingerprint.objects.get(job=later).duplicate_of_id == earlier.pk
