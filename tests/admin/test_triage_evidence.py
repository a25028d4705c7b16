"""What a staff job page gives triage: an unknown job's evidence (what its provider call was and when,
never what was sent), a line of guidance for each state, members by name, the submitter's page and
the tenant's other jobs of the same file."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from io import StringIO

import pytest
from django.core.management import call_command

from agent.models import ProviderCall
from agent.review import model_reader
from agent.review import planner as planners
from agent.review.planner import ChatCompletionsPlanner
from documents.store import Upload
from jobs import kinds, queue
from jobs.admin import utc
from jobs.kinds import JobFailed
from jobs.models import Job
from tests.agent.conftest import drive
from tests.agent.fake_provider import FakeProvider
from tests.conftest import claim_first

from .conftest import CHANGELIST, Triage, confirm, start_action

CANARY = "Zebracorn Canary 4471"
TEXT = f"""Muster Handels GmbH · Musterstraße 1 · 10115 Berlin
USt-IdNr. DE 136 695 976
Rechnungsnr. 30064443            Datum: 7. Mai 2026
Kunde: {CANARY}
Gesamtbetrag 1.234,56 €
Bankverbindung IBAN DE89 3704 0044 0532 0130 00
"""
LEASE = timedelta(minutes=2)


@pytest.fixture
def provider():
    server = FakeProvider()
    server.start()
    yield server
    server.stop()


def page_of(client, job: Job) -> str:
    response = client.get(f"{CHANGELIST}{job.pk}/change/")
    assert response.status_code == 200
    return response.content.decode()


def evidence(page: str) -> dict[str, str]:
    """The Evidence block's lines, label -> value, as the page shows them."""
    if 'class="job-evidence"' not in page:
        return {}
    table = page[page.index('<table class="job-evidence">'):].split("</table>", maxsplit=1)[0]
    return {unescape(label): unescape(value)
            for label, value in re.findall(r'<tr><th scope="row">(.*?)</th><td>(.*?)</td></tr>', table)}


def guidance_of(page: str) -> str:
    found = re.search(r'<p class="triage-guidance" id="guidance"><strong>What to do:</strong> (.*?)</p>', page)
    assert found, "no guidance on the page"
    return unescape(found.group(1))


def review(accept, clock):
    """A review of inline text with a canary line, claimed as a worker claims it."""
    job = accept("document_review", {"text": TEXT})
    return job, queue.claim(now=clock.now(), worker="w1", lease=LEASE)


def provider_planner(provider, *, timeout_at: str = "") -> ChatCompletionsPlanner:
    """The provider's planner; the call whose key ends with ``timeout_at`` gets no answer in time."""
    planner = ChatCompletionsPlanner(base_url=provider.url, model="test-model")
    post = planner.post

    def post_or_time_out(body, *, key, timeout):
        if timeout_at and key.endswith(timeout_at):
            raise JobFailed(f"no answer from the planner within {timeout:.0f} s", code="planner_timeout")
        return post(body, key=key, timeout=timeout)

    planner.post = post_or_time_out  # type: ignore[method-assign]
    return planner


# --- The evidence of an unknown job


def test_an_unknown_job_shows_what_its_provider_call_was_and_when(client, triager, accept, clock, provider):
    from jobs.context import JobContext

    job, claim = review(accept, clock)
    ctx = JobContext(claim, clock=clock)
    # Steps 1 and 2 are planned and run; the planner's call for step 3 times out: unknown.
    assert drive(ctx, provider_planner(provider, timeout_at="step-2")).state == "unknown"
    job.refresh_from_db()
    assert [r["headers"]["Idempotency-Key"] for r in provider.requests] == [
        f"job-{job.pk}-epoch-1-step-0", f"job-{job.pk}-epoch-1-step-1"]
    client.force_login(triager)
    page = page_of(client, job)

    assert evidence(page) == {
        "External call marked started": f"{utc(job.external_started_at)}, claim 1: planner call, step 3",
        "Became unknown": f"{utc(job.finished_at)}, failed after external start (worker)",
        "Provider call": "which step comes next (the planner) (claim 1)",
        "Step": "3 of 3: draft",
        "Idempotency key": f"job-{job.pk}-epoch-1-step-2",
        "Provider's request id": "none: no answer was received",
        "Answer": "none saved",
        "Last saved step": f"2 of 3: validate, saved at {utc(clock.now())}",
    }
    assert guidance_of(page).startswith("The provider did not answer in time. A timeout during a provider outage: "
                                        "the provider did nothing you can see, and reconciling as not done reruns it")
    # What was derived from the document may show (the checkpoint's fields, the lines they were read
    # from); the document's text, and what was sent to the provider, never do.
    assert CANARY not in page  # a line of the document that is no field's value
    assert planners.SYSTEM_PROMPT not in unescape(page) and model_reader.SYSTEM_PROMPT not in unescape(page)


def test_an_answer_saved_before_the_worker_died_shows_its_request_id_and_is_reused(
        client, triager, accept, clock, provider, monkeypatch):
    from jobs.context import JobContext

    job, claim = review(accept, clock)
    ctx = JobContext(claim, clock=clock)

    def killed(what="external call"):
        raise SystemExit("killed after the answer was saved, before the marker was cleared")

    monkeypatch.setattr(ctx, "clear_external_start", killed)
    with pytest.raises(SystemExit):
        drive(ctx, provider_planner(provider))
    answered_at = clock.now()
    clock.advance(LEASE.total_seconds() + 1)
    queue.recover(now=clock.now())
    job.refresh_from_db()
    assert job.state == "unknown"
    client.force_login(triager)
    page = page_of(client, job)
    assert guidance_of(page).startswith("Its worker was lost while the outside call below was in flight")
    shown = evidence(page)
    assert shown["Step"] == "1 of 3: extract" and shown["Idempotency key"] == f"job-{job.pk}-epoch-1-step-0"
    assert shown["Provider's request id"] == "req-1"  # the provider's own id: what its support can look up
    assert shown["Answer"] == f"received and saved at {utc(answered_at)}: a rerun uses it and does not ask again"
    assert shown["Became unknown"].endswith("lease expired after the external-start marker (recovery)")
    assert shown["Last saved step"] == "none: no step of the review had finished"

    # What the page promises holds: reconciled as not done, the rerun uses the saved answer for step 1.
    confirm(client, start_action(client, "reconcile_not_done", job), reason="the provider answered; rerun")
    again = claim_first(job, now=clock.now(), lease=LEASE)
    assert drive(JobContext(again, clock=clock), provider_planner(provider)).state == "completed"
    keys = [r["headers"]["Idempotency-Key"] for r in provider.requests]
    assert f"job-{job.pk}-epoch-2-step-0" not in keys and f"job-{job.pk}-epoch-2-step-1" in keys


def test_the_demo_unknown_job_has_its_evidence_too(client, triager, alice):
    call_command("seedtriage", "alice", stdout=StringIO())
    job = Job.objects.get(state="unknown")
    client.force_login(triager)
    shown = evidence(page_of(client, job))
    assert shown["External call marked started"].endswith(
        "claim 1: model provider (the demo's stand-in: nothing is sent)")
    assert shown["Idempotency key"] == f"job-{job.pk}-epoch-1-step-0"
    assert shown["Step"] == "1 of 3: extract" and shown["Answer"] == "none saved"


def test_a_kind_without_the_hook_shows_the_marker_and_says_so(client, triager, in_state):
    job = in_state("unknown")  # diagnostic.sleep, its marker set by the queue's own operation
    client.force_login(triager)
    shown = evidence(page_of(client, job))
    assert shown == {
        "External call marked started": f"{utc(job.external_started_at)}, claim 1: external call",
        "Became unknown": f"{utc(job.finished_at)}, failed after external start (worker)",
        "Recorded by the kind": "nothing more: this kind keeps no record of its outside calls",
    }


def test_a_broken_evidence_hook_does_not_hide_the_page(client, triager, in_state, register_kind, register_triage):
    def broken(job_id):
        raise RuntimeError("agent table missing")

    register_kind(kinds.Kind(name="test.broken", handler=lambda c: {}))
    register_triage("test.broken", Triage(evidence_of=broken))
    job = in_state("unknown", kind="test.broken", payload={})
    client.force_login(triager)
    assert evidence(page_of(client, job))["Recorded by the kind"] == "unavailable: RuntimeError: agent table missing"


@pytest.mark.parametrize("state", ["queued", "leased", "completed", "dead", "cancelled"])
def test_only_an_unknown_job_has_an_evidence_block(client, triager, in_state, state):
    job = in_state(state)
    client.force_login(triager)
    page = page_of(client, job)
    assert evidence(page) == {} and "Evidence: what the outside call was" not in page


def test_nothing_of_a_call_is_recorded_without_the_provider(accept, clock):
    """The default planner asks no one: no call, no marker (the evidence is only ever about real calls)."""
    from jobs.context import JobContext

    job, claim = review(accept, clock)
    assert drive(JobContext(claim, clock=clock), planners.LocalPlanner()).state == "completed"
    assert not ProviderCall.objects.filter(job_id=job.pk).exists()


# --- A line of guidance per state


def test_each_state_has_its_line_of_guidance(client, triager, in_state, clock):
    client.force_login(triager)
    said = {state: guidance_of(page_of(client, in_state(state)))
            for state in ["queued", "completed", "dead", "unknown", "cancelled"]}
    assert said["queued"] == "Waiting for a worker: nothing to do (Cancel stops it before it starts)."
    assert said["completed"] == "Done: nothing to do. The result below is what its submitter sees."
    assert said["dead"].startswith("Failed, and nothing will run it again (the last error says why): Retry queues")
    assert said["unknown"].startswith("An outside call started and never settled, so nobody knows whether it "
                                      "took effect: check the evidence below")
    assert "reconcile as done (with its outcome) if it did, or as not done to run it again" in said["unknown"]
    assert said["cancelled"] == "Cancelled: nothing to do, and nothing runs it again."


def test_a_dead_or_unknown_jobs_line_follows_why_it_stopped(client, triager, alice, accept, clock):
    call_command("seedtriage", "alice", stdout=StringIO())  # a refused document (dead), a broken connection
    client.force_login(triager)
    refused, lost = Job.objects.get(state="dead"), Job.objects.get(state="unknown")
    assert (refused.failure_code, lost.failure_code) == ("too_large", "model_error")
    assert guidance_of(page_of(client, refused)).startswith(
        "Its document is beyond what the review service reads (the last error says which limit): Retry would fail")
    assert guidance_of(page_of(client, lost)).startswith(
        "The connection to the provider broke after the call below was sent")

    confirm(client, start_action(client, "discard_unknown", lost), reason="the provider has no record of it")
    lost.refresh_from_db()
    assert (lost.state, lost.failure_code) == ("dead", "discarded")
    assert guidance_of(page_of(client, lost)).startswith("Staff discarded it when its outcome was unknown")

    late = accept(deadline=timedelta(minutes=1))
    clock.advance(minutes=2)
    queue.recover(now=clock.now())
    late.refresh_from_db()
    assert (late.state, late.failure_code) == ("dead", "deadline_passed")
    assert guidance_of(page_of(client, late)).startswith("It ran out of time before its deadline: Retry")


def test_a_kinds_own_failure_code_reads_in_the_kinds_line_on_its_jobs_only(client, triager, in_state, register_kind,
                                                                           register_triage):
    register_kind(kinds.Kind(name="test.own_words", handler=lambda ctx: {}))
    register_triage("test.own_words",
                    Triage(guidance={"dead": {"boom": "Its own line: the boom is the kind's to explain."}}))
    client.force_login(triager)
    own = in_state("dead", kind="test.own_words", payload={})
    other = in_state("dead")  # another kind's job, stopped on the same code
    assert own.failure_code == other.failure_code == "boom"
    assert guidance_of(page_of(client, own)) == "Its own line: the boom is the kind's to explain."
    assert guidance_of(page_of(client, other)).startswith("Failed, and nothing will run it again")


def test_the_apps_register_what_staff_are_shown_of_their_kinds():
    """The review keeps a checkpoint and its provider calls; the mailbox fetch only words its own code."""
    from jobs.admin import kind_triage
    from mailin import fetch

    review, mailbox = kind_triage.of("document_review"), kind_triage.of(fetch.FETCH)
    assert review.supports_checkpoint and review.supports_evidence and "unknown" in review.guidance
    assert not (mailbox.supports_checkpoint or mailbox.supports_evidence)
    assert mailbox.guidance["dead"][fetch.UNREACHABLE].startswith("The mail server did not serve the inbound mailbox")
    assert kind_triage.of("no.such.kind") is kind_triage.GENERIC


def test_a_running_job_says_when_its_lease_ends_and_a_retried_one_when_it_runs(client, triager, accept, clock):
    client.force_login(triager)
    running = accept()
    claim = claim_first(running, now=clock.now(), lease=timedelta(seconds=30))
    assert guidance_of(page_of(client, running)) == (
        f"Running: wait. Its lease ends at {utc(clock.now() + timedelta(seconds=30))}; if its worker is gone by "
        "then, the job goes back to the queue (or to unknown, had it started an outside call).")

    assert queue.start(job_id=claim.job_id, epoch=claim.epoch, now=clock.now())
    assert queue.fail(job_id=claim.job_id, epoch=claim.epoch, error="flaky", code="handler_error",
                      now=clock.now()).state == "queued"
    running.refresh_from_db()
    assert guidance_of(page_of(client, running)) == (
        f"Waiting to be tried again at {utc(running.available_at)}, after a failed try: nothing to do "
        "(Cancel stops it).")

    cancelling = accept()
    claim_first(cancelling, now=clock.now())
    assert queue.cancel(job_id=cancelling.pk, actor="staff:ops", reason="", now=clock.now()).state == "leased"
    assert guidance_of(page_of(client, cancelling)).startswith(f"Cancelling since {utc(clock.now())}: wait")


# --- Names, the submitter's page, the same document


def test_members_are_named_never_user_and_their_id(client, triager, in_state, alice):
    alice.first_name, alice.last_name = "Alice", "Liddell"
    alice.save()
    job = in_state("dead")
    client.force_login(triager)
    listed = client.get(CHANGELIST).content.decode()
    assert '<td class="field-submitter"><span class="job-who">Alice Liddell</span></td>' in listed
    page = page_of(client, job)
    assert '<td class="by">Alice Liddell</td>' in page
    assert "user:" not in listed and "user:" not in page
    assert job.events.filter(actor=f"user:{alice.pk}").exists()  # stored as it always was


def test_the_submitters_page_is_a_link_for_the_tenants_own_staff_and_an_address_for_others(
        client, triager, make_member, in_state):
    job = in_state("dead")  # alice's, of acme; triager is of the tenant "ops"
    client.force_login(triager)
    page = page_of(client, job)
    assert (f'<code id="submitters-page">/jobs/{job.pk}</code>: what alice and the other members of acme see; '
            "only acme's members can open it, and you are not one") in page
    assert client.get(f"/jobs/{job.pk}").status_code == 404  # as the page says

    acme_staff = make_member("acme", "acme-staff", staff=True)
    client.force_login(acme_staff)
    page = page_of(client, job)
    assert (f'<a href="/jobs/{job.pk}" id="submitters-page">/jobs/{job.pk}</a>: what alice and the other '
            "members of acme see") in page
    assert client.get(f"/jobs/{job.pk}").status_code == 200


def test_the_same_document_lists_the_tenants_other_jobs_of_that_file_never_another_tenants(
        client, triager, accept, progress_kind, bob, clock):
    def submitted(content: bytes, name: str, **kwargs) -> Job:
        return accept("test.review", {}, document=Upload(content, name, "application/pdf"), **kwargs)

    job = submitted(b"%PDF-1.4 the invoice", "invoice.pdf")
    again = submitted(b"%PDF-1.4 the invoice", "invoice-again.pdf")
    cancelled = submitted(b"%PDF-1.4 the invoice", "invoice-third.pdf")
    assert queue.cancel(job_id=cancelled.pk, actor="user:1", reason="", now=clock.now()).state == "cancelled"
    other_file = submitted(b"%PDF-1.4 another invoice", "other.pdf")
    bobs = submitted(b"%PDF-1.4 the invoice", "invoice.pdf", user=bob)  # the same bytes, another tenant
    assert len({job.document.sha256, again.document.sha256, bobs.document.sha256}) == 1
    client.force_login(triager)
    page = page_of(client, job)
    listed = page[page.index('<ul class="job-same-document">'):].split("</ul>")[0]
    assert re.findall(r'<a href="/admin/jobs/job/(\d+)/change/">job \d+</a> ([^<]*)</li>', listed) == [
        (str(cancelled.pk), "invoice-third.pdf — cancelled, 0s ago"),
        (str(again.pk), "invoice-again.pdf — queued, 0s ago")]
    assert f"/admin/jobs/job/{bobs.pk}/change/" not in page and f"/admin/jobs/job/{other_file.pk}/" not in page
    assert "none: no other job of globex has this file" in page_of(client, bobs)
    assert "— (no stored document)" in page_of(client, accept())
