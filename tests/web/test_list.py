"""Alice's list is home: outcomes in words and colour, "needs my action", search, filters, her jobs or the team's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from jobs import queue
from jobs.models import Job
from tests.conftest import drive_to
from web.status import PAGE_SIZE

from .conftest import review_result

HTMX = {"HX-Request": "true"}


def rows(html: str) -> dict[int, str]:
    """Each row of the page: job id -> the row's HTML."""
    return {int(pk): row for pk, row in re.findall(r'<tr id="job-(\d+)"(.*?)</tr>', html, re.S)}


def outcome(row: str) -> tuple[str, str] | None:
    found = re.search(r'<span class="outcome tone-(\w+)">([^<]*)</span>', row)
    return (found.group(2), found.group(1)) if found else None


@pytest.fixture
def alices_day(reviewed, accept, clock):
    """One of each: clean, to correct, unreadable, failed, needs checking, waiting."""
    jobs = {
        "ok": reviewed(review_result(), name="invoice-clean.pdf"),
        "to_correct": reviewed(review_result(iban_status="malformed", supplier="Bergmann Druck AG",
                                             number="RE-77"), name="invoice-bad-iban.pdf"),
        "unreadable": reviewed(review_result(readable=False), name="invoice-scanned.pdf"),
    }
    jobs["dead"] = drive_to(accept(now=clock.now() - timedelta(seconds=30)), "dead", now=clock.now())
    jobs["unknown"] = drive_to(accept(now=clock.now() - timedelta(seconds=30)), "unknown", now=clock.now())
    jobs["waiting"] = accept()
    return jobs


def test_each_row_shows_its_outcome_in_words_and_colour_beside_its_state(browser_client, alice, alices_day):
    page = rows(browser_client(alice).get("/jobs").content.decode())
    assert outcome(page[alices_day["ok"].pk]) == ("OK", "good")
    assert outcome(page[alices_day["to_correct"].pk]) == ("1 to correct", "attention")
    assert outcome(page[alices_day["unreadable"].pk]) == ("unreadable", "bad")
    assert outcome(page[alices_day["dead"].pk]) == ("failed — see why", "bad")
    assert outcome(page[alices_day["unknown"].pk]) == ("needs checking", "checking")
    assert outcome(page[alices_day["waiting"].pk]) is None
    assert 'state-completed">Done<' in page[alices_day["ok"].pk]
    assert 'state-dead">Failed<' in page[alices_day["dead"].pk]
    assert 'state-queued">Waiting<' in page[alices_day["waiting"].pk]
    # What to recognise it by: the supplier and the number in their own columns (the reference line is not repeated).
    row = page[alices_day["to_correct"].pk]
    assert '"Supplier" class="col-supplier">Bergmann Druck AG<' in row and '"Invoice number">RE-77<' in row
    assert "Bergmann Druck AG · RE-77" not in row


def test_needs_my_action_lists_exactly_what_alice_must_act_on(browser_client, alice, bob, alices_day, reviewed):
    reviewed(review_result(iban_status="malformed"), user=bob)  # Bob's: never on Alice's page
    html = browser_client(alice).get("/jobs?needs_action=1").content.decode()
    assert set(rows(html)) == {alices_day[name].pk for name in ("to_correct", "unreadable", "dead")}
    assert 'id="needs-action-filter" aria-current="true">Needs my action <span class="count">3</span>' in html
    every = browser_client(alice).get("/jobs").content.decode()
    assert '<span class="count">3</span>' in every and len(rows(every)) == 6


@pytest.mark.parametrize("words, expected", [
    ("bad-iban", ["to_correct"]), ("BERGMANN", ["to_correct"]), ("RE-77", ["to_correct"]),
    ("Nordlicht", ["ok"]), ("invoice-", ["ok", "to_correct", "unreadable"]), ("zzz", []),
])
def test_search_finds_documents_by_name_supplier_and_invoice_number(browser_client, alice, alices_day, words,
                                                                    expected):
    html = browser_client(alice).get("/jobs", {"q": words}).content.decode()
    assert set(rows(html)) == {alices_day[name].pk for name in expected}
    if not expected:
        assert "No documents match these filters" in html


def test_search_by_job_number(browser_client, alice, alices_day):
    pk = alices_day["dead"].pk
    assert set(rows(browser_client(alice).get("/jobs", {"q": f"#{pk}"}).content.decode())) == {pk}


def test_filters_by_state_and_outcome(browser_client, alice, alices_day):
    client = browser_client(alice)
    assert set(rows(client.get("/jobs?state=dead").content.decode())) == {alices_day["dead"].pk}
    assert set(rows(client.get("/jobs?outcome=to_correct").content.decode())) == {alices_day["to_correct"].pk}
    html = client.get("/jobs").content.decode()
    assert '<option value="to_correct">To correct</option>' in html and '<option value="dead">Failed</option>' in html


def test_days_are_the_readers_days(browser_client, alice, accept):
    """23:30 UTC on 1 March is already 2 March in Berlin."""
    late = accept(now=datetime(2026, 3, 1, 23, 30, tzinfo=UTC))
    early = accept(now=datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    client = browser_client(alice)
    assert set(rows(client.get("/jobs?since=2026-03-01&until=2026-03-01").content.decode())) == {late.pk, early.pk}
    berlin = client.get("/jobs?since=2026-03-02&until=2026-03-02&tz=Europe/Berlin").content.decode()
    assert set(rows(berlin)) == {late.pk}
    assert set(rows(client.get("/jobs?until=2026-02-28").content.decode())) == set()


def test_her_own_jobs_by_default_the_teams_on_a_toggle(browser_client, api_client, alice, make_member, accept):
    carol = make_member("acme", "carol")
    hers, carols = accept(), accept(user=carol)
    client = browser_client(alice)
    mine = client.get("/jobs").content.decode()
    assert set(rows(mine)) == {hers.pk} and "Showing the documents you sent" in mine
    assert 'href="?scope=team">Show the whole team' in mine
    team = client.get("/jobs?scope=team").content.decode()
    assert set(rows(team)) == {hers.pk, carols.pk} and "Showing everyone's documents in Acme" in team
    assert ">carol</td>" in team  # whose each one is
    # The API's default is unchanged: the tenant's jobs.
    assert {j["id"] for j in api_client(alice).get("/jobs").json()["jobs"]} == {hers.pk, carols.pk}
    assert {j["id"] for j in api_client(alice).get("/jobs?scope=mine").json()["jobs"]} == {hers.pk}


def test_a_filter_the_page_cannot_read_is_dropped_and_said_while_the_api_refuses_it(browser_client, api_client,
                                                                                     alice, accept):
    job = accept()
    response = browser_client(alice).get("/jobs?state=bogus")
    assert response.status_code == 200
    html = response.content.decode()
    assert "The filter “state” was not understood" in html and f'id="job-{job.pk}"' in html
    several = browser_client(alice).get("/jobs?state=bogus&page=first&since=yesterday&q=")
    assert several.status_code == 200
    assert "The filters “state”, “page”, “since” were not understood" in several.content.decode()
    assert api_client(alice).get("/jobs?state=bogus").status_code == 400
    assert api_client(alice).get("/jobs?tz=Mars/Olympus").status_code == 400


@pytest.mark.parametrize("query", ["until=9999-12-31", "since=0001-01-01&tz=Pacific/Kiritimati",
                                   "until=9999-12-31&tz=Pacific/Kiritimati"])
def test_a_day_at_the_end_of_the_calendar_is_an_unreadable_filter_not_a_500(browser_client, api_client, alice,
                                                                           accept, query):
    job = accept()
    page = browser_client(alice).get(f"/jobs?{query}")
    assert page.status_code == 200
    assert "was not understood" in page.content.decode() and f'id="job-{job.pk}"' in page.content.decode()
    rows_poll = browser_client(alice).get(f"/jobs?{query}", headers=HTMX)
    assert rows_poll.status_code == 200
    assert browser_client(alice).get(f"/jobs/export.csv?{query}").status_code == 200
    refused = api_client(alice).get(f"/jobs?{query}")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid"
    assert api_client(alice).get(f"/jobs/export.csv?{query}").status_code == 400


def test_a_nul_in_the_search_is_refused_before_the_database_sees_it(browser_client, api_client, alice, accept):
    """PostgreSQL refuses a NUL in text it compares (DataError, a 500); SQLite would match nothing."""
    job = accept()
    page = browser_client(alice).get("/jobs?q=%00&outcome=ok%00")
    assert page.status_code == 200
    html = page.content.decode()
    assert "The filters “q”, “outcome” were not understood" in html and f'id="job-{job.pk}"' in html
    assert browser_client(alice).get("/jobs/export.csv?q=a%00b").status_code == 200
    refused = api_client(alice).get("/jobs?q=%00")
    assert refused.status_code == 400 and "NUL" in refused.json()["detail"]


def test_paging_keeps_the_filters(browser_client, alice, accept):
    for _ in range(PAGE_SIZE + 1):
        accept()
    html = browser_client(alice).get("/jobs?state=queued").content.decode()
    assert 'href="?state=queued&amp;page=2" rel="next">Older' in html and "Page 1 of 2" in html


def test_the_list_and_the_job_say_their_outcome_in_json(api_client, alice, alices_day):
    client = api_client(alice)
    listed = {j["id"]: j for j in client.get("/jobs?needs_action=1").json()["jobs"]}
    assert set(listed) == {alices_day[name].pk for name in ("to_correct", "unreadable", "dead")}
    bad = listed[alices_day["to_correct"].pk]
    assert (bad["outcome"], bad["outcome_text"], bad["needs_action"]) == ("to_correct", "1 to correct", True)
    assert bad["reference"] == "Bergmann Druck AG · RE-77" and bad["document_name"] == "invoice-bad-iban.pdf"
    dead = listed[alices_day["dead"].pk]
    assert dead["outcome"] is None and dead["needs_action"] is True
    ok = client.get(f"/jobs/{alices_day['ok'].pk}").json()
    assert (ok["outcome"], ok["outcome_text"], ok["needs_action"]) == ("ok", "OK", False)
    waiting = client.get(f"/jobs/{alices_day['waiting'].pk}").json()
    assert waiting["outcome"] is None and waiting["needs_action"] is False


def test_the_empty_list_points_to_the_submit_page(browser_client, alice):
    html = browser_client(alice).get("/jobs").content.decode()
    assert "No documents yet." in html and 'href="/jobs/new">Review your first documents</a>' in html
    assert "Export CSV" not in html


def test_the_rows_a_poll_swaps_in_keep_the_outcomes(browser_client, alice, alices_day):
    html = browser_client(alice).get("/jobs", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<tbody id="rows"')
    assert outcome(rows(html)[alices_day["to_correct"].pk]) == ("1 to correct", "attention")


def test_home_is_the_list(browser_client, alice):
    response = browser_client(alice).get("/")
    assert response.status_code == 302 and response["Location"] == "/jobs"


def test_a_job_moved_by_staff_changes_its_row(browser_client, alice, alices_day, clock):
    """Needs my action follows the state: a dead job requeued by staff leaves it."""
    dead = alices_day["dead"]
    assert queue.requeue(job_id=dead.pk, expected_state="dead", expected_epoch=dead.epoch, actor="staff:ops",
                         reason="retry", now=clock.now())
    html = browser_client(alice).get("/jobs?needs_action=1").content.decode()
    assert dead.pk not in rows(html) and Job.objects.get(pk=dead.pk).state == "queued"


def test_the_added_fields_come_after_the_ones_answers_always_had(api_client, alice, alices_day):
    job = api_client(alice).get(f"/jobs/{alices_day['ok'].pk}").json()
    assert list(job) == ["id", "kind", "state", "attempts", "max_attempts", "created_at", "updated_at", "finished_at",
                         "deadline", "status_url", "events", "result", "document_name", "batch", "outcome",
                         "outcome_text", "needs_action", "reference", "duplicate_of", "resubmitted_as",
                         "resubmitted_from", "work"]
    listed = api_client(alice).get("/jobs").json()["jobs"][0]
    assert list(listed)[:8] == ["id", "kind", "state", "attempts", "created_at", "updated_at", "finished_at",
                                "status_url"]
