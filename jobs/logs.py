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
import threading
import time
from collections.abc import Callable
from typing import Any


def event(logger: logging.Logger, level: int, name: str, **fields: Any) -> None:
    """Log ``name`` with its fields, in whichever format the handler's formatter writes."""
    if logger.isEnabledFor(level):
        logger.log(level, name, extra={"fields": fields})


class Repeats:
    """Log a repeated failure once, then at most one line per ``every`` seconds with its count.

    During an outage a worker meets the same error at every poll (hundreds of lines a minute
    per process). A failure is an event name with its ``error`` and ``detail`` fields (a
    crash's "terminating connection" and the "connection refused" after it are two failures,
    each logged). Its first occurrence is logged as it is; later ones within ``every`` seconds
    are counted, not logged; the first one after the interval is logged with ``repeats=<n>
    in_last_s=<seconds>`` (itself and those held back since the last line) and starts the next
    interval. ``settle()`` (the failing thing works again) writes the counts still held back
    (``repeats=<n> in_last_s=<s> settled=True``), so an outage's last errors are not lost, and
    lets the next failure be logged at once.
    """

    def __init__(self, logger: logging.Logger, *, every: float = 10.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.logger, self.every, self._monotonic = logger, every, monotonic
        self._lock = threading.Lock()
        # (name, error, detail) -> (time of its last line, occurrences held back since, level)
        self._since: dict[tuple[str, str, str], tuple[float, int, int]] = {}

    def event(self, level: int, name: str, **fields: Any) -> None:
        """``event(logger, level, name, **fields)``, unless the same failure was logged less
        than ``every`` seconds ago: then it is only counted."""
        key = (name, str(fields.get("error", "")), str(fields.get("detail", "")))
        now = self._monotonic()
        with self._lock:
            last = self._since.get(key)
            if last is not None and now - last[0] < self.every:
                self._since[key] = (last[0], last[1] + 1, level)
                return
            self._since[key] = (now, 0, level)
        if last is not None and last[1]:
            fields.update(repeats=last[1] + 1, in_last_s=round(now - last[0], 1))
        event(self.logger, level, name, **fields)

    def settle(self) -> None:
        """The failures are over: write the counts held back, and log the next one at once."""
        if not self._since:
            return
        now = self._monotonic()
        with self._lock:
            ended, self._since = self._since, {}
        for (name, error, detail), (start, held, level) in ended.items():
            if held:
                event(self.logger, level, name, **({"error": error} if error else {}),
                      **({"detail": detail} if detail else {}), repeats=held, in_last_s=round(now - start, 1),
                      settled=True)


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
