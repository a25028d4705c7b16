"""The JSON API: every status code it promises, idempotency, tenant isolation, cheap polls."""

from __future__ import annotations

import json
import re

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from jobs.models import Job, JobEvent
from web import edge, status

from .conftest import key


def post_json(client: Client, body, *, idempotency_key: str | None = None, **headers):
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post("/jobs", data=data, content_type="application/json", headers=headers)


def assert_error(response, status_code: int, code: str | None = None, field: str | None = None):
    assert response.status_code == status_code, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) <= {"error", "detail", "field"} and body["detail"]
    if code:
        assert body["error"] == code
    if field:
        assert body["field"] == field
    return body


# --- POST /jobs: acceptance ------------------------------------------------------------------


def test_post_json_commits_a_queued_job_and_answers_202_with_location(api_client, alice):
    response = post_json(api_client(alice), {"kind": "diagnostic.sleep", "payload": {"seconds": 1}},
                         idempotency_key="k-1")
    assert response.status_code == 202
    job = Job.objects.get()
    assert response["Location"] == f"/jobs/{job.pk}"
    assert response["Retry-After"] == "1"
    assert response.json() == {"id": job.pk, "state": "queued", "status_url": f"/jobs/{job.pk}"}
    assert (job.scope_id, job.submitted_by_id, job.state, job.payload) == (
        alice.tenant_id, alice.pk, "queued", {"seconds": 1})


def test_same_key_and_same_request_returns_the_same_job_and_no_new_row(api_client, alice):
    client = api_client(alice)
    body = {"kind": "diagnostic.sleep", "payload": {"seconds": 1}}
    first = post_json(client, body, idempotency_key="k-1")
    again = post_json(client, body, idempotency_key="k-1")
    assert again.status_code == 202 and again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert Job.objects.count() == 1


def test_same_key_with_a_different_request_is_409_and_leaves_no_row(api_client, alice):
    client = api_client(alice)
    post_json(client, {"kind": "diagnostic.sleep", "payload": {"seconds": 1}}, idempotency_key="k-1")
    response = post_json(client, {"kind": "diagnostic.sleep", "payload": {"seconds": 2}}, idempotency_key="k-1")
    assert_error(response, 409, "operation_key_conflict")
    assert Job.objects.count() == 1


def test_owner_and_tenant_fields_in_the_body_are_ignored(api_client, alice, bob):
    response = post_json(api_client(alice), {"kind": "diagnostic.noop", "payload": {}, "tenant": bob.tenant_id,
                                             "submitted_by": bob.pk, "tenant_id": bob.tenant_id},
                         idempotency_key=key())
    assert response.status_code == 202
    job = Job.objects.get()
    assert (job.scope_id, job.submitted_by_id) == (alice.tenant_id, alice.pk)


def test_a_multipart_upload_is_accepted_with_its_document(api_client, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = api_client(alice).post("/jobs", {
        "kind": "webtest.echo", "idempotency_key": "form-key",
        "document": SimpleUploadedFile("invoice.txt", b"Supplier: ACME", content_type="text/plain"),
    })
    assert response.status_code == 202, response.content
    job = Job.objects.get()
    assert (job.document.original_name, job.document.size, job.operation_key) == ("invoice.txt", 14, "form-key")


# --- POST /jobs: every refusal, and none leaves a row ----------------------------------------


@pytest.mark.parametrize("body, code, field", [
    ({"kind": "diagnostic.sleep", "payload": {"seconds": 1}}, "invalid_operation_key", "operation_key"),
])
def test_a_missing_idempotency_key_is_400(api_client, alice, body, code, field):
    assert_error(post_json(api_client(alice), body), 400, code, field)
    assert not Job.objects.exists()


@pytest.mark.parametrize("body, code, field", [
    ({"kind": "no.such.kind", "payload": {}}, "unknown_kind", "kind"),
    ({"payload": {}}, "invalid", "kind"),
    ({"kind": "diagnostic.sleep", "payload": {"seconds": -1}}, "invalid_payload", "payload.seconds"),
    ({"kind": "diagnostic.sleep", "payload": {"surprise": 1}}, "invalid_payload", "payload"),
    ({"kind": "diagnostic.sleep", "payload": [1, 2]}, "invalid_payload", "payload"),
])
def test_invalid_input_is_400_naming_the_field(api_client, alice, body, code, field):
    assert_error(post_json(api_client(alice), body, idempotency_key=key()), 400, code, field)
    assert not Job.objects.exists() and not JobEvent.objects.exists()


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"kind"'])
def test_a_body_that_is_not_a_json_object_is_400(api_client, alice, raw):
    assert_error(post_json(api_client(alice), raw, idempotency_key=key()), 400)
    assert not Job.objects.exists()


@pytest.mark.parametrize("raw, field", [
    ('{"kind": "diagnostic.sleep", "payload": {"seconds": NaN}}', None),
    ('{"kind": "diagnostic.sleep", "payload": {"seconds": -Infinity}}', None),
    ('{"kind": "diagnostic.sleep", "payload": {"seconds": 1e400}}', None),
    ('{"kind": "webtest.echo", "payload": {"text": "\\ud800"}}', "payload.text"),
    ('{"kind": "webtest.echo", "payload": {"text": "a\\u0000b"}}', "payload.text"),
    ('{"kind": "webtest.echo", "payload": {"\\u0000": "b"}}', "payload"),
    ('{"kind": "webtest.echo", "payload": {"text": ' + "[" * 40 + "]" * 40 + "}}", "payload.text" + ".0" * 32),
    ('{"kind": "webtest.echo", "payload": ' + "[" * 100_000 + "]" * 100_000 + "}", "payload"),
])
def test_json_that_parses_but_no_database_stores_is_400_not_500(api_client, alice, raw, field):
    """NaN, Infinity, lone surrogates, NUL (PostgreSQL's jsonb) and deep nesting: refused up front."""
    client = api_client(alice)
    client.raise_request_exception = False  # a 500 must show up as a 500 here, not as an exception
    body = assert_error(post_json(client, raw, idempotency_key=key()), 400, field=field)
    assert body["error"] in {"malformed_json", "invalid_payload"}
    assert not Job.objects.exists() and not JobEvent.objects.exists()


@pytest.mark.parametrize("payload, field", [('{"text": "\\ud800"}', "payload.text"), ('{"seconds": NaN}', "payload"),
                                            ("[" * 100_000, "payload")])
def test_a_form_payload_that_no_database_stores_is_400(api_client, alice, payload, field):
    client = api_client(alice)
    client.raise_request_exception = False
    response = client.post("/jobs", {"kind": "webtest.echo", "idempotency_key": key(), "payload": payload})
    assert_error(response, 400, "invalid_payload", field)
    response = client.post("/jobs", {"kind": "webtest.echo", "idempotency_key": key(), "text": "a\x00b"})
    assert_error(response, 400, "invalid_payload", "payload.text")
    assert not Job.objects.exists()


def test_a_documents_odd_claimed_media_type_is_stored_as_octet_stream(api_client, alice):
    """The claim is the client's (a 100-character column); nonsense must not become a 500."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = api_client(alice)
    client.raise_request_exception = False
    response = client.post("/jobs", {
        "kind": "webtest.echo", "idempotency_key": key(),
        "document": SimpleUploadedFile("a.txt", b"hello", content_type="text/" + "x" * 300),
    })
    assert response.status_code == 202, response.content
    assert Job.objects.get().document.content_type == "application/octet-stream"


def test_diagnostic_kinds_are_unknown_unless_offered(api_client, alice, settings):
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": False}
    response = post_json(api_client(alice), {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert_error(response, 400, "unknown_kind", "kind")


def test_a_payload_over_the_kinds_limit_is_413(api_client, alice):
    body = {"kind": "webtest.echo", "payload": {"text": "x" * 9000}}
    assert_error(post_json(api_client(alice), body, idempotency_key=key()), 413, "too_large", "payload")
    assert not Job.objects.exists()


def test_a_document_over_the_kinds_limit_is_413(api_client, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = api_client(alice).post("/jobs", {
        "kind": "webtest.echo", "idempotency_key": key(),
        "document": SimpleUploadedFile("big.txt", b"x" * 5000, content_type="text/plain"),
    })
    assert_error(response, 413, "too_large", "document")
    assert not Job.objects.exists()


def test_a_body_over_the_request_limit_is_413_before_it_is_read(api_client, alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    limit = edge.max_request_bytes()
    body = {"kind": "webtest.echo", "payload": {"text": "x" * (limit + 1)}}
    assert_error(post_json(api_client(alice), body, idempotency_key=key()), 413, "too_large")
    assert not Job.objects.exists()


def test_a_body_that_is_neither_json_nor_a_form_is_415(api_client, alice):
    response = api_client(alice).post("/jobs", data="kind=x", content_type="text/plain",
                                      headers={"Idempotency-Key": key()})
    assert_error(response, 415, "unsupported_media_type")
    assert not Job.objects.exists()


def test_a_document_for_a_kind_that_takes_none_is_415(api_client, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = api_client(alice).post("/jobs", {
        "kind": "diagnostic.noop", "idempotency_key": key(),
        "document": SimpleUploadedFile("a.txt", b"hello", content_type="text/plain"),
    })
    assert_error(response, 415, "unsupported_media_type", "document")
    assert not Job.objects.exists()


def test_no_credentials_is_401_with_a_bearer_challenge(alice):
    response = post_json(Client(), {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert_error(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert_error(Client().get("/jobs/1"), 401)
    assert not Job.objects.exists()


@pytest.mark.parametrize("header", ["Bearer jq_not-a-real-token", "Bearer ", "Basic YWxpY2U6eA==", "jq_abc"])
def test_an_invalid_token_is_401_even_with_a_session(alice, header):
    client = Client(headers={"Authorization": header})
    client.force_login(alice)  # the header alone decides: a session cookie does not rescue it
    response = post_json(client, {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert_error(response, 401, "invalid_token")
    assert not Job.objects.exists()


def test_a_valid_token_needs_no_csrf_token_even_beside_a_session(api_client, alice):
    client = api_client(alice)  # enforces CSRF checks
    client.force_login(alice)
    response = post_json(client, {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert response.status_code == 202, response.content


def test_a_revoked_token_is_401(api_client, alice):
    client = api_client(alice)
    alice.api_tokens.all().delete()
    assert_error(client.get("/jobs"), 401, "invalid_token")


@pytest.mark.parametrize("method, url", [("put", "/jobs"), ("delete", "/jobs"), ("delete", "/jobs/1"),
                                         ("post", "/jobs/1"), ("patch", "/jobs/1")])
def test_other_methods_are_405_with_allow(api_client, alice, method, url):
    response = getattr(api_client(alice), method)(url)
    assert_error(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]


def test_the_store_failing_after_the_job_row_is_written_is_503_with_retry_after_and_no_row(api_client, alice):
    """The store fails on the statement after the job's INSERT: the whole acceptance rolls back."""
    client = api_client(alice)
    written: list[str] = []

    def fail_after_the_job_row(execute, sql, params, many, context):
        if written == ["job"]:
            written.append("failed")
            raise OperationalError("disk I/O error")
        result = execute(sql, params, many, context)
        if re.match(r'\s*INSERT INTO "?jobs_job"?\s', sql, re.IGNORECASE):
            written.append("job")
        return result

    with connection.execute_wrapper(fail_after_the_job_row):
        response = post_json(client, {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert written == ["job", "failed"]  # the row was written, then the store failed
    assert_error(response, 503, "unavailable")
    assert response["Retry-After"] == str(edge.RETRY_AFTER_UNAVAILABLE)
    assert not Job.objects.exists() and not JobEvent.objects.exists()


def test_a_status_read_while_the_store_is_unavailable_is_503(api_client, alice, accept, monkeypatch):
    job = accept()

    def down(**kwargs):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(status, "job_status", down)
    response = api_client(alice).get(f"/jobs/{job.pk}")
    assert_error(response, 503, "unavailable")
    assert response["Retry-After"]


@pytest.mark.django_db(transaction=True)
def test_a_sqlite_write_lock_held_past_the_busy_timeout_is_503(make_member, api_client, settings):
    """A real lock, not a mock: another connection holds SQLite's write lock."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's single write lock; PostgreSQL has no database-wide write lock")
    import sqlite3

    alice = make_member("acme", "alice")
    client = api_client(alice)
    connection.close()
    settings.DATABASES["default"]["OPTIONS"]["timeout"] = 0.2
    blocker = sqlite3.connect(settings.DATABASES["default"]["NAME"], isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        response = post_json(client, {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        settings.DATABASES["default"]["OPTIONS"]["timeout"] = 5
        connection.close()
    assert_error(response, 503, "unavailable")
    assert response["Retry-After"]
    assert not Job.objects.exists()


# --- GET /jobs/<id> ------------------------------------------------------------------------


def test_get_shows_state_attempts_and_history_without_result_while_queued(api_client, alice, accept):
    job = accept("diagnostic.sleep", {"seconds": 1})
    response = api_client(alice).get(f"/jobs/{job.pk}")
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["kind"], body["state"], body["attempts"]) == (job.pk, "diagnostic.sleep", "queued", 0)
    assert body["events"] == [
        {"from": None, "to": "queued", "epoch": 0, "at": body["created_at"], "reason": "accepted"}]
    assert body["created_at"] == job.created_at.isoformat() and body["created_at"].endswith("+00:00")
    assert "result" not in body and "payload" not in body
    assert int(response["Retry-After"]) >= 1


def test_get_shows_the_result_once_completed_and_no_retry_after(api_client, alice, completed_job):
    job = completed_job({"fields": {}, "draft": "Dear supplier"})
    response = api_client(alice).get(f"/jobs/{job.pk}")
    body = response.json()
    assert body["state"] == "completed" and body["result"] == {"fields": {}, "draft": "Dear supplier"}
    assert [(e["from"], e["to"]) for e in body["events"]] == [
        (None, "queued"), ("queued", "leased"), ("leased", "completed")]
    assert "Retry-After" not in response


def test_the_history_never_carries_payload_text(api_client, alice, accept):
    job = accept("webtest.echo", {"text": "CONFIDENTIAL-INVOICE-TEXT"})
    response = api_client(alice).get(f"/jobs/{job.pk}")
    assert b"CONFIDENTIAL-INVOICE-TEXT" not in response.content


def test_unknown_and_other_tenants_ids_give_byte_identical_404s(api_client, alice, bob, accept):
    bobs = accept(user=bob)
    client = api_client(alice)
    foreign = client.get(f"/jobs/{bobs.pk}")
    unknown = client.get(f"/jobs/{bobs.pk + 1000}")
    assert_error(foreign, 404, "not_found")
    assert foreign.content == unknown.content
    assert sorted(foreign.items()) == sorted(unknown.items())


def test_a_status_read_is_two_indexed_queries_after_authentication(api_client, alice, accept):
    """Counted: the job (by primary key and tenant) and its events (by jobevent_job_idx).

    Not counted: the bearer-token look-up (one query by its unique digest), which every
    authenticated request pays; the test asserts that total too. The token's first use is
    made before counting: it also records the use, which happens at most once a minute.
    """
    job = accept()
    client = api_client(alice)
    assert client.get(f"/jobs/{job.pk}").status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/jobs/{job.pk}").status_code == 200
    token_table = "jobs_apitoken"
    status_queries = [q["sql"] for q in queries if token_table not in q["sql"]]
    assert len(status_queries) == 2, status_queries
    assert len(queries) == 3
    assert all('"payload"' not in sql for sql in status_queries)


def test_a_status_read_is_two_queries_for_a_poll_of_the_html_partial(browser_client, alice, accept,
                                                                      django_assert_max_num_queries):
    """Counted: the whole htmx poll, including the session row and the user (two queries), and, while
    the job waits, whether the queue is late (one, at most every few seconds per process:
    ``jobs.queue.lateness``)."""
    job = accept()
    client = browser_client(alice)
    with django_assert_max_num_queries(5):
        response = client.get(f"/jobs/{job.pk}?poll=1", headers={"HX-Request": "true"})
    assert response.status_code == 200


# --- GET /jobs -------------------------------------------------------------------------------


def test_the_list_is_the_tenants_jobs_newest_first_with_paging_and_a_state_filter(api_client, alice, bob, accept,
                                                                                   completed_job):
    done = completed_job({"ok": True})
    mine = [accept() for _ in range(status.PAGE_SIZE + 2)]
    accept(user=bob)
    client = api_client(alice)
    first = client.get("/jobs").json()
    assert [j["id"] for j in first["jobs"]] == [j.pk for j in reversed(mine)][: status.PAGE_SIZE]
    assert first["pages"] == 2 and first["next"] == "/jobs?page=2"
    second = client.get(first["next"]).json()
    assert [j["id"] for j in second["jobs"]] == [mine[1].pk, mine[0].pk, done.pk]
    completed = client.get("/jobs?state=completed").json()
    assert [j["id"] for j in completed["jobs"]] == [done.pk]
    assert_error(client.get("/jobs?state=bogus"), 400, "invalid", "state")
    assert_error(client.get("/jobs?page=first"), 400, "invalid", "page")
    assert client.get("/jobs?state=&page=1").json()["jobs"] == first["jobs"]  # the page's "all"


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_postgresql_server_is_503(make_member, api_client):
    """A real connection failure: the server's port is closed."""
    if connection.vendor != "postgresql":
        pytest.skip("a connection failure to a database server")
    client = api_client(make_member("acme", "alice"))
    port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = "1"
    try:
        response = post_json(client, {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port
    assert_error(response, 503, "unavailable")
    assert response["Retry-After"]
    assert not Job.objects.exists()


def test_both_status_queries_use_an_index(alice, accept):
    """The plans, not only the count: the primary key for the job, jobevent_job_idx for events."""
    job = accept()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # tiny tables: ask whether an index *can* serve
        job_plan = status.job_query(tenant_id=alice.tenant_id, job_id=job.pk).explain()
        events_plan = status.events_query(job_id=job.pk).explain()
    if connection.vendor == "sqlite":
        assert "INTEGER PRIMARY KEY" in job_plan, job_plan
        assert "jobevent_job_idx" in events_plan, events_plan
    else:  # on a handful of rows the planner may pick any index that has the row
        assert "Index" in job_plan and "Seq Scan" not in job_plan, job_plan
        assert "Index" in events_plan and "Seq Scan" not in events_plan, events_plan


def test_an_acceptance_before_the_clock_has_a_database_reading_is_503_and_writes_nothing(api_client, alice,
                                                                                         monkeypatch):
    """The process has no reading of the database's time yet (the database did not answer):
    the job is not stamped with this host's wall clock, the client is told to retry."""
    from jobs.clock import queue_clock

    def unreachable():
        raise OperationalError("connection refused")

    monkeypatch.setattr(queue_clock, "_anchor", None)
    monkeypatch.setattr(queue_clock, "_read", unreachable)
    response = post_json(api_client(alice), {"kind": "diagnostic.noop", "payload": {}}, idempotency_key=key())
    assert_error(response, 503, "unavailable")
    assert response["Retry-After"] == str(edge.RETRY_AFTER_UNAVAILABLE)
    assert not Job.objects.exists() and not JobEvent.objects.exists()
