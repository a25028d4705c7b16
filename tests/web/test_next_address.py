"""The bulk-action form's ``next`` leads back to the list only: its path is normalised (dot
segments, their percent-escapes, backslashes) before it is checked, as a browser normalises it
before it follows it."""

from __future__ import annotations

import pytest

from tests.web.test_work import posted, to_correct  # noqa: F401  the fixture is used by name


@pytest.mark.parametrize("address", ["/jobs/../admin", "/jobs/%2e%2e/admin", "/jobs/%2E%2E/admin/", "/jobs/..%2fadmin",
                                     "/jobs\\..\\admin", "/jobs/./../admin", "/jobsx", "/jobs/..", "/jobs/%2e%2e"])
def test_a_next_address_that_leaves_the_list_is_not_followed(browser_client, to_correct, alice,  # noqa: F811
                                                            address):
    job = to_correct()
    response = posted(browser_client(alice), "/jobs/work", {"action": "handled", "job": [job.pk], "next": address})
    assert response.status_code == 303 and response["Location"] == "/jobs"


@pytest.mark.parametrize("address", ["/jobs", "/jobs?needs_action=1", "/jobs/?q=a%2F..", "/jobs/12#work",
                                     "/jobs?q=../admin"])
def test_an_address_in_the_list_is_kept_as_it_is(address):
    from web.redirects import back_under

    assert back_under(address, "/jobs") == address


@pytest.mark.parametrize("address", ["", "//evil.example/jobs", "https://evil.example/jobs", "/jobs/../admin",
                                     "/\\evil.example/jobs", "/jobs/\x00", "jobs", "/admin"])
def test_any_other_address_is_refused(address):
    from web.redirects import back_under

    assert back_under(address, "/jobs") is None
