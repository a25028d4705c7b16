"""What a payload or a result must be for either database to store it.

JSON parsing lets through what neither store keeps: NUL characters (PostgreSQL's jsonb refuses
them), lone UTF-16 surrogates (not UTF-8) and nesting past ``MAX_DEPTH``. Each would fail inside
the writing transaction; checked first, it is a refusal that names the field.
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidPayload, Reason

# How deep a payload may nest. Deeper JSON is refused rather than risking a RecursionError
# while it is parsed, validated or encoded.
MAX_DEPTH = 32


def check_storable(value: Any, where: str = "payload", depth: int = 0) -> None:
    """Raise ``InvalidPayload`` (naming ``where``) for what neither database stores."""
    if depth > MAX_DEPTH:
        raise InvalidPayload(f"{where} nests deeper than {MAX_DEPTH} levels", field=where)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidPayload(f"{where} contains an unpaired surrogate", field=where,
                                 reason=Reason.NOT_STORABLE) from None
        if "\x00" in value:
            raise InvalidPayload(f"{where} contains a NUL character", field=where, reason=Reason.NOT_STORABLE)
    elif isinstance(value, dict):
        for name, item in value.items():
            check_storable(name, where, depth + 1)
            check_storable(item, f"{where}.{name}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_storable(item, f"{where}.{index}", depth + 1)
