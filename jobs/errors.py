"""Why a job was refused at acceptance. Each carries a stable code the API reports, and
where one code covers refusals a person fixes differently, a finer ``reason`` the pages
choose their words by (``web.refusals.in_words``); the message is for API clients and staff,
never matched."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Refusals the submit form words apart, beyond the API's code (which stays as it is)."""

    NO_INPUT = "no_input"  # neither a document nor text to work on
    INPUT_TWICE = "input_twice"  # a document and text in one job
    TOO_LONG = "too_long"  # a value longer than its schema allows (maxLength)
    NOT_STORABLE = "not_storable"  # a NUL character or a lone surrogate, which no database keeps
    UNRECOGNISED_TYPE = "unrecognised_type"  # bytes of none of the supported types


class AcceptanceError(Exception):
    """Bad input: nothing was written."""

    code = "invalid"
    status = 400

    def __init__(self, message: str, *, field: str | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.reason = reason


class UnknownKind(AcceptanceError):
    code = "unknown_kind"


class InvalidPayload(AcceptanceError):
    code = "invalid_payload"


class InvalidOperationKey(AcceptanceError):
    code = "invalid_operation_key"


class PayloadTooLarge(AcceptanceError):
    code = "too_large"
    status = 413


class UnsupportedDocument(AcceptanceError):
    code = "unsupported_media_type"
    status = 415


class OperationKeyConflict(AcceptanceError):
    """The key was already used for a different request by the same scope and user."""

    code = "operation_key_conflict"
    status = 409


class DocumentUnpacksTooLarge(PayloadTooLarge):
    """A packed document (a DOCX is a zip) declares more unpacked bytes than its kind reads.

    Decided from the sizes the document declares, before anything is unpacked.
    """

    code = "unpacks_too_large"
    status = 413


class DocumentTooComplex(PayloadTooLarge):
    """A document with more structure (zip parts, PDF objects, XML elements) than its kind reads."""

    code = "too_complex"
    status = 413


class DocumentNotChecked(AcceptanceError):
    """A document of a batch whose check did not fit in what was left of the batch's time.

    Nothing is wrong with it as far as anyone knows: sent again on its own, it gets the
    whole time a check may take.
    """

    code = "not_checked_in_time"
    status = 503


class DamagedDocument(UnsupportedDocument):
    """A document of a supported type that cannot be read: its bytes are damaged."""

    code = "damaged_document"
    status = 400


class ScopeQueueFull(AcceptanceError):
    """The scope has its limit of jobs waiting: try again once some have started."""

    code = "scope_queue_full"
    status = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DocumentStoreUnavailable(AcceptanceError):
    """The object store that keeps documents could not be reached: nothing was stored or
    committed, and the same request may be sent again shortly."""

    code = "store_unavailable"
    status = 503

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message, field="document")
        self.retry_after = retry_after
