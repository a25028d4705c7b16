"""Why a document was refused at acceptance. Each is an ``AcceptanceError`` of the queue's, with
the code the API has always reported for it, so whoever maps the queue's refusals to answers
(``web.edge``) maps these the same way."""

from __future__ import annotations

from enum import StrEnum

from jobs.errors import AcceptanceError, PayloadTooLarge


class Reason(StrEnum):
    """Document refusals the submit form words apart, beyond the API's code."""

    UNRECOGNISED_TYPE = "unrecognised_type"  # bytes of none of the supported types


class UnsupportedDocument(AcceptanceError):
    code = "unsupported_media_type"
    status = 415


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


class DocumentStoreUnavailable(AcceptanceError):
    """The object store that keeps documents could not be reached: nothing was stored or
    committed, and the same request may be sent again shortly."""

    code = "store_unavailable"
    status = 503

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message, field="document")
        self.retry_after = retry_after
