"""A finished review corrected field by field (agent.inbox.corrections.correct, the one writer of a
FieldCorrection): the review's own check decides the new status, the review's value is kept,
the job's summary follows, refusals write nothing, and every place that shows the result
(the page's rows, the note, the message to the supplier, the .json, the CSV) uses the correction."""

from __future__ import annotations

import itertools

import pytest

from agent import presentation
from agent.inbox import corrections
from agent.models import FieldCorrection
from agent.review import revision, workflow
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.models import Job, JobEvent
from tests.conftest import claim_first
from tests.web.conftest import evidenced_review_result, review_result
from web import exports, status
from web.kind_pages import Refused

pytestmark = pytest.mark.django_db
_keys = itertools.count(1)

GOOD_IBAN = "DE89370400440532013000"  # mod 97 holds
BAD_IBAN = "DE89 3704 0044 0532 0130 01"  # one digit off: the check digits no longer match


@pytest.fixture
def completed_review(clock, alice):
    """A document_review job of ``user`` completed with ``result`` and its summary, as a worker completes one."""

    def make(result: dict, *, user=None, name: str = "invoice-bad-iban.pdf") -> Job:
        user = user or alice
        job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                                operation_key=f"corrections-{next(_keys)}", now=clock.now(),
                                document=Upload(b"Invoice", name, "text/plain")).job
        claim = claim_first(job, now=clock.now(), worker="test")
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now(),
                              summary=workflow.summarize(result))
        job.refresh_from_db()
        return job

    return make


def correct(job, user, field, value=None, *, confirm=False, clock):
    return corrections.correct(job_id=job.pk, tenant_id=user.tenant_id, user=user, field=field, value=value,
                               confirm=confirm, now=clock.advance(60))


def shown(job):
    job.refresh_from_db()
    return status.shown_result(job)


def test_a_corrected_iban_is_checked_like_the_review_and_the_reviews_value_is_kept(completed_review, alice, clock):
    job = completed_review(review_result(iban_status="malformed"))
    assert (job.outcome_text, job.needs_action) == ("1 to correct", True)
    done = correct(job, alice, "iban", f"  {GOOD_IBAN} ", clock=clock)
    # The check the review runs decided it, and kept the IBAN as it keeps one (grouped in fours).
    assert (done.status, done.value, done.confirmed) == ("present", "DE89 3704 0044 0532 0130 00", False)
    assert (done.previous_value, done.original_value, done.original_status) == ("DE00 1234", "DE00 1234", "malformed")
    assert done.by == "alice" and done.summary == kinds.Summary("ok", "OK", False, done.summary.reference)
    record = FieldCorrection.objects.get(job=job)
    assert (record.field, record.value, record.previous_value, record.status, record.by_id, record.at) == (
        "iban", GOOD_IBAN, "DE00 1234", "present", alice.pk, done.at)
    job.refresh_from_db()
    assert job.result["fields"]["iban"]["value"] == "DE00 1234"  # the review's own result is never rewritten
    assert (job.outcome, job.outcome_text, job.needs_action) == ("ok", "OK", False)  # the list follows
    # Staff's timeline has a note of it, without the value.
    note = JobEvent.objects.filter(job=job, to_state="").get()
    assert (note.from_state, note.actor, note.reason) == ("completed", f"user:{alice.pk}", "corrected the field iban")


def test_a_corrected_iban_with_wrong_check_digits_is_still_to_correct(completed_review, alice, clock):
    job = completed_review(review_result(iban_status="malformed"))
    done = correct(job, alice, "iban", BAD_IBAN, clock=clock)
    assert done.status == "malformed" and "check digits do not match" in done.detail
    assert (done.summary.outcome, done.summary.text, done.summary.needs_action) == ("to_correct", "1 to correct", True)
    field = shown(job)["fields"]["iban"]
    assert (field["status"], field["value"]) == ("malformed", BAD_IBAN)
    assert field["correction"]["review"]["value"] == "DE00 1234"


def test_other_fields_go_through_their_own_checks(completed_review, alice, clock):
    job = completed_review(review_result())
    assert correct(job, alice, "invoice_date", "14.03.2026", clock=clock).value == "2026-03-14"
    assert correct(job, alice, "invoice_date", "14.03.2027", clock=clock).status == "malformed"  # in the future
    assert correct(job, alice, "total_amount", "1.234,50", clock=clock).value == "1234.50"
    assert correct(job, alice, "currency", "€", clock=clock).value == "EUR"
    assert correct(job, alice, "currency", "XYZ", clock=clock).status == "malformed"
    vat = correct(job, alice, "vat_id", "136695976", clock=clock)
    assert vat.status == "malformed" and "no country prefix" in vat.detail
    assert correct(job, alice, "vat_id", "DE 136 695 976", clock=clock).value == "DE136695976"
    # The latest correction of a field is what it says; each says what it replaced.
    assert [(r.field, r.previous_value) for r in FieldCorrection.objects.filter(job=job, field="vat_id")] == [
        ("vat_id", "DE136695976"), ("vat_id", "136695976")]
    assert shown(job)["fields"]["vat_id"]["value"] == "DE136695976"


def test_confirming_keeps_the_value_and_a_value_to_check_becomes_ok(completed_review, alice, clock):
    result = review_result()
    result["fields"]["currency"] = {"status": "to_check", "value": "EUR", "detail": "read with low confidence"}
    job = completed_review(result)
    assert job.outcome_text == "1 to check"
    done = correct(job, alice, "currency", confirm=True, clock=clock)
    assert (done.status, done.value, done.confirmed, done.previous_value) == ("present", "EUR", True, "EUR")
    record = FieldCorrection.objects.get(job=job)
    assert (record.value, record.confirmed) == ("EUR", True)  # a confirmation is a record with the same value
    job.refresh_from_db()
    assert job.outcome_text == "OK"


@pytest.mark.parametrize(("field", "value", "confirm", "code"), [
    ("colour", "blue", False, "unknown_field"),
    ("iban", "   ", False, "empty_value"),
    ("iban", None, False, "empty_value"),
    ("iban", "x" * 201, False, "invalid_value"),
    ("iban", "DE89\x00", False, "invalid_value"),
])
def test_a_refused_input_is_a_400_and_writes_nothing(completed_review, alice, clock, field, value, confirm, code):
    job = completed_review(review_result(iban_status="malformed"))
    with pytest.raises(Refused) as refused:
        correct(job, alice, field, value, confirm=confirm, clock=clock)
    assert (refused.value.status, refused.value.code) == (400, code)
    assert not FieldCorrection.objects.exists() and not JobEvent.objects.filter(job=job, to_state="").exists()


def test_a_value_that_is_missing_or_fails_its_check_cannot_be_confirmed(completed_review, alice, clock):
    job = completed_review(review_result(iban_status="malformed"))
    with pytest.raises(Refused) as refused:  # DE00 1234 fails its check
        correct(job, alice, "iban", confirm=True, clock=clock)
    assert (refused.value.status, refused.value.code) == (409, "cannot_confirm")
    unread = completed_review(review_result(readable=False))
    with pytest.raises(Refused) as refused:
        correct(unread, alice, "iban", confirm=True, clock=clock)
    assert (refused.value.status, refused.value.code) == (409, "cannot_confirm")
    updated = Job.objects.get(pk=job.pk).updated_at
    assert updated == job.updated_at  # rolled back with the rest
    assert not FieldCorrection.objects.exists() and not JobEvent.objects.filter(to_state="").exists()


def test_only_a_completed_job_of_the_members_tenant(completed_review, accept, alice, bob, make_member, clock):
    job = completed_review(review_result(iban_status="malformed"))
    for user, job_id in ((bob, job.pk), (alice, 999_999)):  # another tenant's job answers as no job at all
        with pytest.raises(Refused) as refused:
            corrections.correct(job_id=job_id, tenant_id=user.tenant_id, user=user, field="iban", value=GOOD_IBAN,
                                now=clock.now())
        assert (refused.value.status, refused.value.code, refused.value.message) == (404, "not_found", "no such job")
    waiting = accept("document_review", {"text": "Invoice"})
    with pytest.raises(Refused) as refused:
        correct(waiting, alice, "iban", GOOD_IBAN, clock=clock)
    assert (refused.value.status, refused.value.code, refused.value.state) == (409, "not_completed", "queued")
    assert not FieldCorrection.objects.exists()
    # Any member of the tenant may correct; the record says who.
    teammate = make_member("acme", "carol")
    assert correct(job, teammate, "iban", GOOD_IBAN, clock=clock).by == "carol"
    assert FieldCorrection.objects.get().by_id == teammate.pk


def test_the_history_says_who_changed_what(completed_review, alice, make_member, clock):
    job = completed_review(review_result(iban_status="malformed"))
    correct(job, alice, "iban", BAD_IBAN, clock=clock)
    correct(job, make_member("acme", "carol"), "iban", GOOD_IBAN, clock=clock)
    correct(job, alice, "currency", confirm=True, clock=clock)
    lines = corrections.history(job.pk, alice.pk)
    assert [line.words for line in lines] == [
        f"IBAN / bank account corrected by you: {BAD_IBAN} (was DE00 1234); still to correct: "
        "not a valid IBAN: the check digits do not match",
        "IBAN / bank account corrected by carol: DE89 3704 0044 0532 0130 00 (was DE89 3704 0044 0532 0130 01); "
        "passes its check",
        "Currency confirmed by you: EUR",
    ]
    assert [line.tone for line in lines] == ["attention", "good", "good"]
    assert lines[0].at < lines[1].at < lines[2].at
    assert corrections.history(job.pk, None)[0].words.startswith("IBAN / bank account corrected by alice:")


def test_the_note_and_the_message_to_the_supplier_use_the_corrected_values(completed_review, alice, clock):
    result = review_result(iban_status="malformed")
    result["draft"] = workflow_note(result, tone="friendly")
    job = completed_review(result)
    assert "Could you check the IBAN" in presentation.supplier_message(result["draft"])
    correct(job, alice, "iban", GOOD_IBAN, clock=clock)
    revised = shown(job)
    note = presentation.note(revised)
    assert "- IBAN / bank account: DE89 3704 0044 0532 0130 00 (checksum (mod 97) and country format valid) " \
           "(corrected by alice; the review read DE00 1234)" in note
    assert "Needs correcting" not in note and "DE00 1234 (" not in note
    # Nothing is left to ask the supplier: the corrected value is no longer asked for.
    assert presentation.supplier_message(note) == ""
    assert "nothing to ask the supplier" in note
    assert revised["review_draft"] == result["draft"]  # the review's own note, for the audit

    # Still wrong after a correction: asked for, in the tone the review wrote in, with the value Alice typed.
    correct(job, alice, "iban", BAD_IBAN, clock=clock)
    message = presentation.supplier_message(presentation.note(shown(job)))
    assert message.startswith("Hi, thanks for your invoice INV-2026-0142 of 14 March 2026!")
    assert f"We read {BAD_IBAN} (not a valid IBAN: the check digits do not match)." in message


def workflow_note(result: dict, *, tone: str) -> str:
    from agent.review.tools import review_note

    return review_note({**result, "document_name": "invoice-bad-iban.pdf", "source": "document"}, tone=tone)


def test_the_json_keeps_the_reviews_value_beside_the_corrected_one(completed_review, alice, clock):
    job = completed_review({**evidenced_review_result(), "page_sizes": [[595.0, 842.0], [595.0, 842.0]]})
    correct(job, alice, "total_amount", "717.97", clock=clock)
    correct(job, alice, "invoice_number", confirm=True, clock=clock)
    fields = shown(job)["fields"]
    total = fields["total_amount"]
    assert (total["status"], total["value"], total["evidence"]) == ("present", "717.97", None)
    review = total["correction"]["review"]
    assert review["status"] == "to_check" and [c["value"] for c in review["candidates"]] == ["717.97", "593.36"]
    assert total["correction"]["by"] == "alice" and total["correction"]["confirmed"] is False
    number = fields["invoice_number"]
    assert number["correction"]["confirmed"] is True and number["evidence"]["text"] == "Factuurnummer: 993548900"
    assert fields["iban"] == evidenced_review_result()["fields"]["iban"]  # untouched fields are as the review read them
    # The page's rows: the corrected value, who corrected it, what the review read and where.
    rows = {row["name"]: row for row in presentation.present(shown(job))["rows"]}
    assert (rows["total_amount"]["status_text"], rows["total_amount"]["value"]) == ("OK", "EUR 717.97")
    assert [r["value"] for r in rows["total_amount"]["correction"]["review"]] == ["EUR 717.97", "EUR 593.36"]
    assert rows["invoice_number"]["correction"]["confirmed"] and not rows["invoice_number"]["confirmable"]
    # The page still shows where the review read what was corrected.
    assert {box.id for box in presentation.boxes(shown(job))} >= {"box-total_amount-1", "box-total_amount-2"}


def test_the_csv_has_the_corrected_values_and_says_what_the_review_read(completed_review, alice, clock):
    plain = completed_review(review_result())
    job = completed_review(review_result(iban_status="malformed"))
    correct(job, alice, "iban", GOOD_IBAN, clock=clock)
    export = exports.export(Job.objects.filter(pk__in=[plain.pk, job.pk]).order_by("id"))
    rows = [dict(zip(export.header, row, strict=True)) for row in export.rows]
    assert (rows[1]["Outcome"], rows[1]["IBAN / bank account"], rows[1]["Issues"]) == (
        "OK", "DE89 3704 0044 0532 0130 00", "")
    assert rows[1]["Corrections"] == "IBAN / bank account: corrected by alice on 2026-06-01 (the review read DE00 1234)"
    assert rows[0]["Corrections"] == "" and rows[0]["IBAN / bank account"] == "DE89 3704 0044 0532 0130 00"


def test_revising_a_page_of_results_takes_a_fixed_number_of_queries(completed_review, alice, clock,
                                                                   django_assert_max_num_queries):
    jobs = [completed_review(review_result(iban_status="malformed")) for _ in range(5)]
    for job in jobs:
        correct(job, alice, "iban", GOOD_IBAN, clock=clock)
    # The corrections, the acceptances, the fingerprints, the jobs' names, the checkpoints.
    with django_assert_max_num_queries(5):
        revised = revision.revise({job.pk: job.result for job in jobs})
    assert all(revised[job.pk]["fields"]["iban"]["status"] == "present" for job in jobs)
