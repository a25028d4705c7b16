"""Diagnostic kinds for tests and benchmarks; offered to users only with JOBS_DIAGNOSTIC_KINDS.

``diagnostic.noop`` does nothing (the benchmarks measure the queue alone);
``diagnostic.sleep`` sleeps, optionally after committing the external-start marker, and can
fail its first attempts, so tests can crash workers at chosen points (with ``ignore_stop`` it
sleeps without heeding a stop request, as a stuck call would); with ``settle`` it
makes an outside call that runs its course (``call``: another app's diagnostic kind may make
it inside what that app holds for a call). With
``JOBS_DIAGNOSTIC_TRACE=path`` in its environment, ``diagnostic.sleep`` appends "job epoch" to
that file as it starts, so a test can see which claims really ran.
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import Any

from .context import JobContext
from .kinds import JobCancelled, JobFailed, Kind, register


def noop(ctx: JobContext) -> dict[str, Any]:
    return {"ok": True}


def sleep(ctx: JobContext) -> dict[str, Any]:
    p = ctx.payload
    trace = os.environ.get("JOBS_DIAGNOSTIC_TRACE")
    if trace:  # tests: a line per handler start, beside the queue's own record (one write, append)
        with open(trace, "a") as out:
            out.write(f"{ctx.job_id} {ctx.epoch}\n")
    if ctx.attempt <= p.get("fail_attempts", 0):
        raise JobFailed(f"diagnostic failure on attempt {ctx.attempt}", retryable=True)
    seconds = min(float(p.get("seconds", 0)), max(ctx.remaining().total_seconds(), 0))
    if p.get("settle"):
        return call(ctx, seconds)
    if p.get("external"):
        ctx.mark_external_start("diagnostic external call")
    if p.get("ignore_stop"):  # a call that never looks up (a socket read that drips), deadline or not
        time.sleep(float(p.get("seconds", 0)))
        return {"slept": p.get("seconds", 0), "attempt": ctx.attempt, "epoch": ctx.epoch}
    if ctx.stop.wait(seconds):  # shutdown, a lost or fenced lease, or a cancel: the worker knows which
        raise JobFailed("stopped before finishing", retryable=True, code="shutdown")
    return {"slept": seconds, "attempt": ctx.attempt, "epoch": ctx.epoch}


def call(ctx: JobContext, seconds: float, *, within: AbstractContextManager[object] | None = None) -> dict[str, Any]:
    """An outside call that takes ``seconds``: marked first, never recalled once started, its
    outcome recorded when it settles; a cancellation asked for meanwhile takes effect after.
    ``within`` is held for the call alone (an app's budget of calls in flight)."""
    with within or nullcontext():
        ctx.mark_external_start("diagnostic outside call")
        time.sleep(seconds)
        ctx.clear_external_start("diagnostic outside call")
    if ctx.cancelled():
        raise JobCancelled()
    return {"slept": seconds, "attempt": ctx.attempt, "epoch": ctx.epoch}


register(Kind(
    name="diagnostic.noop",
    handler=noop,
    payload_schema={"type": "object", "additionalProperties": False},
    max_payload_bytes=256,
    deadline=timedelta(minutes=10),
    diagnostic=True,
    description="Does nothing; for benchmarks.",
))

register(Kind(
    name="diagnostic.sleep",
    handler=sleep,
    payload_schema={
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "minimum": 0, "maximum": 60},
            "external": {"type": "boolean"},
            "fail_attempts": {"type": "integer", "minimum": 0, "maximum": 10},
            "settle": {"type": "boolean"},
            "ignore_stop": {"type": "boolean"},
        },
        "additionalProperties": False,
    },
    max_payload_bytes=1024,
    deadline=timedelta(minutes=10),
    diagnostic=True,
    description="Sleeps; may mark an external start first, make an outside call, fail its first attempts.",
))
