"""With the workers stopped, Alice's batch and job pages say in words that reviews are delayed (never
"in line for review" for ever), at 1280 and 390 px with no serious or critical axe-core finding, and
staff's landing says it too."""

from __future__ import annotations

from datetime import timedelta

import pytest

from documents import acceptance
from documents.store import Upload
from jobs.clock import system_clock

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
STAFF = ("triage-lead", "Quiet-otter-4417")
NAMES = ["Rechnung-2026-000471102-Muster-Handels-GmbH-Berlin-Lieferung-Oktober-final-v2.pdf", "invoice-7.txt"]


def late_batch(make_member) -> int:
    """Alice's batch of two, sent 10 minutes ago, which no worker has taken (none runs)."""
    alice = make_member("acme", ALICE[0], password=ALICE[1])
    make_member("acme", STAFF[0], password=STAFF[1], staff=True)
    sent = system_clock.now() - timedelta(minutes=10)
    jobs = [acceptance.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
                              operation_key=f"late-{n}", now=sent, batch="b-late",
                              document=Upload(f"Invoice {n}".encode(), name, "text/plain")).job
            for n, name in enumerate(NAMES)]
    return jobs[0].pk


def test_with_the_workers_stopped_the_pages_say_reviews_are_delayed(make_member, login, settings):
    settings.JOBS = {**settings.JOBS, "EXPECTED_WAIT_SECONDS": 120}
    first = off_loop(late_batch, make_member)
    page = login(*ALICE, start="/batches/b-late")
    notice = page.locator("#delay-notice")
    assert notice.is_visible() and "Staff have been told" in notice.inner_text()
    assert "has waited 10 minutes" in notice.inner_text()
    assert "in line for review" not in page.inner_text("main")
    audit(page, "batch-delayed")
    page.goto(f"/jobs/{first}")
    assert page.inner_text("#status-heading").startswith("Waiting — delayed: reviews are taking longer than usual")
    assert page.locator("#delay-notice").is_visible()
    audit(page, "job-delayed")
    staff = login(*STAFF)  # the site's login, then staff's landing
    staff.goto("/admin/")
    assert "2 jobs could run but have waited longer than expected" in staff.inner_text("#queue-late")
