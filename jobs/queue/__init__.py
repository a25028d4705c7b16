"""Every state write of a job, as a conditional write that states what must still hold.

The job row is the queue entry. Each operation takes ``now`` from the caller's clock, is
one short transaction, appends a ``JobEvent`` (never payload text) and returns what
happened. A write whose WHERE clause no longer matches changes nothing: a stale worker's
completion, say, is reported as rejected with the reason, and recorded as such.

One module per part of a job's life: ``accept``, ``claim``, ``lease`` (while the job runs),
``finish``, ``recover``, ``staff``, ``cancel``, ``amend`` and
``retention``; what they return is in ``terms``, a running job's fence in ``fence``, its
timeline in ``events``, a scope's running count in ``running``. Each transition (its
from-states, its rule, its guard, its columns) is declared once, in ``transitions``: the
statements of ``jobs.sql`` and the ORM's writes here are rendered from it. Callers use this package's
names (``queue.claim``, ``queue.Claim``), never the modules'.

The hot path (claim, start, complete) is hand-written SQL on the driver's cursor, one module
per database (``jobs.sql``): one statement per transition plus its event row, because the
ORM's per-query overhead would dominate a loop whose database work is a few tens of
microseconds. The colder operations use the ORM's ``filter().update()``, which is the same
conditional UPDATE, inside ``write_transaction()``.

SQLite: every write transaction is ``BEGIN IMMEDIATE`` (settings), so the claim holds the
single write lock for one UPDATE and one INSERT, behind a fair cross-process lock.
PostgreSQL: the claim's subquery takes the row ``FOR UPDATE SKIP LOCKED``, so concurrent
claimers pass over each other's rows instead of queueing behind them, and the transition
and its event are one statement.
"""

from .accept import accept, waiting, waiting_limit
from .amend import Amendment, NotAmendable, amending
from .cancel import CANCEL_CHANNEL, acknowledge_cancel, cancel, cancel_requested, cancels_requested
from .claim import claim, claim_many, complete_and_claim
from .events import FINISHED, LIVE, batch_finished, needs_human_changed
from .finish import Completion, backoff, complete, complete_many, defer, fail, give_back_unstarted
from .kind_slots import sync_kind_slots
from .lateness import Wait, queue_delayed
from .lateness import noticed as notice_lateness
from .lateness import wait as queue_wait
from .lease import (
    RESUBMITTED_AS,
    RESUBMITTED_FROM,
    Resubmission,
    clear_external_start,
    fenced,
    mark_external_start,
    note,
    record_resubmission,
    renew,
    renew_many,
    resubmission,
    start,
    start_many,
)
from .recover import Recovery, recover
from .retention import delete_finished
from .running import recount as recount_running
from .staff import requeue, resolve
from .terms import (
    CANCEL_REQUESTED,
    CANCELLED,
    COMPLETED,
    DEAD,
    LEASED,
    MAX_FAILURE_CODE,
    MAX_OPERATION_KEY,
    NEEDS_HUMAN,
    QUEUED,
    RETURNED_UNSTARTED,
    UNKNOWN,
    Acceptance,
    Claim,
    FailureCode,
    KeptInput,
    Outcome,
    StaleEpoch,
)

__all__ = [
    "CANCELLED",
    "CANCEL_CHANNEL",
    "CANCEL_REQUESTED",
    "COMPLETED",
    "DEAD",
    "FINISHED",
    "LEASED",
    "LIVE",
    "MAX_FAILURE_CODE",
    "MAX_OPERATION_KEY",
    "NEEDS_HUMAN",
    "QUEUED",
    "RESUBMITTED_AS",
    "RESUBMITTED_FROM",
    "RETURNED_UNSTARTED",
    "UNKNOWN",
    "Acceptance",
    "Amendment",
    "Claim",
    "Completion",
    "FailureCode",
    "KeptInput",
    "NotAmendable",
    "Outcome",
    "Recovery",
    "Resubmission",
    "StaleEpoch",
    "Wait",
    "accept",
    "acknowledge_cancel",
    "amending",
    "backoff",
    "batch_finished",
    "cancel",
    "cancel_requested",
    "cancels_requested",
    "claim",
    "claim_many",
    "clear_external_start",
    "complete",
    "complete_and_claim",
    "complete_many",
    "defer",
    "delete_finished",
    "fail",
    "fenced",
    "give_back_unstarted",
    "mark_external_start",
    "needs_human_changed",
    "note",
    "notice_lateness",
    "queue_delayed",
    "queue_wait",
    "record_resubmission",
    "recount_running",
    "recover",
    "renew",
    "renew_many",
    "requeue",
    "resolve",
    "resubmission",
    "start",
    "start_many",
    "sync_kind_slots",
    "waiting",
    "waiting_limit",
]
