"""Each move of a job's state, declared once: the states it leaves, where it goes (or the rule
that chooses among its ways), the guard its write must say, and the columns it sets.

The hand-written statements (``jobs.sql``) render their guards, SET lists and CASE rules from
these declarations; the ORM's writes filter by the same guards (``Expr.q``) and set what the
declaration says (``Transition.changes``); Python decides by the same rules (``Transition.way``):
a failed attempt's next state, whether a failure ends a task. Each rule is a value in SQL and
in Python alike, so a test runs the rendered SQL on both databases over every combination of
its inputs and compares it with Python's answer, and holds the README's table (``table``) to
these declarations. Rules follow SQL's three-valued logic: a comparison with NULL is NULL, and
a way whose condition is NULL is passed over, as a CASE passes over its WHEN.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Case as DjangoCase
from django.db.models import F, Q, When

from .terms import CANCELLED, COMPLETED, DEAD, LEASED, QUEUED, RETURNED_UNSTARTED, UNKNOWN, FailureCode

Row = Mapping[str, Any]  # a job's columns, or a statement's parameters, by name


@dataclass(frozen=True)
class Sql:
    """How one statement spells the declaration: its columns' table (or alias), what stands for
    a parameter (a batch's ``b.result`` for ``result``), and its database's two-argument minimum."""

    table: str = ""
    params: Mapping[str, str] = field(default_factory=dict)
    least: str = "LEAST"

    def column(self, name: str) -> str:
        return f"{self.table}.{name}" if self.table else name

    def param(self, name: str) -> str:
        return self.params.get(name, f"%({name})s")


class Expr:
    """A condition or a value: SQL text (``sql``), Python's value of a row's columns and the
    statement's parameters (``value``), a filter of the ORM (``q``) or a value it writes (``orm``)."""

    def sql(self, to: Sql) -> str:
        raise NotImplementedError

    def value(self, row: Row, params: Row) -> Any:
        raise NotImplementedError

    def q(self, values: Row) -> Q:
        raise NotImplementedError(f"{self!r} is no ORM filter")

    def orm(self, values: Row) -> Any:
        raise NotImplementedError(f"{self!r} is no ORM value")

    def nested(self, to: Sql) -> str:
        """The text inside a larger condition."""
        return self.sql(to)


@dataclass(frozen=True)
class Col(Expr):
    name: str

    def sql(self, to: Sql) -> str:
        return to.column(self.name)

    def value(self, row: Row, params: Row) -> Any:
        return row[self.name]

    def orm(self, values: Row) -> Any:
        return F(self.name)


@dataclass(frozen=True)
class Param(Expr):
    name: str

    def sql(self, to: Sql) -> str:
        return to.param(self.name)

    def value(self, row: Row, params: Row) -> Any:
        return params[self.name]

    def orm(self, values: Row) -> Any:
        return values[self.name]


@dataclass(frozen=True)
class Lit(Expr):
    literal: str | int | None

    def sql(self, to: Sql) -> str:
        if self.literal is None:
            return "NULL"
        if isinstance(self.literal, int):
            return str(self.literal)
        return "'" + str(self.literal).replace("'", "''") + "'"

    def value(self, row: Row, params: Row) -> Any:
        return self.literal

    def orm(self, values: Row) -> Any:
        return self.literal


@dataclass(frozen=True)
class IsSet(Expr):
    of: Col

    def sql(self, to: Sql) -> str:
        return f"{self.of.sql(to)} IS NOT NULL"

    def value(self, row: Row, params: Row) -> bool:
        return self.of.value(row, params) is not None

    def q(self, values: Row) -> Q:
        return Q(**{f"{self.of.name}__isnull": False})


_COMPARE: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
    "=": (operator.eq, "exact"), ">": (operator.gt, "gt"), ">=": (operator.ge, "gte"),
    "<": (operator.lt, "lt"), "<=": (operator.le, "lte")}


@dataclass(frozen=True)
class Cmp(Expr):
    left: Expr
    op: str
    right: Expr

    def sql(self, to: Sql) -> str:
        return f"{self.left.sql(to)} {self.op} {self.right.sql(to)}"

    def value(self, row: Row, params: Row) -> bool | None:
        left, right = self.left.value(row, params), self.right.value(row, params)
        return None if left is None or right is None else _COMPARE[self.op][0](left, right)

    def q(self, values: Row) -> Q:
        if not isinstance(self.left, Col):
            raise NotImplementedError(f"{self!r}: the ORM filters a column")
        return Q(**{f"{self.left.name}__{_COMPARE[self.op][1]}": self.right.orm(values)})


@dataclass(frozen=True)
class Not(Expr):
    of: Expr

    def sql(self, to: Sql) -> str:
        return f"NOT {self.of.nested(to)}"

    def value(self, row: Row, params: Row) -> bool | None:
        answer = self.of.value(row, params)
        return None if answer is None else not answer

    def q(self, values: Row) -> Q:
        return ~self.of.q(values)


@dataclass(frozen=True)
class AllOf(Expr):
    parts: tuple[Expr, ...]

    def sql(self, to: Sql) -> str:
        return " AND ".join(part.sql(to) if isinstance(bare(part), AllOf) else part.nested(to) for part in self.parts)

    def nested(self, to: Sql) -> str:
        return f"({self.sql(to)})"

    def value(self, row: Row, params: Row) -> bool | None:
        answers = [part.value(row, params) for part in self.parts]
        return False if False in answers else None if None in answers else True

    def q(self, values: Row) -> Q:
        return Q(*(part.q(values) for part in self.parts))


@dataclass(frozen=True)
class AnyOf(Expr):
    parts: tuple[Expr, ...]

    def sql(self, to: Sql) -> str:
        return " OR ".join(part.nested(to) for part in self.parts)

    def nested(self, to: Sql) -> str:
        return f"({self.sql(to)})"

    def value(self, row: Row, params: Row) -> bool | None:
        answers = [part.value(row, params) for part in self.parts]
        return True if True in answers else None if None in answers else False

    def q(self, values: Row) -> Q:
        found = Q()
        for part in self.parts:
            found |= part.q(values)
        return found


@dataclass(frozen=True)
class Plus(Expr):
    of: Expr
    add: int

    def sql(self, to: Sql) -> str:
        return f"{self.of.sql(to)} {'-' if self.add < 0 else '+'} {abs(self.add)}"

    def value(self, row: Row, params: Row) -> Any:
        of = self.of.value(row, params)
        return None if of is None else of + self.add

    def orm(self, values: Row) -> Any:
        return self.of.orm(values) + self.add


@dataclass(frozen=True)
class Least(Expr):
    """The earlier of two values, neither NULL (SQLite's ``MIN``, PostgreSQL's ``LEAST``)."""

    first: Expr
    second: Expr

    def sql(self, to: Sql) -> str:
        return f"{to.least}({self.first.sql(to)}, {self.second.sql(to)})"

    def value(self, row: Row, params: Row) -> Any:
        return min(self.first.value(row, params), self.second.value(row, params))


@dataclass(frozen=True)
class Case(Expr):
    """The value of the first condition that holds (not false, not NULL), else ``otherwise``."""

    whens: tuple[tuple[Expr, Expr], ...]
    otherwise: Expr

    def sql(self, to: Sql) -> str:
        whens = " ".join(f"WHEN {when.sql(to)} THEN {then.sql(to)}" for when, then in self.whens)
        return f"CASE {whens} ELSE {self.otherwise.sql(to)} END"

    def value(self, row: Row, params: Row) -> Any:
        return next((then.value(row, params) for when, then in self.whens if when.value(row, params) is True),
                    self.otherwise.value(row, params))

    def orm(self, values: Row) -> Any:
        return DjangoCase(*(When(when.q(values), then=then.orm(values)) for when, then in self.whens),
                          default=self.otherwise.orm(values))


@dataclass(frozen=True)
class Named(Expr):
    """A condition with the words the transition table says it in."""

    words: str
    of: Expr

    def sql(self, to: Sql) -> str:
        return self.of.sql(to)

    def nested(self, to: Sql) -> str:
        return self.of.nested(to)

    def value(self, row: Row, params: Row) -> Any:
        return self.of.value(row, params)

    def q(self, values: Row) -> Q:
        return self.of.q(values)


def bare(expr: Expr) -> Expr:
    """The condition without its name."""
    return bare(expr.of) if isinstance(expr, Named) else expr


def all_of(*parts: Expr) -> AllOf:
    return AllOf(parts)


def any_of(*parts: Expr) -> AnyOf:
    return AnyOf(parts)


def state_is(state: str) -> Cmp:
    return Cmp(Col("state"), "=", Lit(state))


# The conditions the rules are made of, each written here once.
NOW, NULL = Param("now"), Lit(None)
ATTEMPTS = Col("attempts")
EXTERNAL_STARTED = Named("external start", IsSet(Col("external_started_at")))
# Whether the handler was started (``start``; the external-start marker is written only by a
# running handler): only a started claim spends its attempt.
STARTED = any_of(IsSet(Col("started_at")), EXTERNAL_STARTED)
SPENT = Named("attempts spent", Cmp(ATTEMPTS, ">=", Col("max_attempts")))
CANCEL_ASKED = Named("cancel asked", IsSet(Col("cancel_requested_at")))
PAST_DEADLINE = Named("deadline passed", Cmp(Col("deadline"), "<=", NOW))
# The fence of a running job's writes: its own id and epoch (each statement says them its own
# way: a parameter, a batch's column, an array), still leased, lease and deadline unexpired.
OWNS = Named("its epoch", all_of(Cmp(Col("id"), "=", Param("job_id")), Cmp(Col("epoch"), "=", Param("epoch"))))
HELD = Named("leased, lease and deadline unexpired", all_of(
    state_is(LEASED), Cmp(Col("lease_expires_at"), ">", NOW), Cmp(Col("deadline"), ">", NOW)))
FENCE = all_of(OWNS, HELD)
LEASE_RAN_OUT = Named("lease ran out", all_of(state_is(LEASED), Cmp(Col("lease_expires_at"), "<=", NOW)))
# Claimable: its turn stamped, due, deadline ahead (the claim also passes over scopes and
# kinds at their running limits, ``jobs.sql``).
CLAIMABLE = Named("its turn, due, deadline ahead", all_of(
    state_is(QUEUED), IsSet(Col("turn")), IsSet(Col("available_at")), Cmp(Col("available_at"), "<=", NOW),
    Cmp(Col("deadline"), ">", NOW)))
AS_SEEN = Named("state and epoch as seen", all_of(Cmp(Col("state"), "=", Param("expected_state")),
                                                  Cmp(Col("epoch"), "=", Param("expected_epoch"))))


def given_back(*unless: Expr) -> Case:
    """The attempt count with the claim's attempt given back (never below 0), unless one of ``unless`` holds."""
    return Case((*((kept, ATTEMPTS) for kept in unless), (Cmp(ATTEMPTS, "=", Lit(0)), ATTEMPTS)), Plus(ATTEMPTS, -1))


@dataclass(frozen=True)
class Way:
    """One way a transition goes: the first whose ``when`` holds (None: otherwise), to ``to``;
    ``why`` its event's reason (``{attempts}``: the row's count), ``sets`` its own columns."""

    to: str
    why: str
    when: Expr | None = None
    sets: Mapping[str, Expr] = field(default_factory=dict)

    def reason(self, row: Row) -> str:
        return self.why.format_map(row) if "{" in self.why else self.why


def ends(to: str, why: str, when: Expr | None = None, *, code: str | None = None, **sets: Expr) -> Way:
    """A way out of ``leased``: ``finished_at`` set when ``to`` is terminal, cleared when it is
    ``queued``; ``code``: the error ``why`` and the failure code are written too."""
    written: dict[str, Expr] = {"finished_at": NULL if to == QUEUED else NOW}
    if code is not None:
        written.update(last_error=Lit(why), failure_code=Lit(code))
    return Way(to, why, when, {**written, **sets})


@dataclass(frozen=True)
class Transition:
    """A move of a job's state: from ``source``, by the first of ``ways`` that holds, under
    ``guard``; ``sets`` the columns every way writes; ``event``: whether it appends one."""

    name: str
    source: tuple[str, ...]
    guard: Expr
    ways: tuple[Way, ...]
    sets: Mapping[str, Expr] = field(default_factory=dict)
    event: bool = True

    def __post_init__(self) -> None:
        if not self.ways or self.ways[-1].when is not None or any(way.when is None for way in self.ways[:-1]):
            raise ValueError(f"{self.name}: the last way, and only it, is the otherwise")
        if any(set(way.sets) & set(self.sets) for way in self.ways):
            raise ValueError(f"{self.name}: a column every way sets is set by one way too")

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(way.to for way in self.ways))

    def way(self, row: Row, params: Row) -> Way:
        """The way this row goes (Python's answer to the statement's CASE)."""
        return next(way for way in self.ways if way.when is None or way.when.value(row, params) is True)

    def columns(self) -> list[str]:
        """Every column the transition writes, ``state`` first when it moves it."""
        moves = ["state"] if self.targets != tuple(self.source) else []
        return list(dict.fromkeys([*moves, *self.sets, *(c for way in self.ways for c in way.sets)]))

    def column(self, name: str) -> Expr:
        """What ``name`` becomes: one expression for every way, or a CASE over the ways."""
        if name in self.sets:
            return self.sets[name]
        values = [Lit(way.to) if name == "state" else way.sets.get(name, Col(name)) for way in self.ways]
        if len(set(values)) == 1:
            return values[0]
        return Case(tuple((way.when, value) for way, value in zip(self.ways[:-1], values, strict=False)
                          if way.when is not None), values[-1])

    def set_sql(self, to: Sql) -> str:
        """The statement's SET list."""
        return ", ".join(f"{name} = {self.column(name).sql(to)}" for name in self.columns())

    def changes(self, row: Row, params: Row) -> dict[str, Any]:
        """The ORM's ``update()`` of the way this row goes, ``state`` aside."""
        way = self.way(row, params)
        return {name: expr.orm(params) for name, expr in {**self.sets, **way.sets}.items()}


# The claim: a new epoch and attempt, the lease (``expires``, never past the deadline) to ``worker``.
CLAIM = Transition("claim", (QUEUED,), CLAIMABLE, (Way(LEASED, "claimed"),), {
    "epoch": Plus(Col("epoch"), 1), "attempts": Plus(ATTEMPTS, 1),
    "lease_expires_at": Least(Param("expires"), Col("deadline")), "leased_by": Param("worker"), "updated_at": NOW,
    "finished_at": NULL, "started_at": NULL})
START = Transition("start", (LEASED,), FENCE, (Way(LEASED, "started"),), {"started_at": NOW}, event=False)
RENEW = Transition("renew", (LEASED,), FENCE, (Way(LEASED, "renewed"),), {
    "lease_expires_at": Least(Param("expires"), Col("deadline")), "updated_at": NOW}, event=False)
# The completion's columns: its result and the kind's summary of it (``result``, ``outcome``...).
COMPLETE = Transition("complete", (LEASED,), FENCE, (Way(COMPLETED, "completed"),), {
    "result": Param("result"), "outcome": Param("outcome"), "outcome_text": Param("outcome_text"),
    "needs_action": Param("needs_action"), "reference": Param("reference"), "lease_expires_at": NULL,
    "updated_at": NOW, "finished_at": NOW, "last_error": Lit(""), "failure_code": Lit("")})
COMPLETE_INPUTS = ("job_id", "epoch", "result", "outcome", "outcome_text", "needs_action", "reference")
# A failed attempt (``error``, ``code``; ``retryable``; ``retry_at``, after the backoff).
FAIL = Transition("fail", (LEASED,), FENCE, (
    ends(UNKNOWN, "failed after external start", EXTERNAL_STARTED),
    ends(DEAD, "failed, not retryable", Named("not retryable", Not(Param("retryable")))),
    ends(DEAD, "failed, {attempts} attempts spent", SPENT),
    ends(DEAD, "failed, next try would start after the deadline",
         Named("no time left", Cmp(Param("retry_at"), ">=", Col("deadline")))),
    ends(QUEUED, "failed, will retry", available_at=Param("retry_at"), turn=NULL),
), {"lease_expires_at": NULL, "last_error": Param("error"), "failure_code": Param("code"), "updated_at": NOW})
# Prefetched claims handed back unstarted: the attempt given back, the turn kept.
GIVE_BACK = Transition("give back", (LEASED,), all_of(FENCE, Named("no external start", Not(EXTERNAL_STARTED))),
                       (Way(QUEUED, "handed back unstarted"),), {
    "attempts": given_back(), "lease_expires_at": NULL, "available_at": NOW, "updated_at": NOW})
DEFER = Transition("defer", (LEASED,), FENCE, (
    ends(DEAD, "no time left", Named("no time left", Cmp(Param("until"), ">=", Col("deadline"))),
         last_error=Param("error"), failure_code=Lit(FailureCode.NO_TIME_LEFT)),
    ends(QUEUED, "deferred", available_at=Param("until"), attempts=given_back(), turn=NULL),
), {"lease_expires_at": NULL, "external_started_at": NULL, "updated_at": NOW})
# A waiting job cancelled at once; a running one asked, and cancelled when its worker says so.
CANCEL = Transition("cancel", (QUEUED,), Named("queued, its epoch", all_of(state_is(QUEUED), Cmp(
    Col("epoch"), "=", Param("epoch")))), (Way(CANCELLED, "cancelled"),), {
    "finished_at": NOW, "updated_at": NOW, "turn": NULL, "last_error": Lit(""),
    "failure_code": Lit(FailureCode.CANCELLED)})
ASK_CANCEL = Transition("ask to cancel", (LEASED,), Named("leased, its epoch, not asked before", all_of(
    state_is(LEASED), Cmp(Col("epoch"), "=", Param("epoch")), Not(CANCEL_ASKED))),
    (Way(LEASED, "cancel requested"),), {"cancel_requested_at": NOW, "updated_at": NOW})
ACKNOWLEDGE_CANCEL = Transition("acknowledge cancel", (LEASED,), FENCE, (
    ends(UNKNOWN, "cancelled while an outside call was in flight; its outcome is unknown", EXTERNAL_STARTED,
         code=FailureCode.CANCELLED),
    ends(CANCELLED, "cancelled", last_error=Lit(""), failure_code=Lit(FailureCode.CANCELLED)),
), {"lease_expires_at": NULL, "turn": NULL, "updated_at": NOW})
# Recovery of a lease that ran out: a claim only held (never started) gives its attempt back.
EXPIRE = Transition("expire", (LEASED,), LEASE_RAN_OUT, (
    ends(UNKNOWN, "lease expired after the external-start marker", EXTERNAL_STARTED,
         code=FailureCode.LEASE_EXPIRED),
    ends(CANCELLED, "cancelled; its worker did not answer", CANCEL_ASKED, code=FailureCode.CANCELLED),
    ends(DEAD, "deadline passed", PAST_DEADLINE, code=FailureCode.DEADLINE_PASSED),
    ends(QUEUED, RETURNED_UNSTARTED, Named("never started", Not(STARTED))),
    ends(DEAD, "lease expired; attempts spent", SPENT, code=FailureCode.ATTEMPTS_SPENT),
    ends(QUEUED, "lease expired", code=FailureCode.LEASE_EXPIRED),
), {"attempts": given_back(STARTED), "available_at": NOW, "lease_expires_at": NULL, "updated_at": NOW})
# A queued or leased job (``from_state``) past its deadline.
PAST_DEADLINE_SWEEP = Transition("past deadline", (QUEUED, LEASED),
                                 all_of(Named("still in that state", Cmp(Col("state"), "=", Param("from_state"))),
                                        PAST_DEADLINE), (
    Way(UNKNOWN, "deadline passed", EXTERNAL_STARTED), Way(DEAD, "deadline passed")), {
    "attempts": given_back(state_is(QUEUED), STARTED), "lease_expires_at": NULL, "updated_at": NOW,
    "finished_at": NOW, "last_error": Lit("deadline passed"), "failure_code": Lit(FailureCode.DEADLINE_PASSED)})
# Staff: a dead or unknown job back with fresh attempts, or an unknown one settled.
REQUEUE = Transition("requeue (staff)", (DEAD, UNKNOWN), AS_SEEN, (Way(QUEUED, "requeued"),), {
    "attempts": Lit(0), "available_at": NOW, "deadline": Param("new_deadline"), "lease_expires_at": NULL,
    "external_started_at": NULL, "cancel_requested_at": NULL, "finished_at": NULL, "updated_at": NOW,
    "turn": NULL})
RESOLVE = Transition("resolve (staff)", (UNKNOWN,), AS_SEEN, (
    Way(COMPLETED, "resolved", Named("staff say so", Cmp(Param("to_state"), "=", Lit(COMPLETED))),
        {"result": Param("result"), "failure_code": Lit("")}),
    Way(DEAD, "discarded", sets={"failure_code": Lit(FailureCode.DISCARDED)}),
), {"updated_at": NOW, "finished_at": NOW, "lease_expires_at": NULL})

TRANSITIONS = (CLAIM, START, RENEW, COMPLETE, FAIL, GIVE_BACK, DEFER, CANCEL, ASK_CANCEL, ACKNOWLEDGE_CANCEL,
               EXPIRE, PAST_DEADLINE_SWEEP, REQUEUE, RESOLVE)


def words(guard: Expr) -> str:
    """A guard as the table says it: its named parts' words, the rest as SQL."""
    if isinstance(guard, Named):
        return guard.words
    if isinstance(guard, AllOf):
        return "; ".join(words(part) for part in guard.parts)
    return guard.sql(Sql())


def ways(transition: Transition) -> str:
    """Where a transition goes, as the table says it: each state and when (the first that holds)."""
    said: list[str] = []
    for to, group in itertools.groupby(transition.ways, key=lambda way: way.to):
        when = [words(way.when) for way in group if way.when is not None]
        said.append(f"{to} if {' or '.join(when)}" if when else f"else {to}" if said else to)
    return "; ".join(said)


def table() -> str:
    """The transition table, as the README shows it."""
    rows = ["| transition | from | to (the first that holds) | its write holds only while | event |",
            "|---|---|---|---|---|"]
    for t in TRANSITIONS:
        rows.append(f"| {t.name} | {', '.join(t.source)} | {ways(t)} | {words(t.guard)} "
                    f"| {'yes' if t.event else 'no'} |")
    return "\n".join(rows)
