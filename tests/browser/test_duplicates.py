"""The same invoice sent again, in a real browser: the same file, and the same supplier and invoice
number in another file (a PDF made here), each flagged on its page with the earlier job, when and by
whom; marked in the list and kept by its filter; at 1280 px and 390 px with no sideways scrolling and
no serious or critical axe-core finding (see ``audit``)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent import samples
from agent.review import workflow
from agent.review.planner import LocalPlanner
from agent.samples.make_samples import invoice_lines, write_pdf
from documents import acceptance
from documents.store import Upload
from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.context import JobContext
from jobs.models import Job

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")


def reviewed(user, name: str, content: bytes) -> Job:
    """Accept ``content`` as ``user`` and run its real review in this process, as a worker would."""
    now = system_clock.now()
    job = acceptance.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review", payload={},
                            operation_key=f"duplicates-{name}-{user.username}", now=now,
                            document=Upload(content, name, "application/pdf")).job
    claim = queue.claim(now=now, worker="browser-test", lease=timedelta(minutes=5))
    assert claim is not None and claim.job_id == job.pk
    result = workflow.run(JobContext(claim, clock=system_clock), planner=LocalPlanner())
    summary = kinds.get("document_review").summarize(result)
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=system_clock.now(), summary=summary)
    return job


def notice(page) -> str:
    return " ".join(page.inner_text("#duplicate").split())


def test_the_same_invoice_sent_again_is_flagged_on_its_page_and_in_the_list(make_member, login, tmp_path):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    bob = off_loop(make_member, "acme", "bob")
    original = off_loop(reviewed, bob, "invoice-clean.pdf", samples.CLEAN_PDF.read_bytes())
    # Bob sent it three days ago.
    off_loop(lambda: Job.objects.filter(pk=original.pk).update(created_at=original.created_at - timedelta(days=3)))
    same_file = off_loop(reviewed, alice, "invoice-clean-again.pdf", samples.CLEAN_PDF.read_bytes())
    # The supplier's copy of the same invoice: another PDF, with the same VAT id and invoice number.
    copy = tmp_path / "nordlicht-copy.pdf"
    write_pdf(copy, ["COPY - sent again by post", *invoice_lines()])
    same_invoice = off_loop(reviewed, alice, "nordlicht-copy.pdf", copy.read_bytes())
    another = off_loop(reviewed, alice, "invoice-0199.pdf", _pdf(tmp_path, invoice_lines(number="INV-2026-0199")))

    page = login(*ALICE, start=f"/jobs/{same_file.pk}")
    page.wait_for_selector("#status[data-state=completed]")
    assert notice(page) == (f"Possible duplicate of #{original.pk} invoice-clean.pdf (sent 3 days ago by bob): "
                            "same file. Check that it has not been paid already.")
    assert page.get_attribute("#duplicate a", "href") == f"/jobs/{original.pk}"
    audit(page, "job-duplicate-same-file")

    page.goto(f"/jobs/{same_invoice.pk}")
    assert notice(page) == (f"Possible duplicate of #{original.pk} invoice-clean.pdf (sent 3 days ago by bob): "
                            "same supplier and invoice number. Check that it has not been paid already.")
    audit(page, "job-duplicate-same-invoice")
    page.goto(f"/jobs/{another.pk}")
    assert page.locator("#duplicate").count() == 0

    page.goto("/jobs?scope=team")
    marked = {row.get_attribute("id"): row.locator(".flag-duplicate").inner_text()
              for row in page.locator("#rows tr").all() if row.locator(".flag-duplicate").count()}
    assert marked == {f"job-{same_file.pk}": f"Possible duplicate of #{original.pk}",
                      f"job-{same_invoice.pk}": f"Possible duplicate of #{original.pk}"}
    page.click("#duplicates-filter")
    page.wait_for_url("**duplicates=1**")
    assert [row.get_attribute("id") for row in page.locator("#rows tr").all()] == [
        f"job-{same_invoice.pk}", f"job-{same_file.pk}"]
    assert page.get_attribute("#duplicates-filter", "aria-current") == "true"
    page.set_viewport_size({"width": 390, "height": 844})
    flag = page.locator(f"#job-{same_file.pk} .flag-duplicate").bounding_box()
    assert flag and flag["x"] + flag["width"] <= 390
    audit(page, "list-duplicates")


def _pdf(folder, lines: list[str]) -> bytes:
    path = folder / "other.pdf"
    write_pdf(path, lines)
    return path.read_bytes()
