"""The verdict Alice can pay from: findings decide each field; marking handled or approving while a
blocking finding stands asks again, and a reason accepts it with her name; an internal rule (an old
date) is her finding, accepted and cleared; Approve confirms every passing field and marks it
handled, and the export carries the approved values; a finding stored as a plain string still
shows and still blocks."""

from __future__ import annotations

import copy

import pytest

from agent import presentation
from agent.inbox import corrections, work
from agent.models import DocumentWork, DocumentWorkChange, FieldCorrection, FindingAcceptance
from agent.reading import findings
from agent.review import workflow
from jobs.models import Job
from web import status

from .conftest import review_result

IBAN_FINDING = findings.make("bank_details_changed", "the supplier has never used this IBAN before: phone them "
                             "on a number you already know", field="iban")


def with_findings(*items, **changes) -> dict:
    result = review_result()
    result["findings"] = list(items)
    for name, field in changes.items():
        result["fields"][name] = field
    return result


def posted(browser, url: str, data: dict, *, page: str = "/jobs"):
    token = browser.get(page).cookies["csrftoken"].value
    return browser.post(url, {"csrfmiddlewaretoken": token, **data})


def work_state(job) -> str:
    return status.work_of([Job.objects.get(pk=job.pk)])[job.pk].state


def shown(job) -> dict:
    return status.shown_result(Job.objects.get(pk=job.pk))


# --- findings decide the field -----------------------------------------------------------------


def test_a_blocking_finding_on_a_field_makes_it_to_check_and_the_document_not_ok(reviewed):
    job = reviewed(with_findings(IBAN_FINDING))
    assert job.outcome != "ok" and job.needs_action and job.outcome_text == "1 to check"
    iban = shown(job)["fields"]["iban"]
    assert iban["status"] == "to_check" and "never used this IBAN" in iban["detail"]


def test_a_finding_that_does_not_block_leaves_the_document_ok_and_an_unknown_code_shows_its_words(reviewed):
    job = reviewed(with_findings(findings.make("new_supplier", "the first invoice of this supplier",
                                               blocks=False),
                                 {"code": "something_new", "field": None, "words": "a check of tomorrow",
                                  "blocks": False}))
    assert job.outcome == "ok" and not job.needs_action
    view = presentation.present(shown(job))
    assert [f["words"] for f in view["findings"]] == ["the first invoice of this supplier", "a check of tomorrow"]
    assert view["standing"] == [] and all(row["status"] == "present" for row in view["rows"])


def test_a_finding_stored_as_a_plain_string_still_shows_and_still_blocks(reviewed, browser_client, alice):
    legacy = "the visible page shows a total of 99.00 but the e-invoice XML says 90.00"
    job = reviewed(with_findings(legacy))
    assert job.outcome == "to_correct" and job.outcome_text == "1 to check"
    assert findings.of(job.result) == [findings.make("finding", legacy)]
    page = browser_client(alice).get(f"/jobs/{job.pk}").content.decode()
    assert "The visible page shows a total of 99.00" in page and 'id="work-standing"' in page
    with pytest.raises(work.FindingsStand):
        work.change(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=job.updated_at, state="handled")


# --- handled, alone and in bulk, while a blocking finding stands --------------------------------


def test_bulk_handled_asks_again_naming_the_finding_and_a_reason_accepts_it(reviewed, browser_client, alice):
    flagged, clean = reviewed(with_findings(IBAN_FINDING)), reviewed(review_result())
    browser = browser_client(alice)
    asked = posted(browser, "/jobs/work", {"action": "handled", "job": [flagged.pk, clean.pk]})
    page = asked.content.decode()
    assert asked.status_code == 409 and "1 document marked handled." in page
    assert "The supplier has never used this IBAN before" in page and f'value="{flagged.pk}"' in page
    assert work_state(clean) == "handled" and work_state(flagged) == "todo"
    assert not FindingAcceptance.objects.exists()

    refused = posted(browser, "/jobs/work", {"action": "handled", "job": [flagged.pk], "reason": "   "})
    assert refused.status_code == 409 and work_state(flagged) == "todo"  # a blank reason is none: asked again

    done = posted(browser, "/jobs/work", {"action": "handled", "job": [flagged.pk],
                                          "reason": "phoned the supplier on the number we know"})
    assert done.status_code == 303 and work_state(flagged) == "handled"
    accepted = FindingAcceptance.objects.get(job_id=flagged.pk)
    assert (accepted.by_name, accepted.code, accepted.field, accepted.reason) == (
        "alice", "bank_details_changed", "iban", "phoned the supplier on the number we know")
    job = Job.objects.get(pk=flagged.pk)
    assert job.outcome == "ok" and not job.needs_action  # the finding stands no more
    history = browser.get(f"/jobs/{flagged.pk}").content.decode()
    assert "Finding accepted by you" in history and "phoned the supplier on the number we know" in history


def test_handled_from_the_page_asks_again_and_names_the_finding(reviewed, browser_client, alice):
    job = reviewed(with_findings(IBAN_FINDING))
    browser = browser_client(alice)
    asked = posted(browser, f"/jobs/{job.pk}/work", {"state": "handled"}, page=f"/jobs/{job.pk}")
    assert asked.status_code == 303 and work_state(job) == "todo"
    page = browser.get(asked["Location"]).content.decode()
    assert "1 finding stands on this document (the supplier has never used this IBAN" in page
    assert 'id="handled-reason"' in page and "Accept and mark handled" in page
    done = posted(browser, f"/jobs/{job.pk}/work", {"state": "handled", "reason": "known new account"},
                  page=f"/jobs/{job.pk}")
    assert done.status_code == 303 and work_state(job) == "handled"
    assert DocumentWorkChange.objects.filter(job_id=job.pk, to_state="handled").count() == 1


# --- an internal rule: Alice's finding, accepted with a reason ----------------------------------


def test_an_old_date_is_alices_finding_accepted_and_cleared_also_after_entering_it_again(reviewed, alice, clock):
    old = {"status": "malformed", "value": "2011-02-03", "detail": "the invoice date is more than ten years old"}
    result = with_findings(invoice_date=old)
    result["draft"] = "Review\n"
    job = reviewed(result)
    date_field = shown(job)["fields"]["invoice_date"]
    assert date_field["status"] == "to_check" and job.outcome_text == "1 to check"
    row = next(r for r in presentation.present(shown(job))["rows"] if r["name"] == "invoice_date")
    assert row["status_text"] == "To check" and not row["confirmable"]  # accepted with a reason instead
    # The same date typed again: still the rule's finding (to check), never "to correct".
    corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field="invoice_date",
                        value="03.02.2011", now=clock.now())
    assert shown(job)["fields"]["invoice_date"]["status"] == "to_check"
    (finding,) = findings.standing(shown(job)["findings"])
    assert finding["code"] == "old_date" and finding["field"] == "invoice_date"
    note = shown(job)["draft"]
    assert "To ask the supplier" not in note and "more than ten years old" in note

    from agent.inbox import acceptances

    acceptances.accept(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, reason="a late claim we agreed to pay",
                       keys=[findings.key(finding)], now=clock.now())
    cleared = shown(job)["fields"]["invoice_date"]
    assert cleared["status"] == "present" and "accepted by alice: a late claim we agreed to pay" in cleared["detail"]
    job.refresh_from_db()
    assert job.outcome == "ok" and not job.needs_action


def test_an_acceptance_needs_a_reason_and_a_finding_that_stands(reviewed, alice, clock):
    from agent.inbox import acceptances
    from web.kind_pages import Refused

    job = reviewed(with_findings(IBAN_FINDING))
    for reason, code in (("", "reason_required"), ("x" * 301, "reason_too_long"), ("nul\x00byte", "reason_invalid")):
        with pytest.raises(Refused) as refused:
            acceptances.accept(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, reason=reason, now=clock.now())
        assert refused.value.code == code
    with pytest.raises(Refused) as refused:
        acceptances.accept(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, reason="ok", keys=["nope"],
                           now=clock.now())
    assert refused.value.code == "no_such_finding" and not FindingAcceptance.objects.exists()


def test_another_tenants_member_cannot_accept_or_approve(reviewed, bob, clock):
    from agent.inbox import acceptances
    from web.kind_pages import Refused

    job = reviewed(with_findings(IBAN_FINDING))
    with pytest.raises(Refused) as refused:
        acceptances.accept(job_id=job.pk, tenant_id=bob.tenant_id, user=bob, reason="mine", now=clock.now())
    assert refused.value.status == 404
    with pytest.raises(work.NoSuchJob):
        work.approve(tenant_id=bob.tenant_id, job_id=job.pk, by_id=bob.pk, now=clock.now(), reason="mine")
    assert not FindingAcceptance.objects.exists() and not FieldCorrection.objects.exists()


# --- Approve ------------------------------------------------------------------------------------


def test_approve_is_refused_while_a_finding_stands_and_allowed_once_accepted_with_a_reason(reviewed, alice, clock):
    job = reviewed(with_findings(IBAN_FINDING))
    with pytest.raises(work.FindingsStand) as refused:
        work.approve(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now())
    assert "never used this IBAN" in refused.value.message and "can be approved only once you accept" in \
        refused.value.message
    assert not FieldCorrection.objects.exists() and work_state(job) == "todo"

    done = work.approve(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now(),
                        reason="phoned the supplier")
    assert sorted(done.confirmed) == sorted(["supplier_name", "vat_id", "invoice_number", "invoice_date", "currency",
                                              "total_amount", "iban"])
    assert [f["code"] for f in done.accepted] == ["bank_details_changed"]
    assert work_state(job) == "handled"
    result = shown(job)
    assert all(f["correction"]["confirmed"] and f["correction"]["by"] == "alice" for f in result["fields"].values())
    job.refresh_from_db()
    assert job.outcome == "ok"


def test_approve_is_refused_while_a_field_is_open_and_writes_nothing(reviewed, alice, clock):
    job = reviewed(review_result(iban_status="malformed"))
    with pytest.raises(work.WorkRefused) as refused:
        work.approve(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now(), reason="fine")
    assert refused.value.code == "fields_open" and "IBAN" in refused.value.message
    assert not FieldCorrection.objects.exists() and work_state(job) == "todo"


def test_the_export_carries_the_approved_values(reviewed, browser_client, alice, clock):
    result = with_findings()
    result["fields"]["total_amount"] = {"status": "to_check", "value": None, "detail": "two totals",
                                        "candidates": [{"value": "100.00"}, {"value": "120.00"}]}
    job = reviewed(result)
    corrections.correct(job_id=job.pk, tenant_id=alice.tenant_id, user=alice, field="total_amount", value="120.00",
                        now=clock.now())
    work.approve(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now())
    browser = browser_client(alice)
    exported = posted(browser, "/jobs/work", {"action": "export", "job": [job.pk]}).content.decode("utf-8-sig")
    assert "120.00" in exported and "confirmed by alice" in exported


def test_approve_and_accept_through_the_api(reviewed, api_client, alice):
    job = reviewed(with_findings(IBAN_FINDING))
    client = api_client(alice)
    answer = client.get(f"/jobs/{job.pk}").json()
    (finding,) = answer["result"]["findings"]
    assert (finding["code"], finding["field"], finding["blocks"]) == ("bank_details_changed", "iban", True)
    refused = client.post(f"/jobs/{job.pk}/approve")
    assert refused.status_code == 409 and refused.json()["error"] == "finding_stands"
    accepted = client.post(f"/jobs/{job.pk}/findings/accept", {"finding": finding["key"], "reason": "phoned"})
    assert accepted.status_code == 200 and accepted.json()["accepted"] == [finding["key"]]
    approved = client.post(f"/jobs/{job.pk}/approve")
    assert approved.status_code == 200 and approved.json()["state"] == "handled"
    assert client.get(f"/jobs/{job.pk}").json()["result"]["findings"][0]["accepted"]["reason"] == "phoned"


def test_bulk_approve_asks_again_for_the_documents_with_findings(reviewed, browser_client, alice):
    flagged, clean, open_ = (reviewed(with_findings(IBAN_FINDING)), reviewed(review_result()),
                             reviewed(review_result(iban_status="malformed")))
    browser = browser_client(alice)
    asked = posted(browser, "/jobs/work", {"action": "approve", "job": [flagged.pk, clean.pk, open_.pk]})
    page = asked.content.decode()
    assert asked.status_code == 409 and "1 document approved. 1 not approved" in page
    assert [work_state(j) for j in (flagged, clean, open_)] == ["todo", "handled", "todo"]
    done = posted(browser, "/jobs/work", {"action": "approve", "job": [flagged.pk], "reason": "phoned them"})
    assert done.status_code == 303 and work_state(flagged) == "handled"


# --- the work panel offers what fits the job ----------------------------------------------------


def test_the_work_panel_offers_only_what_fits(reviewed, accept, browser_client, alice):
    browser = browser_client(alice)
    waiting = accept("document_review", {"text": "Invoice INV-1"})
    page = browser.get(f"/jobs/{waiting.pk}").content.decode()
    assert 'id="work-wait"' in page and 'id="work-sent"' not in page and 'id="work-approve"' not in page
    assert '<strong id="work-state-words">Not reviewed yet</strong>' in page and "No action needed" not in page
    # Nor does the State list offer them, and a post of them is refused, the document left as it was.
    assert '<option value="waiting"' not in page and '<option value="handled"' not in page
    assert '<option value="ignored"' in page
    for state in ("waiting", "handled"):
        refused = posted(browser, f"/jobs/{waiting.pk}/work", {"state": state})
        assert refused.status_code == 303 and refused["Location"] == f"/jobs/{waiting.pk}#work"
        said = browser.get(f"/jobs/{waiting.pk}").content.decode()
        assert "marked handled once its review has finished" in said
    assert not DocumentWork.objects.filter(job_id=waiting.pk).exists()
    ok = reviewed(review_result())
    page = browser.get(f"/jobs/{ok.pk}").content.decode()
    assert 'id="work-approve"' in page and 'id="work-sent"' not in page  # nothing to ask the supplier
    to_correct = reviewed(review_result(iban_status="malformed"))
    page = browser.get(f"/jobs/{to_correct.pk}").content.decode()
    assert 'id="work-sent"' in page and 'id="work-approve-later"' in page and 'id="work-approve"' not in page


def test_settle_is_idempotent_and_keeps_what_the_review_read():
    result = with_findings(IBAN_FINDING, invoice_date={"status": "malformed", "value": "2001-01-01",
                                                       "detail": "the invoice date is more than ten years old"})
    once = findings.settle(copy.deepcopy(result))
    assert findings.settle(copy.deepcopy(once)) == once
    assert workflow.summarize(once) == workflow.summarize(result)
    assert findings.settle(once, {})["fields"]["iban"]["value"] == result["fields"]["iban"]["value"]


def test_the_status_part_brings_the_work_panel_along_once_the_job_is_done(reviewed, accept, browser_client, alice):
    browser = browser_client(alice)
    running = accept("document_review", {"text": "Invoice INV-1"})
    polled = browser.get(f"/jobs/{running.pk}?poll=1", headers={"HX-Request": "true"}).content.decode()
    assert 'id="status"' in polled and 'hx-swap-oob' not in polled  # still live: the panel is left alone
    done = reviewed(review_result())
    polled = browser.get(f"/jobs/{done.pk}?poll=2", headers={"HX-Request": "true"}).content.decode()
    assert 'id="work" class="work-panel" aria-labelledby="work-heading" hx-swap-oob="true"' in polled
    assert 'id="work-approve"' in polled
