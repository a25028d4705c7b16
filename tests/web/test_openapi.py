"""The generated OpenAPI description stays true: real responses validate against it.

Each documented (path, method, status) has a scenario below that produces it; the test
fails if the document lists a status no scenario produces, or a scenario produces one the
document does not list, or a body or a documented header does not match.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import resolve

from accounts.models import Tenant, User
from jobs import queue
from tests.conftest import claim_first
from web.openapi import OPERATIONS, openapi

from .conftest import key, review_result

NOOP = {"kind": "diagnostic.noop", "payload": {}}


def post(client, body=NOOP, *, idem: str | None = "auto", content_type="application/json", **headers):
    if idem:
        headers["Idempotency-Key"] = key() if idem == "auto" else idem
    data = json.dumps(body) if content_type == "application/json" else body
    return client.post("/jobs", data=data, content_type=content_type, headers=headers)


def scenarios(alice, bob, api_client, accept, completed_job, monkeypatch, clock, make_member):
    """(path, method, status) -> the responses that should match the document."""
    client = api_client(alice)
    tenantless = api_client(User.objects.create_user("no-tenant", password="x" * 12))
    conflict_key = key()
    post(client, idem=conflict_key)

    session = Client(enforce_csrf_checks=True)
    session.force_login(alice)
    done = completed_job({"fields": {}, "draft": "ok"})
    queued = accept()

    def unavailable(path_call):
        with monkeypatch.context() as m:
            def down(**kwargs):
                raise OperationalError("database is locked")
            m.setattr(queue, "accept", down)
            m.setattr("web.status.job_status", down)
            m.setattr("web.status.job_page", down)
            return path_call()

    def cancel(who, job_id):
        return who.post(f"/jobs/{job_id}/cancel")

    def correct(who, job_id, body, field="iban", content_type="application/json"):
        data = json.dumps(body) if content_type == "application/json" else body
        return who.patch(f"/jobs/{job_id}/fields/{field}", data=data, content_type=content_type)

    review = completed_job(review_result(iban_status="malformed"), kind="document_review", payload={"text": "x"})
    good_iban = {"value": "DE89 3704 0044 0532 0130 00"}

    waiting, running = accept(), accept()
    claim_first(running, now=clock.now())
    full = make_member("full")
    Tenant.objects.filter(pk=full.tenant_id).update(max_waiting=1)
    accept(user=full)

    return {
        ("/jobs", "post", 429): [post(api_client(full))],
        ("/jobs/{id}/cancel", "post", 200): [cancel(client, waiting.pk), cancel(client, waiting.pk)],
        ("/jobs/{id}/cancel", "post", 202): [cancel(client, running.pk)],
        ("/jobs/{id}/cancel", "post", 401): [cancel(Client(), queued.pk)],
        ("/jobs/{id}/cancel", "post", 403): [cancel(session, queued.pk)],
        ("/jobs/{id}/cancel", "post", 404): [cancel(client, accept(user=bob).pk), cancel(client, 999999)],
        ("/jobs/{id}/cancel", "post", 405): [client.get(f"/jobs/{queued.pk}/cancel")],
        ("/jobs/{id}/cancel", "post", 409): [cancel(client, done.pk)],
        ("/jobs/{id}/cancel", "post", 503): [unavailable(lambda: cancel(client, queued.pk))],
        ("/jobs", "post", 202): [post(client), post(client, idem=conflict_key)],
        ("/jobs", "post", 400): [post(client, idem=None), post(client, {"kind": "nope"})],
        ("/jobs", "post", 401): [post(Client())],
        ("/jobs", "post", 403): [post(session), post(tenantless)],
        ("/jobs", "post", 405): [client.put("/jobs")],
        ("/jobs", "post", 409): [
            post(client, {"kind": "diagnostic.sleep", "payload": {"seconds": 1}}, idem=conflict_key)],
        ("/jobs", "post", 413): [post(client, {"kind": "diagnostic.noop", "payload": {"x": "y" * 300}})],
        ("/jobs", "post", 415): [post(client, "hello", content_type="text/plain")],
        ("/jobs", "post", 503): [unavailable(lambda: post(client))],
        ("/jobs", "get", 200): [client.get("/jobs"), client.get("/jobs?state=queued&page=1")],
        ("/jobs", "get", 400): [client.get("/jobs?state=nope"), client.get("/jobs?page=0")],
        ("/jobs", "get", 401): [Client().get("/jobs")],
        ("/jobs", "get", 503): [unavailable(lambda: client.get("/jobs"))],
        ("/jobs/{id}/fields/{field}", "patch", 200): [
            correct(client, review.pk, good_iban), correct(client, review.pk, {"confirm": True}, "currency")],
        ("/jobs/{id}/fields/{field}", "patch", 400): [
            correct(client, review.pk, good_iban, "nope"), correct(client, review.pk, {"value": " "}),
            correct(client, review.pk, {"value": "x", "confirm": True}), correct(client, review.pk, "[1]")],
        ("/jobs/{id}/fields/{field}", "patch", 401): [correct(Client(), review.pk, good_iban)],
        ("/jobs/{id}/fields/{field}", "patch", 403): [correct(session, review.pk, good_iban)],
        ("/jobs/{id}/fields/{field}", "patch", 404): [
            correct(client, accept(user=bob).pk, good_iban), correct(client, 999999, good_iban)],
        ("/jobs/{id}/fields/{field}", "patch", 405): [client.get(f"/jobs/{review.pk}/fields/iban")],
        ("/jobs/{id}/fields/{field}", "patch", 409): [
            correct(client, queued.pk, good_iban), correct(client, done.pk, good_iban),
            correct(client, completed_job(review_result(readable=False), kind="document_review",
                                          payload={"text": "x"}).pk, {"confirm": True})],
        ("/jobs/{id}/fields/{field}", "patch", 415): [
            correct(client, review.pk, "value=x", content_type="text/plain")],
        ("/jobs/{id}/fields/{field}", "patch", 503): [unavailable(lambda: correct(client, review.pk, good_iban))],
        ("/jobs/{id}", "get", 200): [client.get(f"/jobs/{queued.pk}"), client.get(f"/jobs/{done.pk}")],
        ("/jobs/{id}", "get", 401): [Client().get(f"/jobs/{queued.pk}")],
        ("/jobs/{id}", "get", 404): [client.get(f"/jobs/{accept(user=bob).pk}"), client.get("/jobs/999999")],
        ("/jobs/{id}", "get", 405): [client.delete(f"/jobs/{queued.pk}")],
        ("/jobs/{id}", "get", 503): [unavailable(lambda: client.get(f"/jobs/{queued.pk}"))],
    }


def validator(doc, schema):
    return jsonschema.Draft202012Validator({**schema, "components": doc["components"]})


def test_the_served_document_is_the_one_in_the_code(client):
    assert client.get("/openapi.json").json() == json.loads(json.dumps(openapi()))


def test_each_operation_is_served_at_its_documented_path():
    for op in OPERATIONS:
        assert resolve(op.path.replace("{id}", "1").replace("{field}", "iban")).url_name == op.url_name, op


def test_the_components_are_the_models_json_schemas():
    """Generated from web.schemas, not written by hand: a field added to a model is documented."""
    from web import schemas

    components = openapi()["components"]["schemas"]
    for name in ("Accepted", "Job", "JobList", "Error", "JobRequest", "JobForm"):
        model = getattr(schemas, name)
        assert set(components[name]["properties"]) == {f.alias or n for n, f in model.model_fields.items()}


def test_every_documented_response_is_produced_and_matches_its_schema(alice, bob, api_client, accept,
                                                                      completed_job, monkeypatch, clock, make_member):
    doc = openapi()
    produced = scenarios(alice, bob, api_client, accept, completed_job, monkeypatch, clock, make_member)
    documented = {(path, method, int(code)) for path, item in doc["paths"].items()
                  for method, op in item.items() for code in op["responses"]}
    assert documented == set(produced)
    for (path, method, code), responses in produced.items():
        spec = doc["paths"][path][method]["responses"][str(code)]
        schema = spec["content"]["application/json"]["schema"]
        for response in responses:
            assert response.status_code == code, (path, method, code, response.content)
            assert response["Content-Type"] == "application/json"
            validator(doc, schema).validate(response.json())
            for header in spec.get("headers", {}):
                if header == "Retry-After" and path == "/jobs/{id}" and response.json().get("state") == "completed":
                    assert header not in response  # only while the job is not terminal
                    continue
                assert header in response, (path, method, code, header)


def test_component_schemas_are_valid_json_schema():
    for schema in openapi()["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("body", [{"kind": "diagnostic.noop", "payload": {}}, {"kind": "webtest.echo"}])
def test_a_body_the_api_accepts_is_a_documented_request(api_client, alice, body):
    doc = openapi()
    schema = doc["paths"]["/jobs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    validator(doc, schema).validate(body)
    assert post(api_client(alice), body).status_code == 202
