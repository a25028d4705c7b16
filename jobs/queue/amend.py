"""A completed result, amended by its scope's members: the guarded transaction the kind's app
writes its corrections in, and the job's summary that follows them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jobs import kinds, sql
from jobs.models import Job
from jobs.writelock import write_transaction

from .events import record
from .terms import COMPLETED


class NotAmendable(Exception):
    """The job is no completed job of the caller's scope: ``state`` is None for an unknown or
    another scope's id (alike), else the state it is in."""

    def __init__(self, state: str | None) -> None:
        super().__init__(f"a {state} job's result cannot be amended" if state else "no such job")
        self.state = state


@dataclass(frozen=True)
class Amendment:
    """The completed job being amended, and how its summary follows the amended result."""

    job: Job  # id, scope, kind, epoch and result, as they are inside the transaction

    def restate(self, result: dict[str, Any]) -> kinds.Summary | None:
        """Store the kind's summary of ``result`` (the list's outcome, needs-action, reference) and
        return it; the stored result stays the one the job completed with."""
        kind = kinds.get(self.job.kind)
        if kind is None or kind.summarize is None:
            return None
        summary = kind.summarize(result)
        outcome, text, needs_action, reference = sql.summary_values(summary)
        Job.objects.filter(pk=self.job.pk, state=COMPLETED).update(
            outcome=outcome, outcome_text=text, needs_action=needs_action, reference=reference)
        return summary


@contextmanager
def amending(*, job_id: int, scope_id: int | None, actor: str, reason: str, now: datetime) -> Iterator[Amendment]:
    """A transaction that holds only while the job is completed and the scope's: the app that
    owns the job's kind writes its rows about the result inside it (a member's corrections) and
    may restate the job's summary. The note ``reason`` (never a value from the document) goes on
    the job's event timeline, for staff. Raises ``NotAmendable`` before anything is written.

    The guarded UPDATE comes first: on PostgreSQL it holds the job's row lock until the commit, so
    two amendments of one job run one after the other and each sees the other's rows (SQLite's
    write lock orders them anyway).
    """
    if scope_id is None:  # a member of no scope has no jobs
        raise NotAmendable(None)
    with write_transaction():
        if not Job.objects.filter(pk=job_id, scope_id=scope_id, state=COMPLETED).update(updated_at=now):
            state = Job.objects.filter(pk=job_id, scope_id=scope_id).values_list("state", flat=True).first()
            raise NotAmendable(state)
        job = Job.objects.only("id", "scope_id", "kind", "epoch", "result").get(pk=job_id)
        record(job_id, COMPLETED, "", job.epoch, actor=actor, reason=reason, now=now)
        yield Amendment(job)
