"""The OpenAPI 3.1 description of the JSON API, served at ``/openapi.json``.

Written as data next to the code it describes; ``tests/web/test_openapi.py`` validates
real responses against these schemas for every documented status, so it stays true.
"""

from __future__ import annotations

from typing import Any

from .models import Job

STATES = list(Job.State.values)


def _error(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


RETRY_AFTER = {"description": "Seconds to wait before asking again", "schema": {"type": "integer", "minimum": 1}}
TIME = {"type": ["string", "null"], "format": "date-time"}


def openapi() -> dict[str, Any]:
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
        "paths": {
            "/jobs": {
                "post": {
                    "operationId": "submitJob",
                    "summary": "Accept a job (idempotent per Idempotency-Key)",
                    "parameters": [{
                        "name": "Idempotency-Key", "in": "header", "required": False,
                        "description": "The operation key: required here or as the form field idempotency_key. "
                                       "The same key and request give the same job; a different request, 409.",
                        "schema": {"type": "string", "maxLength": 200},
                    }],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}},
                            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/JobForm"}},
                        },
                    },
                    "responses": {
                        "202": {
                            "description": "Accepted: a queued job was committed (or this key's job is returned again)",
                            "headers": {
                                "Location": {"description": "The job's status URL", "schema": {"type": "string"}},
                                "Retry-After": RETRY_AFTER,
                            },
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Accepted"}}},
                        },
                        "400": _error("Invalid input; `field` says which"),
                        "401": _error("No or invalid credentials"),
                        "403": _error("CSRF check failed (session requests), or the account has no tenant"),
                        "405": _error("Method not allowed"),
                        "409": _error("The Idempotency-Key was already used for a different request"),
                        "413": _error("The payload, the document or the body is too large"),
                        "415": _error("Unsupported body or document media type"),
                        "503": {**_error("The job store is unavailable; nothing was accepted"),
                                "headers": {"Retry-After": RETRY_AFTER}},
                    },
                },
                "get": {
                    "operationId": "listJobs",
                    "summary": "The tenant's jobs, newest first",
                    "parameters": [
                        {"name": "state", "in": "query", "schema": {"type": "string", "enum": STATES}},
                        {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                    ],
                    "responses": {
                        "200": {"description": "One page of jobs",
                                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobList"}}}},
                        "400": _error("Unknown state"),
                        "401": _error("No or invalid credentials"),
                    },
                },
            },
            "/jobs/{id}": {
                "get": {
                    "operationId": "getJob",
                    "summary": "A job's state, attempts, history, and its result once completed",
                    "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                    "responses": {
                        "200": {
                            "description": "The job",
                            "headers": {"Retry-After": {**RETRY_AFTER, "description": "Present while the job is not terminal"}},
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Job"}}},
                        },
                        "401": _error("No or invalid credentials"),
                        "404": _error("No such job for this tenant (unknown and foreign ids answer alike)"),
                        "405": _error("Method not allowed"),
                        "503": {**_error("The job store is unavailable"), "headers": {"Retry-After": RETRY_AFTER}},
                    },
                },
            },
        },
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "A token from `manage.py createtoken`"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sessionid"},
            },
            "schemas": {
                "JobRequest": {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {
                        "kind": {"type": "string", "examples": ["document_review"]},
                        "payload": {"type": "object", "description": "Checked against the kind's JSON Schema"},
                    },
                },
                "JobForm": {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {
                        "kind": {"type": "string"},
                        "text": {"type": "string", "description": "Becomes payload.text"},
                        "document": {"type": "string", "contentMediaType": "application/octet-stream"},
                        "payload": {"type": "string", "description": "A JSON object (optional)"},
                        "idempotency_key": {"type": "string", "maxLength": 200},
                    },
                },
                "Accepted": {
                    "type": "object",
                    "required": ["id", "state", "status_url"],
                    "properties": {
                        "id": {"type": "integer"},
                        "state": {"type": "string", "enum": STATES},
                        "status_url": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "Event": {
                    "type": "object",
                    "required": ["from", "to", "epoch", "at", "reason"],
                    "properties": {
                        "from": {"type": ["string", "null"], "description": "null for acceptance"},
                        "to": {"type": ["string", "null"], "description": "null for a rejected write"},
                        "epoch": {"type": "integer"},
                        "at": {"type": "string", "format": "date-time"},
                        "reason": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "Job": {
                    "type": "object",
                    "required": ["id", "kind", "state", "attempts", "max_attempts", "created_at", "updated_at",
                                 "finished_at", "deadline", "status_url", "events"],
                    "properties": {
                        "id": {"type": "integer"},
                        "kind": {"type": "string"},
                        "state": {"type": "string", "enum": STATES},
                        "attempts": {"type": "integer", "minimum": 0},
                        "max_attempts": {"type": "integer", "minimum": 1},
                        "created_at": TIME,
                        "updated_at": TIME,
                        "finished_at": TIME,
                        "deadline": TIME,
                        "status_url": {"type": "string"},
                        "events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
                        "result": {"description": "Only when state is completed; its shape depends on the kind"},
                    },
                    "additionalProperties": False,
                },
                "JobSummary": {
                    "type": "object",
                    "required": ["id", "kind", "state", "attempts", "created_at", "updated_at", "finished_at", "status_url"],
                    "properties": {
                        "id": {"type": "integer"},
                        "kind": {"type": "string"},
                        "state": {"type": "string", "enum": STATES},
                        "attempts": {"type": "integer"},
                        "created_at": TIME,
                        "updated_at": TIME,
                        "finished_at": TIME,
                        "status_url": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "JobList": {
                    "type": "object",
                    "required": ["jobs", "page", "pages", "next", "previous"],
                    "properties": {
                        "jobs": {"type": "array", "items": {"$ref": "#/components/schemas/JobSummary"}},
                        "page": {"type": "integer"},
                        "pages": {"type": "integer"},
                        "next": {"type": ["string", "null"]},
                        "previous": {"type": ["string", "null"]},
                    },
                    "additionalProperties": False,
                },
                "Error": {
                    "type": "object",
                    "required": ["error", "detail"],
                    "properties": {
                        "error": {"type": "string", "description": "A stable code, e.g. operation_key_conflict"},
                        "detail": {"type": "string", "description": "A human explanation"},
                        "field": {"type": "string", "description": "The input at fault, for 400s"},
                    },
                    "additionalProperties": False,
                },
            },
        },
    }
