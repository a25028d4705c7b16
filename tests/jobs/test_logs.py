"""One log format: key=value lines by default, JSON lines on request, the same fields in both."""

from __future__ import annotations

import json
import logging

from jobs.logs import JsonFormatter, KeyValueFormatter, event


def record(caplog, **fields) -> logging.LogRecord:
    with caplog.at_level(logging.INFO, logger="jobs.test"):
        event(logging.getLogger("jobs.test"), logging.INFO, "claimed", **fields)
    return caplog.records[-1]


def test_key_value_lines_quote_values_with_spaces_quotes_or_equals_signs(caplog):
    line = KeyValueFormatter().format(record(caplog, job=16, reason='epoch 1 "old"', worker="vm:1", note="a=b",
                                             until=None, empty=""))
    assert line.endswith('INFO jobs.test event=claimed job=16 reason="epoch 1 \'old\'" worker=vm:1 note="a=b" '
                         'until=- empty=""')


def test_json_lines_carry_the_same_fields_with_their_types(caplog):
    body = json.loads(JsonFormatter().format(record(caplog, job=16, retryable=False, duration_ms=12)))
    assert {k: body[k] for k in ("level", "logger", "event", "job", "retryable", "duration_ms")} == {
        "level": "INFO", "logger": "jobs.test", "event": "claimed", "job": 16, "retryable": False, "duration_ms": 12}


def test_an_event_below_the_level_builds_no_record(caplog):
    with caplog.at_level(logging.WARNING, logger="jobs.test"):
        event(logging.getLogger("jobs.test"), logging.INFO, "claimed", job=1)
    assert caplog.records == []
