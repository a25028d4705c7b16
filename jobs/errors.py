"""Why a job was refused at acceptance. Each carries a stable code the API reports, and
where one code covers refusals a person fixes differently, a finer ``reason`` the pages
choose their words by (``web.refusals.in_words``); the message is for API clients and staff,
never matched."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Refusals the submit form words apart, beyond the API's code (which stays as it is)."""

    NO_INPUT = "no_input"  # nothing to work on: neither an attached input nor one in the payload
    INPUT_TWICE = "input_twice"  # an attached input and one in the payload, in one job
    TOO_LONG = "too_long"  # a value longer than its schema allows (maxLength)
    NOT_STORABLE = "not_storable"  # a NUL character or a lone surrogate, which no database keeps


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


class OperationKeyConflict(AcceptanceError):
    """The key was already used for a different request by the same scope and user."""

    code = "operation_key_conflict"
    status = 409


class ScopeQueueFull(AcceptanceError):
    """The scope has its limit of jobs waiting: try again once some have started."""

    code = "scope_queue_full"
    status = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
