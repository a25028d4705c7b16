"""A document's work state, apart from its job's: to do, waiting for the supplier, handled, ignored;
an assignee among the tenant's members; a note; each change on the job's history. "Needs my action"
counts only what is to do for the viewer or for nobody; the list's bulk actions mark handled,
assign and export the selected rows; another tenant's job is never touched, and is refused like an
unknown one."""

from __future__ import annotations

import csv
import io
from zoneinfo import ZoneInfo

import pytest

from agent.inbox import work
from agent.models import DocumentWork, DocumentWorkChange
from jobs.models import Job
from tests.conftest import drive_to
from web import status

from .conftest import review_result

TO_CORRECT = review_result(iban_status="malformed")  # needs action: its IBAN is to correct


@pytest.fixture
def carol(make_member):
    """Alice's teammate (bob is in another tenant)."""
    return make_member("acme", "carol")


@pytest.fixture
def to_correct(reviewed):
    def make(**kwargs):
        job = reviewed(TO_CORRECT, **kwargs)
        assert job.needs_action
        return job

    return make


def change(job, user, clock, **changes):
    return work.change(tenant_id=user.tenant_id, job_id=job.pk, by_id=user.pk, now=clock.now(), **changes)


def now_of(job) -> tuple[str, str, str]:
    found = status.work_of([Job.objects.get(pk=job.pk)])[job.pk]
    return found.state, found.assignee, found.note


def count(user, *, team: bool = False) -> int:
    return status.needing_action(tenant_id=user.tenant_id, user_id=None if team else user.pk, viewer_id=user.pk)


def posted(browser, url: str, data: dict, *, page: str = "/jobs"):
    """A form posted as the browser does: its CSRF token from a page it loaded first."""
    token = browser.get(page).cookies["csrftoken"].value
    return browser.post(url, {"csrfmiddlewaretoken": token, **data})


# --- The owner function -----------------------------------------------------------------------------


def test_a_document_to_correct_starts_to_do_and_an_ok_one_with_nothing_to_do(to_correct, reviewed):
    assert now_of(to_correct()) == ("todo", "", "")
    ok = reviewed(review_result())
    assert not ok.needs_action and now_of(ok) == ("", "", "")


def test_each_transition_is_written_with_its_history_line(to_correct, alice, clock):
    job = to_correct()
    for before, after in (("todo", "waiting"), ("waiting", "handled"), ("handled", "ignored"), ("ignored", "todo")):
        clock.advance(seconds=1)
        done = change(job, alice, clock, state=after)
        assert done is not None and (done.from_state, done.to_state) == (before, after)
        assert now_of(job)[0] == after
    lines = list(DocumentWorkChange.objects.filter(job_id=job.pk).order_by("id")
                 .values_list("by__username", "from_state", "to_state"))
    assert lines == [("alice", "todo", "waiting"), ("alice", "waiting", "handled"), ("alice", "handled", "ignored"),
                     ("alice", "ignored", "todo")]
    assert [words for _, words in work.history(job.pk)] == [
        "alice: To do → Waiting for the supplier", "alice: Waiting for the supplier → Handled",
        "alice: Handled → Ignored", "alice: Ignored → To do"]
    assert DocumentWork.objects.get(job_id=job.pk).version == 4


def test_nothing_changed_writes_nothing(to_correct, alice, clock):
    job = to_correct()
    assert change(job, alice, clock, state="todo") is None
    assert not DocumentWork.objects.filter(job_id=job.pk).exists()
    assert not DocumentWorkChange.objects.exists()


def test_a_note_and_an_assignee_of_the_tenant(to_correct, alice, carol, clock):
    job = to_correct()
    change(job, alice, clock, state="waiting", assignee_id=carol.pk, note="  asked   by email  ")
    assert now_of(job) == ("waiting", "carol", "asked by email")
    change(job, carol, clock, note="")
    assert now_of(job) == ("waiting", "carol", "")
    change(job, carol, clock, assignee_id=None)
    assert [words for _, words in work.history(job.pk)] == [
        "alice: To do → Waiting for the supplier; assigned to carol; note: “asked by email”",
        "carol: note cleared", "carol: unassigned"]


def test_another_tenants_member_is_never_an_assignee(to_correct, alice, bob, clock):
    job = to_correct()
    with pytest.raises(work.WorkRefused) as refused:
        change(job, alice, clock, assignee_id=bob.pk)
    assert refused.value.code == "not_a_member" and "member of your team" in refused.value.message
    assert now_of(job) == ("todo", "", "") and not DocumentWorkChange.objects.exists()


def test_another_tenants_job_is_refused_like_an_unknown_one(to_correct, alice, bob, clock):
    job = to_correct()
    for job_id in (job.pk, 999999):
        with pytest.raises(work.NoSuchJob):
            work.change(tenant_id=bob.tenant_id, job_id=job_id, by_id=bob.pk, now=clock.now(), state="handled")
    assert not DocumentWork.objects.exists()


def test_a_state_or_note_that_is_not_one_is_refused(to_correct, alice, clock):
    job = to_correct()
    with pytest.raises(work.WorkRefused, match="must be one of"):
        change(job, alice, clock, state="paid")
    with pytest.raises(work.WorkRefused, match="at most 200"):
        change(job, alice, clock, note="x" * 201)


def test_a_write_over_a_stale_version_is_tried_again_on_what_is_there_now(to_correct, alice, carol, clock,
                                                                          monkeypatch):
    """Two members at once: carol's write lands between alice's read and her guarded update, so
    alice's update finds another version, reads again, and keeps carol's assignee."""
    job = to_correct()
    change(job, alice, clock, state="waiting")
    read = work._current
    reads = []

    def raced(job_id):
        found = read(job_id)
        if not reads:
            DocumentWork.objects.filter(job_id=job_id).update(version=99, assignee_id=carol.pk)
        reads.append(found.version)
        return found

    monkeypatch.setattr(work, "_current", raced)
    done = change(job, alice, clock, state="handled")
    assert reads == [1, 99]
    assert done is not None and done.from_assignee_id == done.to_assignee_id == carol.pk
    assert now_of(job) == ("handled", "carol", "")


# --- Needs my action ------------------------------------------------------------------------------


def test_needs_my_action_counts_what_is_to_do_for_me_or_for_nobody(to_correct, alice, carol, clock):
    jobs = [to_correct() for _ in range(6)]
    assert count(alice) == 6
    change(jobs[0], alice, clock, state="handled")
    change(jobs[1], alice, clock, state="ignored")
    change(jobs[2], alice, clock, state="waiting")
    change(jobs[3], alice, clock, assignee_id=carol.pk)  # carol's now
    change(jobs[4], alice, clock, assignee_id=alice.pk)  # still mine
    assert count(alice) == 2 and count(alice, team=True) == 2
    assert count(carol, team=True) == 2  # jobs[3] (hers) and jobs[5] (nobody's); jobs[4] is alice's
    listed = status.filtered_jobs(status.JobFilter(tenant_id=alice.tenant_id, needs_action=True, viewer_id=alice.pk))
    assert sorted(listed.values_list("pk", flat=True)) == sorted([jobs[4].pk, jobs[5].pk])
    change(jobs[0], alice, clock, state="todo")
    assert count(alice) == 3


def test_a_document_a_teammate_sent_and_assigned_to_me_needs_my_action(to_correct, alice, carol, clock):
    """Her own documents by default ("mine"), and what the team assigned to her, whoever sent it."""
    theirs = to_correct(user=carol)
    assert count(alice) == 0 and count(carol) == 1
    change(theirs, carol, clock, assignee_id=alice.pk)
    assert count(alice) == 1 and count(carol) == 0
    listed = status.filtered_jobs(status.JobFilter(tenant_id=alice.tenant_id, user_id=alice.pk, needs_action=True,
                                                   viewer_id=alice.pk))
    assert list(listed.values_list("pk", flat=True)) == [theirs.pk]
    assert status.filtered_jobs(status.JobFilter(tenant_id=alice.tenant_id, user_id=alice.pk)).count() == 0
    change(theirs, alice, clock, state="handled")
    assert count(alice) == 0


def test_a_failed_document_submitted_again_no_longer_needs_action(browser_client, alice, accept, clock):
    failed = drive_to(accept("webtest.echo", {"text": "an invoice"}), "dead", now=clock.now())
    assert count(alice) == 1
    browser = browser_client(alice)
    response = posted(browser, f"/jobs/{failed.pk}/again", {"idempotency_key": "k1"}, page=f"/jobs/{failed.pk}")
    assert response.status_code == 303
    assert count(alice) == 0  # the new job is waiting; the failed one is done with


def test_the_list_shows_the_count_and_the_work_column(browser_client, to_correct, alice, carol, clock):
    mine, theirs = to_correct(), to_correct()
    change(theirs, alice, clock, assignee_id=carol.pk)
    page = browser_client(alice).get("/jobs?scope=team").content.decode()
    assert '<span class="count">1</span>' in page
    assert f'id="select-{mine.pk}"' in page and 'form="bulk"' in page
    assert "To do</span> <span class=\"assignee\">· carol</span>" in page


# --- From the pages -------------------------------------------------------------------------------


def test_the_job_page_changes_the_work_state_and_shows_it_in_the_history(browser_client, to_correct, alice, carol):
    job = to_correct()
    browser = browser_client(alice)
    page = browser.get(f"/jobs/{job.pk}").content.decode()
    assert 'id="work-sent"' in page and f'<option value="{carol.pk}">carol</option>' in page
    response = posted(browser, f"/jobs/{job.pk}/work",
                      {"state": "waiting", "assignee": str(carol.pk), "note": "asked on Monday"})
    assert response.status_code == 303 and response["Location"] == f"/jobs/{job.pk}#work"
    page = browser.get(f"/jobs/{job.pk}").content.decode()
    assert "alice: To do → Waiting for the supplier; assigned to carol; note: “asked on Monday”" in page
    assert 'id="work-message">Saved.' in page


def test_the_state_change_endpoint_needs_a_csrf_token(browser_client, to_correct, alice):
    job = to_correct()
    assert browser_client(alice).post(f"/jobs/{job.pk}/work", {"state": "handled"}).status_code == 403
    assert now_of(job)[0] == "todo"


def test_another_tenants_job_answers_the_state_change_byte_for_byte_like_an_unknown_one(api_client, to_correct,
                                                                                        alice, bob):
    theirs = to_correct(user=alice)
    client = api_client(bob)
    foreign = client.post(f"/jobs/{theirs.pk}/work", {"state": "handled"})
    unknown = client.post("/jobs/999999/work", {"state": "handled"})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.content == unknown.content
    assert now_of(theirs)[0] == "todo"


def test_assigning_another_tenants_member_is_refused_clearly(api_client, to_correct, alice, bob):
    job = to_correct()
    response = api_client(alice).post(f"/jobs/{job.pk}/work", {"assignee": str(bob.pk)})
    assert response.status_code == 400
    assert (response.json()["error"], response.json()["field"]) == ("not_a_member", "assignee")
    assert now_of(job) == ("todo", "", "")


# --- In the API -----------------------------------------------------------------------------------


def test_the_api_answers_the_work_state_assignee_by_username_and_note(api_client, to_correct, reviewed, alice,
                                                                       carol, clock):
    job, ok = to_correct(), reviewed(review_result())
    client = api_client(alice)
    assert client.get(f"/jobs/{job.pk}").json()["work"] == {
        "state": "todo", "state_text": "To do", "assignee": None, "note": ""}
    assert client.get(f"/jobs/{ok.pk}").json()["work"] == {
        "state": None, "state_text": "No action needed", "assignee": None, "note": ""}
    change(job, alice, clock, state="waiting", assignee_id=carol.pk, note="asked for a new copy")
    shown = {"state": "waiting", "state_text": "Waiting for the supplier", "assignee": "carol",
             "note": "asked for a new copy"}
    assert client.get(f"/jobs/{job.pk}").json()["work"] == shown
    listed = {row["id"]: row for row in client.get("/jobs").json()["jobs"]}
    assert listed[job.pk]["work"] == shown and listed[ok.pk]["work"]["state"] is None


def test_a_kind_without_work_states_answers_no_work(api_client, alice, accept):
    job = accept()  # diagnostic.sleep: the queue's own kind, no members' work on it
    assert api_client(alice).get(f"/jobs/{job.pk}").json()["work"] is None


# --- Bulk actions -----------------------------------------------------------------------------------


def test_bulk_mark_handled_skips_a_forged_id_of_another_tenant(browser_client, to_correct, alice, bob):
    first, second, untouched = to_correct(), to_correct(), to_correct()
    theirs = to_correct(user=bob)
    browser = browser_client(alice)
    response = posted(browser, "/jobs/work", {"action": "handled", "job": [first.pk, second.pk, theirs.pk, 999999],
                                              "next": "/jobs?needs_action=1"})
    assert response.status_code == 303 and response["Location"] == "/jobs?needs_action=1"
    assert [now_of(j)[0] for j in (first, second, untouched, theirs)] == ["handled", "handled", "todo", "todo"]
    assert not DocumentWorkChange.objects.filter(job_id=theirs.pk).exists()
    page = browser.get(response["Location"]).content.decode()
    assert "2 documents marked handled." in page and '<span class="count">1</span>' in page


def test_bulk_assign_to_a_member_and_never_to_another_tenants(browser_client, to_correct, alice, carol, bob):
    one, two = to_correct(), to_correct()
    browser = browser_client(alice)
    response = posted(browser, "/jobs/work", {"action": "assign", "job": [one.pk, two.pk], "assignee": carol.pk})
    assert response.status_code == 303 and response["Location"] == "/jobs"
    assert now_of(one)[1] == now_of(two)[1] == "carol"
    refused = posted(browser, "/jobs/work", {"action": "assign", "job": [one.pk], "assignee": bob.pk})
    assert refused.status_code == 400 and "member of your team" in refused.content.decode()
    assert now_of(one)[1] == "carol"


def test_bulk_export_has_only_the_selected_documents_of_the_tenant(browser_client, to_correct, alice, bob):
    one, _other = to_correct(name="one.txt"), to_correct(name="other.txt")
    theirs = to_correct(user=bob, name="theirs.txt")
    response = posted(browser_client(alice), "/jobs/work", {"action": "export", "job": [one.pk, theirs.pk]})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [row[0] for row in rows[1:]] == ["one.txt"]


def test_bulk_export_is_named_for_the_selection_and_dated_in_the_readers_zone(browser_client, to_correct, alice,
                                                                              clock, monkeypatch):
    monkeypatch.setattr("web.views.queue_clock", clock)  # the export's date (web.views.export_response)
    clock.advance(hours=22.5 - clock.now().hour - clock.now().minute / 60)  # 22:30 UTC: the next day in Berlin
    job = to_correct()
    berlin_day = clock.now().astimezone(ZoneInfo("Europe/Berlin")).date()
    assert berlin_day != clock.now().date()
    browser = browser_client(alice)
    berlin = posted(browser, "/jobs/work", {"action": "export", "job": [job.pk], "tz": "Europe/Berlin"})
    assert berlin["Content-Disposition"] == f'attachment; filename="docket-selected-{berlin_day}.csv"'
    utc = posted(browser, "/jobs/work", {"action": "export", "job": [job.pk]})
    assert utc["Content-Disposition"] == f'attachment; filename="docket-selected-{clock.now().date()}.csv"'


def test_a_next_address_off_the_site_is_not_followed(browser_client, to_correct, alice):
    job = to_correct()
    response = posted(browser_client(alice), "/jobs/work",
                      {"action": "handled", "job": [job.pk], "next": "//evil.example/jobs"})
    assert response["Location"] == "/jobs"
