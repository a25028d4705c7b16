"""Staff use the operators' pages in a real browser; a screenshot of each goes to artifacts/."""

from __future__ import annotations

import re

import pytest

from .conftest import ARTIFACTS, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
TIMEOUT_MS = 30_000


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_staff_steps_through_the_lease_lab_and_sees_the_stale_completion_rejected(make_member, login):
    off_loop(make_member, "ops", "operator", password="operator-pass-123", staff=True)
    page = login("operator", "operator-pass-123")
    page.goto("/ops/lab/")
    page.fill("#id_lease", "10")
    page.select_option("#id_crash", "before-effect")
    page.click("#lab-form button[type=submit]")
    page.wait_for_selector("#timeline[data-final-state=completed]", timeout=TIMEOUT_MS)
    assert page.text_content("#replacement") == "10 s"
    assert page.text_content("#step-count") == "step 1 of 9"
    page.click("#step-next")
    page.click("#step-next")
    assert page.text_content("#step-count") == "step 3 of 9"
    shoot(page, "ops-lab-stepping.png")
    page.click("#step-all")
    assert "epoch 1 superseded by 2" in page.text_content("#steps")
    shoot(page, "ops-lab.png")

    page.goto("/ops/lab/?lease=10&crash=after-marker")
    page.wait_for_selector("#timeline[data-final-state=unknown]", timeout=TIMEOUT_MS)
    page.click("#step-all")
    shoot(page, "ops-lab-unknown.png")


def test_staff_plans_capacity_and_htmx_swaps_the_figures(make_member, login):
    off_loop(make_member, "ops", "operator", password="operator-pass-123", staff=True)
    page = login("operator", "operator-pass-123")
    page.goto("/ops/capacity/")
    assert page.text_content("#in-flight") == "2 jobs"
    assert "margin 10 s" in page.text_content("#margin")
    shoot(page, "ops-capacity.png")
    page.evaluate("window.__sameDocument = true")
    page.fill("#id_workers", "2")
    page.click("#capacity-form button[type=submit]")
    from playwright.sync_api import expect

    # Playwright's own wait, not wait_for_function: a predicate polled in the page is an eval,
    # which the Content Security Policy refuses.
    expect(page.locator("#utilisation")).to_have_text(re.compile(r"^100"), timeout=TIMEOUT_MS)
    assert page.evaluate("window.__sameDocument") is True
    assert "misses the deadline" in page.text_content("#plan")
    shoot(page, "ops-capacity-two-workers.png")


def test_metrics_and_the_instruments_index_for_staff_and_not_for_members(make_member, login):
    off_loop(make_member, "ops", "operator", password="operator-pass-123", staff=True)
    off_loop(make_member, "acme", "alice", password="alice-pass-123")
    page = login("operator", "operator-pass-123")
    page.goto("/ops/")
    shoot(page, "ops-index.png")
    response = page.goto("/metrics")
    assert response.status == 200 and "jobsite_jobs" in page.content()
    shoot(page, "ops-metrics.png")

    alices = login("alice", "alice-pass-123")
    assert alices.goto("/ops/lab/").status == 403
    assert alices.goto("/metrics").status == 403
