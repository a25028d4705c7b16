"""An API client polling a job: each answer carries an ETag; asking again with it gets a bodiless
304 for one query of the job's version, until anything the answer shows changes (a transition,
a rejected write's event, a member's work state); another tenant's job is the same 404."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from agent.inbox import work
from agent.models import DocumentFingerprint
from jobs import queue
from tests.conftest import claim_first
from web import polling

from .conftest import review_result


def poll(client, job_id: int, tag: str | None = None):
    return client.get(f"/jobs/{job_id}", headers={"If-None-Match": tag} if tag else {})


def test_a_poll_with_the_last_etag_is_a_304_of_one_query_until_the_job_moves(api_client, alice, accept, clock):
    client = api_client(alice)
    job = accept()
    first = poll(client, job.pk)
    assert first.status_code == 200 and first["ETag"].startswith('W/"')
    assert first["Retry-After"]
    tag = first["ETag"]

    with CaptureQueriesContext(connection) as queries:
        again = poll(client, job.pk, tag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == tag
    assert again["Retry-After"]  # still live: when to ask next
    job_reads = [q["sql"] for q in queries.captured_queries if "jobs_job" in q["sql"]]
    assert len(job_reads) == 1, job_reads  # the version (with its newest event), nothing else of the job

    claim = claim_first(job, now=clock.now(), worker="w1")  # queued -> leased: a new answer
    moved = poll(client, job.pk, tag)
    assert moved.status_code == 200 and moved["ETag"] != tag and moved.json()["state"] == "leased"

    # A stale completion changes no row, but its rejection is on the timeline the answer shows.
    tag = moved["ETag"]
    assert not queue.complete(job_id=job.pk, epoch=claim.epoch + 1, result={}, now=clock.now())
    rejected = poll(client, job.pk, tag)
    assert rejected.status_code == 200 and rejected["ETag"] != tag

    tag = rejected["ETag"]
    assert queue.complete(job_id=job.pk, epoch=claim.epoch, result={"ok": True}, now=clock.now())
    done = poll(client, job.pk, tag)
    assert done.status_code == 200 and done.json()["state"] == "completed" and "Retry-After" not in done
    assert poll(client, job.pk, done["ETag"]).status_code == 304


def test_a_poll_of_a_reviewed_document_is_the_token_and_one_query(api_client, alice, reviewed):
    """A completed review's 304: the token, then the job's version with the kind's work state and
    possible duplicate in the same query (``KindPages.version_sql``)."""
    client = api_client(alice)
    job = reviewed(review_result(iban_status="malformed"))
    tag = poll(client, job.pk)["ETag"]
    with CaptureQueriesContext(connection) as queries:
        assert poll(client, job.pk, tag).status_code == 304
    sql = [q["sql"] for q in queries.captured_queries]
    assert len(sql) == 2, sql
    assert "agent_documentwork" in sql[1] and "agent_documentfingerprint" in sql[1]


def test_an_assignees_new_name_is_a_new_answer(api_client, alice, make_member, reviewed, clock):
    carol = make_member("acme", "carol")
    client = api_client(alice)
    job = reviewed(review_result(iban_status="malformed"))
    work.change(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now(), assignee_id=carol.pk)
    first = poll(client, job.pk)
    assert first.json()["work"]["assignee"] == carol.username
    assert poll(client, job.pk, first["ETag"]).status_code == 304
    User.objects.filter(pk=carol.pk).update(username="caroline")
    renamed = poll(client, job.pk, first["ETag"])
    assert renamed.status_code == 200 and renamed.json()["work"]["assignee"] == "caroline"


def test_a_duplicate_flagged_after_the_answer_is_a_new_answer(api_client, alice, reviewed, clock):
    """A later review of the same invoice settles the earlier-finished one's flag (``duplicates.record``),
    a write to the review's own rows, not to the job's."""
    client = api_client(alice)
    original, again = reviewed(review_result(iban_status="malformed")), reviewed(review_result(iban_status="malformed"))
    first = poll(client, again.pk)
    assert first.json()["duplicate_of"] is None
    DocumentFingerprint.objects.update_or_create(job=again, defaults={
        "tenant_id": alice.tenant_id, "duplicate_of": original, "match": DocumentFingerprint.Match.SAME_FILE,
        "recorded_at": clock.now()})
    flagged = poll(client, again.pk, first["ETag"])
    assert flagged.status_code == 200 and flagged.json()["duplicate_of"]["id"] == original.pk
    assert poll(client, again.pk, flagged["ETag"]).status_code == 304


def test_a_members_work_change_is_a_new_answer(api_client, alice, reviewed, clock):
    client = api_client(alice)
    job = reviewed(review_result(iban_status="malformed"))
    tag = poll(client, job.pk)["ETag"]
    assert poll(client, job.pk, tag).status_code == 304
    work.change(tenant_id=alice.tenant_id, job_id=job.pk, by_id=alice.pk, now=clock.now(), state="handled")
    changed = poll(client, job.pk, tag)
    assert changed.status_code == 200 and changed["ETag"] != tag


def test_another_tenants_job_is_the_same_404_with_or_without_an_etag(api_client, alice, bob, accept):
    job = accept()
    tag = poll(api_client(alice), job.pk)["ETag"]
    for sent in (None, tag, "*"):
        response = poll(api_client(bob), job.pk, sent)
        assert response.status_code == 404 and "ETag" not in response
    assert poll(api_client(alice), 10**12, tag).status_code == 404


@pytest.mark.parametrize(("header", "current"), [
    ('W/"abc"', True), ('"abc"', True), ('W/"x", W/"abc"', True), ("*", True),
    ('W/"abcd"', False), ("", False), ("abc", False),
])
def test_if_none_match_is_compared_weakly(header, current):
    assert polling.still_current(header, 'W/"abc"') is current
