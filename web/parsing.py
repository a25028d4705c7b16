"""What a request sent, read: a job submission from JSON or a form, each value checked by its
schema (``web.schemas``) and by what the queue can store, and refused as an ``HttpError`` that
names the field at fault before anything is written. The edge (``web.edge``) decides who asks
and how to answer; this module, what they asked for."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParserError
from pydantic import BaseModel, ValidationError

from documents.store import Upload
from jobs import payloads
from jobs.errors import AcceptanceError

from . import photos, schemas
from .edge import HttpError, refuse_oversized

# How deep a payload may nest (the queue's bound): deeper JSON is refused as a 400.
MAX_PAYLOAD_DEPTH = payloads.MAX_DEPTH

# A claimed media type worth storing (the column holds 100 characters); anything else is
# stored as application/octet-stream: the client's claim is not evidence anyway.
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")


MAX_MEDIA_TYPE = 100


@dataclass(frozen=True)
class Submission:
    kind: str
    payload: Any
    operation_key: str
    document: Upload | None


def parse_submission(request: HttpRequest) -> Submission:
    """JSON (``schemas.JobRequest``) or a form (``schemas.JobForm``, with an optional ``document``).

    Owner or tenant fields in the body are ignored: identity decides them. Raises
    ``HttpError`` (400, 413, 415) before anything is written.
    """
    refuse_oversized(request)
    try:
        if request.content_type == "application/json":
            return _parse_json(request)
        if request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
            return _parse_form(request)
    except RequestDataTooBig:
        raise HttpError(413, "too_large", "the request body is too large") from None
    except RecursionError:
        raise HttpError(400, "invalid_payload", f"the JSON nests deeper than {MAX_PAYLOAD_DEPTH} levels",
                        field="payload") from None
    except (MultiPartParserError, TooManyFieldsSent) as exc:
        raise HttpError(400, "malformed_body", f"the form could not be read: {exc}") from None
    except TooManyFilesSent:
        raise HttpError(400, "too_many_files", f"at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request; "
                        "send one document per request", field="document") from None
    raise HttpError(415, "unsupported_media_type",
                    "send application/json or multipart/form-data", field="Content-Type")


Model = TypeVar("Model", bound=BaseModel)


def validated(model: type[Model], data: Any) -> Model:
    """``data`` read through ``model``, or a 400 that names the first field at fault."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0])  # the models are flat: their fields are the inputs
        described = model.model_fields[field].description
        detail = f"{field}: {error['msg']}" + (f" ({described})" if described else "")
        code = "invalid_payload" if field == "payload" else "invalid"
        raise HttpError(400, code, detail, field=field) from None


def loads_json(text: str | bytes) -> Any:
    """Strict JSON: no NaN or Infinity, spelt out or overflowed to (1e400); neither is JSON."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    def finite(literal: str) -> float:
        number = float(literal)
        if not math.isfinite(number):
            raise ValueError(f"{literal} is out of range")
        return number

    return json.loads(text, parse_constant=constant, parse_float=finite)


def check_storable(value: Any, where: str = "payload") -> None:
    """The queue's check of what either database stores (``jobs.payloads``), refused as a 400
    that names the field instead of failing inside the accepting transaction as a 500."""
    try:
        payloads.check_storable(value, where)
    except AcceptanceError as exc:
        raise HttpError.from_acceptance(exc) from None


def _parse_json(request: HttpRequest) -> Submission:
    try:
        body = loads_json(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise HttpError(400, "malformed_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise HttpError(400, "invalid", 'the body must be a JSON object {"kind": ..., "payload": {...}}')
    check_storable(body.get("payload"))
    parsed = validated(schemas.JobRequest, body)
    return Submission(kind=parsed.kind, payload=parsed.payload,
                      operation_key=request.headers.get("Idempotency-Key", ""), document=None)


def _parse_form(request: HttpRequest) -> Submission:
    fields = {name: request.POST[name] for name in schemas.JobForm.model_fields if name in request.POST}
    form = validated(schemas.JobForm, {**fields, "document": request.FILES.get("document")})
    payload: Any = {}
    if form.payload.strip():
        try:
            payload = loads_json(form.payload)
        except ValueError:
            raise HttpError(400, "invalid_payload", "payload is not valid JSON", field="payload") from None
    if form.text.strip():
        if not isinstance(payload, dict):
            raise HttpError(400, "invalid_payload", "payload must be a JSON object", field="payload")
        payload = {**payload, "text": form.text}
    check_storable(payload)
    return Submission(
        kind=form.kind,
        payload=payload,
        operation_key=request.headers.get("Idempotency-Key") or form.idempotency_key,
        document=_form_document(request),
    )


def _form_document(request: HttpRequest) -> Upload | None:
    """The request's one document: its ``document`` file, or its ``photo`` files as the pages of
    one document (a PDF of them, as the submit form's camera makes; one photo goes as it is).
    Any other file, a second document, or a document and photos together: a 400 naming the field."""
    other = sorted(set(request.FILES) - {"document", "photo"})
    if other:
        raise HttpError(400, "unknown_file", f"a file goes in document, or photos in photo; not in {other[0][:64]}",
                        field=other[0][:64])
    documents, taken = request.FILES.getlist("document"), request.FILES.getlist("photo")
    if len(documents) > 1:
        raise HttpError(400, "too_many_files", "one document per request (several photos of one document go in "
                                               "photo)", field="document")
    if documents and taken:
        raise HttpError(400, "invalid", "send a document or the photos of one, not both", field="photo")
    if documents:
        return Upload(content=documents[0].read(), name=documents[0].name or "document",
                      content_type=media_type(documents[0].content_type))
    if not taken:
        return None
    first = os.path.basename(taken[0].name or "photo.jpg")
    if len(taken) == 1:
        return Upload(content=taken[0].read(), name=first, content_type=media_type(taken[0].content_type))
    try:
        content = photos.photos_pdf([(os.path.basename(f.name or "photo"), f.read()) for f in taken])
    except photos.PhotoRefused as exc:
        raise HttpError(400, "invalid_photo", str(exc), field="photo") from None
    return Upload(content=content, name=photos.document_name(first, len(taken)), content_type="application/pdf")


def media_type(claimed: str | None) -> str:
    claimed = (claimed or "").strip()
    if len(claimed) <= MAX_MEDIA_TYPE and _MEDIA_TYPE.fullmatch(claimed):
        return claimed
    return "application/octet-stream"
