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


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lines(caplog) -> list[dict]:
    from jobs.logs import fields_of

    return [fields_of(r) for r in caplog.records]


def test_a_repeated_failure_is_logged_once_then_once_per_interval_with_its_count(caplog):
    from jobs.logs import Repeats

    ticks = Ticks()
    repeats = Repeats(logging.getLogger("jobs.test"), every=10, monotonic=ticks)
    with caplog.at_level(logging.INFO, logger="jobs.test"):
        for n in range(217):  # a full disk for 15 s, an error every 70 ms
            ticks.now = 100 + n * 0.07
            repeats.event(logging.WARNING, "database_error", error="OperationalError", attempt=n)
    assert lines(caplog) == [
        {"event": "database_error", "error": "OperationalError", "attempt": 0},
        {"event": "database_error", "error": "OperationalError", "attempt": 143, "repeats": 143, "in_last_s": 10.0},
    ]
    assert caplog.records[0].levelno == logging.WARNING


def test_the_count_held_back_is_written_when_the_failures_end_and_the_next_one_is_logged_at_once(caplog):
    from jobs.logs import Repeats

    ticks = Ticks()
    repeats = Repeats(logging.getLogger("jobs.test"), every=10, monotonic=ticks)
    with caplog.at_level(logging.INFO, logger="jobs.test"):
        for n in range(5):
            ticks.now += 0.5
            repeats.event(logging.WARNING, "database_error", error="OperationalError", detail="refused", attempt=n)
        repeats.event(logging.WARNING, "database_error", error="OperationalError", detail="starting up")  # another
        repeats.event(logging.WARNING, "clock_reading_failed")
        repeats.settle()  # the database answers again
        repeats.settle()  # nothing more to say
        ticks.now += 1
        repeats.event(logging.WARNING, "database_error", error="OperationalError", detail="refused",
                      attempt=5)  # a new outage: logged at once
    assert lines(caplog) == [
        {"event": "database_error", "error": "OperationalError", "detail": "refused", "attempt": 0},
        {"event": "database_error", "error": "OperationalError", "detail": "starting up"},
        {"event": "clock_reading_failed"},
        {"event": "database_error", "error": "OperationalError", "detail": "refused", "repeats": 4, "in_last_s": 2.0,
         "settled": True},
        {"event": "database_error", "error": "OperationalError", "detail": "refused", "attempt": 5},
    ]
