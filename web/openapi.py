"""The OpenAPI 3.1 description of the JSON API, served at ``/openapi.json``, generated.

Bodies are the JSON Schemas of the ``web.schemas`` models the views answer with; paths come
from ``OPERATIONS``, one row per method and path naming its statuses and models. A new
endpoint is a new row; a new error is an ``Answer`` in the rows that can give it.
``tests/web/test_openapi.py`` checks real responses against the document for every row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from jobs.queue import MAX_OPERATION_KEY

from . import schemas

REF = "#/components/schemas/{model}"


@dataclass(frozen=True)
class Answer:
    """One documented status: its description, its body's model and its headers."""

    description: str
    model: type[BaseModel] = schemas.Error
    headers: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # OpenAPI's form: {name} for an integer path parameter
    url_name: str  # the Django URL it is served at (tests check the two agree)
    operation_id: str
    summary: str
    answers: dict[int, Answer]
    body: dict[str, type[BaseModel]] = field(default_factory=dict)  # media type -> model
    query: type[BaseModel] | None = None
    headers: tuple[dict[str, Any], ...] = ()  # request headers, as OpenAPI parameters
    path_types: dict[str, dict[str, Any]] = field(default_factory=dict)  # path parameters that are not integers


RETRY_AFTER = {"description": "Seconds to wait before asking again", "schema": {"type": "integer", "minimum": 1}}
LOCATION = {"description": "The job's status URL", "schema": {"type": "string"}}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "description": "The operation key: required here or as the form field idempotency_key. "
                   "The same key and request give the same job; a different request, 409.",
    "schema": {"type": "string", "maxLength": MAX_OPERATION_KEY},
}

UNAUTHENTICATED = Answer("No or invalid credentials")
NOT_ALLOWED = Answer("Method not allowed")


def unavailable(what: str = "The job store is unavailable") -> Answer:
    return Answer(what, headers={"Retry-After": RETRY_AFTER})


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "post", "/jobs", "jobs", "submitJob", "Accept a job (idempotent per Idempotency-Key)",
        body={"application/json": schemas.JobRequest, "multipart/form-data": schemas.JobForm},
        headers=(IDEMPOTENCY_KEY,),
        answers={
            202: Answer("Accepted: a queued job was committed (or this key's job is returned again)",
                        schemas.Accepted, headers={"Location": LOCATION, "Retry-After": RETRY_AFTER}),
            400: Answer("Invalid input; `field` says which"),
            401: UNAUTHENTICATED,
            403: Answer("CSRF check failed (session requests), or the account has no tenant"),
            405: NOT_ALLOWED,
            409: Answer("The Idempotency-Key was already used for a different request"),
            413: Answer("The payload, the document or the body is too large"),
            415: Answer("Unsupported body or document media type"),
            429: Answer("The tenant has its limit of jobs waiting (tenant_queue_full); nothing was written",
                        headers={"Retry-After": RETRY_AFTER}),
            503: unavailable("The job store is unavailable; nothing was accepted"),
        },
    ),
    Operation(
        "get", "/jobs", "jobs", "listJobs", "The tenant's jobs, newest first",
        query=schemas.JobListQuery,
        answers={
            200: Answer("One page of jobs", schemas.JobList),
            400: Answer("Unknown state, or a page that is not a positive integer"),
            401: UNAUTHENTICATED,
            503: unavailable(),
        },
    ),
    Operation(
        "get", "/jobs/{id}", "job_detail", "getJob", "A job's state, attempts, history, and its result once completed",
        answers={
            200: Answer("The job", schemas.Job, headers={
                "Retry-After": {**RETRY_AFTER, "description": "Present while the job is not terminal"}}),
            401: UNAUTHENTICATED,
            404: Answer("No such job for this tenant (unknown and foreign ids answer alike)"),
            405: NOT_ALLOWED,
            503: unavailable(),
        },
    ),
    Operation(
        "post", "/jobs/{id}/cancel", "job_cancel", "cancelJob",
        "Cancel a job: at once while it waits, by a request its worker acknowledges while it runs",
        answers={
            200: Answer("Cancelled (it was waiting), or already cancelled", schemas.Job),
            202: Answer("Running: the cancellation is requested; its worker acknowledges it", schemas.Job),
            401: UNAUTHENTICATED,
            403: Answer("CSRF check failed (session requests)"),
            404: Answer("No such job for this tenant (unknown and foreign ids answer alike)"),
            405: NOT_ALLOWED,
            409: Answer("The job has already ended (not_cancellable); `state` says how"),
            503: unavailable(),
        },
    ),
    Operation(
        "patch", "/jobs/{id}/fields/{field}", "job_field", "correctField",
        "Correct a field of a completed job's result, or confirm its value: the field's own check runs on it",
        body={"application/json": schemas.CorrectionRequest},
        path_types={"field": {"type": "string", "description": "The field (document_review: supplier_name, vat_id, "
                                                                "invoice_number, invoice_date, currency, total_amount, "
                                                                "iban)"}},
        answers={
            200: Answer("Corrected or confirmed: the field now, beside the review's own value",
                        schemas.FieldCorrection),
            400: Answer("An unknown field (unknown_field), an empty value (empty_value), a value that cannot be "
                        "stored (invalid_value), or a body that is neither; `field` says which"),
            401: UNAUTHENTICATED,
            403: Answer("CSRF check failed (session requests)"),
            404: Answer("No such job for this tenant (unknown and foreign ids answer alike)"),
            405: NOT_ALLOWED,
            409: Answer("The job is not completed (not_completed, `state` says how), its result has no fields "
                        "(not_correctable), or the value to confirm is missing or fails its check (cannot_confirm)"),
            415: Answer("The body is not JSON"),
            503: unavailable(),
        },
    ),
)


class _Generator(GenerateJsonSchema):
    """Pydantic's JSON Schema without a title on every property: the names say it."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def components() -> dict[str, Any]:
    """Every model the operations name, by name; query models become parameters instead."""
    models: set[tuple[type[BaseModel], JsonSchemaMode]] = {(op.query, "validation") for op in OPERATIONS if op.query}
    models |= {(model, "validation") for op in OPERATIONS for model in op.body.values()}
    models |= {(answer.model, "serialization") for op in OPERATIONS for answer in op.answers.values()}
    ordered = sorted(models, key=lambda item: (item[0].__name__, item[1]))
    _, defs = models_json_schema(ordered, ref_template=REF, schema_generator=_Generator)
    found: dict[str, Any] = defs["$defs"]
    return found


def openapi() -> dict[str, Any]:
    schemas_ = components()
    query_schemas = {op.query.__name__: schemas_.pop(op.query.__name__) for op in OPERATIONS if op.query}
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op, query_schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Document jobs",
            "version": "1",
            "description": (
                "Submit document jobs and poll their status. Acceptance is separate from "
                "execution: POST commits a queued job and answers 202 at once; workers run it."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}, {"session": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "A token from `manage.py createtoken`"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sessionid"},
            },
            "schemas": schemas_,
        },
    }


def _operation(op: Operation, query_schemas: dict[str, Any]) -> dict[str, Any]:
    parameters = [{"name": name, "in": "path", "required": True, "schema": op.path_types.get(name, {"type": "integer"})}
                  for name in re.findall(r"{(\w+)}", op.path)]
    if op.query:
        query = query_schemas[op.query.__name__]
        parameters += [{"name": name, "in": "query", "required": name in query.get("required", ()), "schema": schema}
                       for name, schema in query["properties"].items()]
    parameters += op.headers
    operation: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary}
    if parameters:
        operation["parameters"] = parameters
    if op.body:
        operation["requestBody"] = {"required": True, "content": {
            media_type: {"schema": {"$ref": REF.format(model=model.__name__)}} for media_type, model in op.body.items()
        }}
    operation["responses"] = {str(status): _response(answer) for status, answer in sorted(op.answers.items())}
    return operation


def _response(answer: Answer) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": answer.description,
        "content": {"application/json": {"schema": {"$ref": REF.format(model=answer.model.__name__)}}},
    }
    if answer.headers:
        response["headers"] = answer.headers
    return response
