"""Refusals in people's words: an API refusal (its code, reason, message and field) as the submit
form says it, next to the field it is about. Chosen by code, reason and field; the API's message
is shown, as a sentence, only where no words of our own fit."""

from __future__ import annotations

import math
from http import HTTPStatus

from django.http import HttpRequest

from documents import rules
from documents.errors import Reason as DocumentReason
from jobs import kinds
from jobs.errors import Reason

from . import wording
from .edge import MB, FormRefused, HttpError, Refusal, api_code, max_request_bytes


def form_field(field_name: str | None) -> str:
    """The submit form's field an API field name is about."""
    name = field_name or ""
    if name in ("document", "kind"):
        return name
    if name in ("text", "payload.text"):
        return "text"
    if name.startswith("payload"):
        return "payload"
    return ""


def refusal(status: int, code: str, message: str, field_name: str | None, *, reason: str = "", name: str = "",
            kind: kinds.Kind | None = None, size: int | None = None) -> Refusal:
    """An API refusal (its code, reason, message and field) as the submit form says it."""
    where = form_field(field_name)
    return Refusal(where, in_words(code, message, field_name or "", reason=reason, kind=kind, size=size), name,
                   status)


def refusals(request: HttpRequest, error: HttpError) -> list[Refusal]:
    """What the form shows for ``error``: its own refusals, or the one error in words."""
    if isinstance(error, FormRefused):
        return error.refusals
    size = None
    if error.status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE and error.code == "too_large":
        length = request.META.get("CONTENT_LENGTH") or ""
        size = int(length) if length.isdigit() else None
        if size and size > max_request_bytes(batch=True):
            return [Refusal("document", f"These files add up to {size_words(size)}; at most "
                                        f"{size_words(max_request_bytes(batch=True))} can be sent at once. "
                                        "Send them in smaller groups.", status=413)]
    return [refusal(error.status, error.code, error.detail, error.field, reason=error.reason)]


# Refusals said the same whatever the field, by code.
CODE_WORDS = {
    "unknown_kind": "Choose one of the offered kinds of work.",
    "invalid_operation_key": "This form has expired. Reload the page, then send it again.",
    "operation_key_conflict": "This form was already used for other documents. It has been renewed: send it again.",
    "malformed_body": "The upload was interrupted or could not be read. Choose the files and send them again.",
    "no_tenant": "Your account belongs to no team, so it cannot send documents. Ask your staff to add you to one.",
    "not_checked_in_time": "Not checked in time: send it again on its own.",
    "tenant_queue_full": ("Your team already has as many documents waiting as it may. Send this one again once some "
                          "of them have started."),
}
UNRECOGNISED = ("This file is not a PDF, a Word document (.docx), a text file or an e-invoice (XML), nor a scan or "
                "photo (PNG, JPEG, TIFF).")


def in_words(code: str, message: str, field_name: str, *, reason: str = "", kind: kinds.Kind | None = None,
             size: int | None = None) -> str:
    """The API's refusal (stable code, finer reason, technical message) as a sentence for the
    person at the form. Chosen by code, reason and field; the message is never matched: it is
    shown, as a sentence, only where no words of our own fit."""
    code = api_code(code)  # a refusal of the queue's, as the API says it
    said = None
    if code == "too_large":
        said = _too_large(field_name, kind, size)
    elif code == "unsupported_media_type" and reason == DocumentReason.UNRECOGNISED_TYPE:
        said = UNRECOGNISED
    if said is None and (field_name.startswith("payload.text") or field_name == "text"):
        said = _text_refused(reason, kind)
    if said is None and code == "invalid_payload" and field_name.startswith("payload"):
        said = f"The advanced options are not valid: {message}."
    return said or CODE_WORDS.get(code) or wording.sentence(message) or "This could not be accepted."


def _too_large(field_name: str, kind: kinds.Kind | None, size: int | None) -> str | None:
    limit = rules.max_bytes(kind.name) if kind else 0
    if field_name == "document" and size and limit and size > limit:
        return f"This file is {size_words(size)}; the limit is {size_words(limit)} per file."
    if field_name.startswith("payload"):
        return "The pasted text is too long" + (
            f": at most {size_words(kind.max_payload_bytes)} can be reviewed at once." if kind else ".")
    if not field_name:
        return "The pasted text is too long to send. Choose it as a file instead."
    return None


def _text_refused(reason: str, kind: kinds.Kind | None) -> str | None:
    """The pasted text's refusals, by their finer reason."""
    if reason == Reason.TOO_LONG:
        longest = _schema_limit(kind, "maxLength")
        return "The pasted text is too long" + (f": at most {longest:,} characters." if longest else ".")
    said: dict[str, str] = {
        Reason.NOT_STORABLE: "The pasted text contains characters that cannot be stored. Paste it again as plain text.",
        Reason.NO_INPUT: "Choose a file, or paste the text of a document.",
        Reason.INPUT_TWICE: "Send a file or pasted text in the advanced options, not both.",
    }
    return said.get(reason)  # a StrEnum member is its string


def _schema_limit(kind: kinds.Kind | None, keyword: str) -> int | None:
    if kind is None:
        return None
    text = kind.payload_schema.get("properties", {}).get("text", {})
    value = text.get(keyword) if isinstance(text, dict) else None
    return value if isinstance(value, int) else None


WHOLE_FROM = 10  # from 10 units on, a tenth is noise: 12 MB, not 12.3 MB


def size_words(size: int) -> str:
    """30 MB, 5.1 MB, 812 KB: rounded up, so a file just over a limit never reads as at it."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if size >= scale:
            value = math.ceil(size / scale * 10) / 10
            return f"{value:.0f} {unit}" if value >= WHOLE_FROM or value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
