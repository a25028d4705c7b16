"""One log format for the worker, the supervisor and the handler sandbox.

Log calls name an event and pass its fields in ``extra={"fields": {...}}``; a formatter
renders them. ``KeyValueFormatter`` writes ``event=claimed job=16 kind=...`` lines (values
with spaces or quotes are quoted); ``JsonFormatter`` writes one JSON object per line, for
log shippers. Fields are rendered only when a handler emits the record, so an INFO line
costs a dict on the hot path when the level is WARNING. Never put payload or document
text in a field.
"""

from __future__ import annotations

import json
import logging
from typing import Any


def event(logger: logging.Logger, level: int, name: str, **fields: Any) -> None:
    """Log ``name`` with its fields, in whichever format the handler's formatter writes."""
    if logger.isEnabledFor(level):
        logger.log(level, name, extra={"fields": fields})


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The event name and fields of a record (a record logged without fields: just the event)."""
    return {"event": record.getMessage(), **getattr(record, "fields", {})}


def key_values(fields: dict[str, Any]) -> str:
    parts = []
    for key, value in fields.items():
        text = "-" if value is None else str(value)
        if not text or any(c in text for c in ' "='):
            text = '"' + text.replace('"', "'") + '"'
        parts.append(f"{key}={text}")
    return " ".join(parts)


class KeyValueFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger> event=... key=value ...``"""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = key_values(fields_of(record))
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, event and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        body = {"time": self.formatTime(record), "level": record.levelname, "logger": record.name,
                **fields_of(record)}
        if record.exc_info:
            body["exception"] = self.formatException(record.exc_info)
        return json.dumps(body, default=str)
