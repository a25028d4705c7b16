"""The transitions are declared once (``jobs.queue.transitions``): the SQL rendered from each
declaration decides as Python decides from it, on this database, for every combination of the
rule's inputs; no statement writes a terminal state of its own; the README's table is the
declarations'."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection

from jobs import sql
from jobs.queue import transitions as tr
from jobs.queue.transitions import Sql
from jobs.sql import fragments as f
from tests.conftest import ROOT

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
BEFORE, AFTER = NOW - timedelta(seconds=30), NOW + timedelta(seconds=30)
COLUMNS = ("id", "state", "epoch", "attempts", "max_attempts", "started_at", "external_started_at",
           "cancel_requested_at", "deadline", "lease_expires_at", "available_at", "turn", "last_error", "failure_code")
TIMES = {"started_at", "external_started_at", "cancel_requested_at", "deadline", "lease_expires_at", "available_at"}


def rows() -> list[dict[str, Any]]:
    """Every combination of what the rules read: state, start, marker, cancel request, deadline,
    lease, attempts against their limit, and the ownership and turn the guards read."""
    found = []
    for n, (state, started, external, asked, deadline, lease, attempts, limit) in enumerate(
            itertools.product(("queued", "leased", "dead"), (None, BEFORE), (None, BEFORE), (None, BEFORE),
                              (BEFORE, NOW, AFTER), (None, BEFORE, NOW, AFTER), (0, 1, 3), (1, 3))):
        found.append({"id": n % 3 + 1, "state": state, "epoch": 4 + n // 3 % 2, "attempts": attempts,
                      "max_attempts": limit, "started_at": started, "external_started_at": external,
                      "cancel_requested_at": asked, "deadline": deadline, "lease_expires_at": lease,
                      "available_at": lease, "turn": None if n % 5 == 0 else 7, "last_error": "before",
                      "failure_code": "earlier"})
    return found


PARAMS = [{"now": NOW, "job_id": 2, "epoch": 4, "from_state": from_state, "retryable": retryable,
           "retry_at": retry_at, "until": until, "error": "boom", "code": "handler_error", "expires": AFTER,
           "expected_state": "dead", "expected_epoch": 5, "to_state": to_state, "new_deadline": AFTER}
          for from_state, retryable, retry_at, until, to_state in itertools.product(
              ("queued", "leased"), (True, False), (None, NOW, AFTER + timedelta(seconds=1)), (NOW, AFTER),
              ("completed", "dead"))]


def bindings(expressions: list[tr.Expr]) -> list[dict[str, Any]]:
    """Each distinct binding of the parameters the expressions name."""
    named = set(f.names(" ".join(e.sql(Sql()) for e in expressions)))
    return list({tuple(sorted((k, v) for k, v in p.items() if k in named)): {k: v for k, v in p.items() if k in named}
                 for p in PARAMS}.values())


@pytest.fixture
def table(db):
    """A temporary table of ``rows()`` with the job table's columns the rules read."""
    database = sql.current()
    time_type = "timestamptz" if connection.vendor == "postgresql" else "text"
    types = {"id": "integer", "state": "text", "epoch": "integer", "attempts": "integer", "max_attempts": "integer",
             "turn": "bigint", "last_error": "text", "failure_code": "text", **dict.fromkeys(TIMES, time_type)}
    every = rows()
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE rules ({', '.join(f'{c} {types[c]}' for c in COLUMNS)}, n integer)")
        cursor.executemany(f"INSERT INTO rules VALUES ({', '.join(['%s'] * (len(COLUMNS) + 1))})",
                           [[database.time(r[c]) if c in TIMES and r[c] else r[c] for c in COLUMNS] + [n]
                            for n, r in enumerate(every)])
    yield every
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE rules")


def stored(value: Any) -> Any:
    """A value as this database hands it back."""
    if isinstance(value, datetime):
        return sql.current().time(value) if connection.vendor == "sqlite" else value
    if isinstance(value, bool) and connection.vendor == "sqlite":
        return int(value)
    return value


def select(expressions: list[tr.Expr], params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The expressions over every row of ``rules``, in its order, as the database computes them."""
    database = sql.current()
    binding = {k: database.time(v) if isinstance(v, datetime) else v for k, v in params.items()}
    listed = ", ".join(e.sql(Sql(least="LEAST" if connection.vendor == "postgresql" else "MIN"))
                       for e in expressions)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {listed} FROM rules ORDER BY n", binding)
        return [tuple(row) for row in cursor.fetchall()]


def condition(expr: tr.Expr) -> tr.Expr:
    """A condition as a value: 1 when it holds, 0 when it is false or NULL (as a WHERE reads it)."""
    return tr.Case(((expr, tr.Lit(1)),), tr.Lit(0))


@pytest.mark.parametrize("transition", tr.TRANSITIONS, ids=[t.name for t in tr.TRANSITIONS])
def test_each_rendered_rule_decides_as_python_does(table, transition):
    """Every column the statement writes and its guard, on this database, against the
    declaration's Python value, for each row and each binding of the parameters."""
    columns = [c for c in transition.columns() if c not in {"result", "outcome", "outcome_text", "needs_action",
                                                              "reference", "leased_by"}]
    expressions = [condition(transition.guard), *(transition.column(c) for c in columns)]
    for params in bindings(expressions):
        answers = select(expressions, params)
        for row, answer in zip(table, answers, strict=True):
            expected = (int(transition.guard.value(row, params) is True),
                        *(stored(transition.column(c).value(row, params)) for c in columns))
            assert answer == expected, (transition.name, row, params)
            if "state" in columns:
                assert transition.column("state").value(row, params) == transition.way(row, params).to


def test_the_rules_read_sql_s_null_as_sql_does():
    """A comparison with NULL is neither true nor false; NOT of it is not true either."""
    unknown = tr.Cmp(tr.Col("a"), ">", tr.Param("b"))
    row, params = {"a": None}, {"b": 1}
    assert unknown.value(row, params) is None and tr.Not(unknown).value(row, params) is None
    assert tr.all_of(unknown, tr.Cmp(tr.Lit(0), "=", tr.Lit(1))).value(row, params) is False


def test_the_fail_rule_spends_attempts_as_recovery_does():
    """``attempts spent`` is one condition, read by a failure and by an expired lease alike."""
    assert tr.SPENT in [way.when for way in tr.FAIL.ways] and tr.SPENT in [way.when for way in tr.EXPIRE.ways]


def test_no_statement_writes_a_terminal_state_of_its_own():
    """Every move into a terminal state is rendered from its declaration: the statements'
    modules name no such state."""
    terminal = re.compile(r"'(completed|dead|unknown|cancelled)'")
    found = {path.name: terminal.findall(path.read_text()) for path in (ROOT / "jobs" / "sql").glob("*.py")}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_readme_table_is_the_declarations():
    assert tr.table() in (ROOT / "README.md").read_text()


ORM_GUARDED = [tr.COMPLETE, tr.GIVE_BACK, tr.CANCEL, tr.ASK_CANCEL, tr.REQUEUE, tr.RESOLVE]


def test_each_orm_guard_filters_as_python_decides(accept):
    """The guards the ORM's writes say (``Expr.q``), on a real job row in each combination of
    what they read, against the declaration's Python value."""
    from django.db.models import BooleanField, ExpressionWrapper, Q

    from jobs.models import Job

    job = accept()
    cases = [(transition, {"job_id": job_id, "epoch": 4, "now": NOW, "expected_state": expected_state,
                           "expected_epoch": 4})
             for transition, job_id, expected_state in itertools.product(ORM_GUARDED, (job.pk, job.pk + 1),
                                                                         ("dead", "unknown"))]
    # Each case's filter (the guard and the job's id, as a write says them) in one SELECT per row:
    # the same WHERE clause as ``filter(...)`` compiles, read as a column (NULL read as not found).
    matched = {f"case_{n}": ExpressionWrapper(transition.guard.q(params) & Q(pk=params["job_id"]),
                                              output_field=BooleanField())
               for n, (transition, params) in enumerate(cases)}
    for state, epoch, lease, deadline, external, asked in itertools.product(
            ("queued", "leased", "dead", "unknown"), (4, 5), (None, BEFORE, NOW, AFTER), (BEFORE, NOW, AFTER),
            (None, BEFORE), (None, BEFORE)):
        row = {"id": job.pk, "state": state, "epoch": epoch, "lease_expires_at": lease, "deadline": deadline,
               "external_started_at": external, "cancel_requested_at": asked}
        Job.objects.filter(pk=job.pk).update(**{k: v for k, v in row.items() if k != "id"})
        found = Job.objects.filter(pk=job.pk).annotate(**matched).values(*matched).get()
        for n, (transition, params) in enumerate(cases):
            assert bool(found[f"case_{n}"]) == (params["job_id"] == job.pk
                                                and transition.guard.value(row, params) is True), (
                transition.name, row, params)
