"""Where a log-in lands: staff where they triage, members on their jobs, ``next`` when it is safe."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.conftest import drive_to

TRIAGE = "/admin/jobs/job/?state=needs_human"
PASSWORD = "staff-pass-123"


@pytest.fixture
def staff(make_member):
    """A triage member, as createmember --staff (and the demo's staff) makes one."""
    return make_member("acme", "staff", password=PASSWORD, staff=True)


def log_in(username: str, password: str, *, next_url: str | None = None) -> tuple[Client, str]:
    """Log in through the page with its CSRF token; the client and where the answer sends it."""
    client = Client(enforce_csrf_checks=True, headers={"Accept": "text/html"})
    page = client.get("/accounts/login/", {"next": next_url} if next_url is not None else {})
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
    if next_url is not None:
        form["next"] = next_url
    response = client.post("/accounts/login/", form)
    assert response.status_code == 302, response.content[:300]
    return client, response["Location"]


def test_staff_land_on_the_jobs_that_need_a_human(staff, accept, clock):
    wanted = {drive_to(accept(), state, now=clock.now()) for state in ("dead", "unknown")}
    for state in ("completed", "queued"):
        drive_to(accept(), state, now=clock.now())
    client, location = log_in("staff", PASSWORD)
    assert location == TRIAGE
    page = client.get(location)
    assert page.status_code == 200 and set(page.context["cl"].result_list) == wanted


def test_staff_who_may_not_see_jobs_land_on_the_admin_index(make_member):
    make_member("ops", "helpdesk", password=PASSWORD, staff=True).groups.clear()
    client, location = log_in("helpdesk", PASSWORD)
    assert location == "/admin/"
    assert client.get(location).status_code == 200


def test_members_land_on_their_jobs(alice):
    assert log_in("alice", "alice-pass-123")[1] == "/jobs"


@pytest.mark.parametrize("username, password", [("staff", PASSWORD), ("alice", "alice-pass-123")])
def test_a_safe_next_is_followed_by_staff_and_members(staff, alice, username, password):
    assert log_in(username, password, next_url="/jobs/new")[1] == "/jobs/new"


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/jobs", "/\\evil.example",
                                      "javascript:alert(1)"])
@pytest.mark.parametrize("username, password, landing", [("staff", PASSWORD, TRIAGE),
                                                         ("alice", "alice-pass-123", "/jobs")])
def test_a_next_to_another_site_is_ignored(staff, alice, next_url, username, password, landing):
    assert log_in(username, password, next_url=next_url)[1] == landing


def test_staff_already_logged_in_are_sent_on_from_the_login_page(staff, browser_client):
    response = browser_client(staff).get("/accounts/login/")
    assert response.status_code == 302 and response["Location"] == TRIAGE

