"""The page audit itself can fail: axe-core finds a real violation and the overflow check a wide page."""

from __future__ import annotations

import pytest

from .audit import audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_audit_catches_a_missing_text_alternative_and_sideways_scrolling(new_context):
    page = new_context().new_page()
    page.goto("/accounts/login/")
    audit(page, "control", record=False, screenshots=False)  # the real page passes
    page.evaluate("""() => {
      const image = document.createElement("img");  // an image that says nothing to a screen reader
      image.src = "/static/mark.svg";
      const wide = document.createElement("div");
      wide.textContent = "x".repeat(400);  // one unbreakable word: wider than the page
      document.querySelector("main").append(image, wide);
    }""")
    with pytest.raises(AssertionError) as failed:
        audit(page, "control", record=False, screenshots=False)
    assert '"id": "image-alt"' in str(failed.value) and '"overflow": true' in str(failed.value)
