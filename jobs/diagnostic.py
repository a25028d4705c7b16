"""Diagnostic kinds for tests and benchmarks; offered to users only with JOBS_DIAGNOSTIC_KINDS.

``diagnostic.noop`` does nothing (the benchmarks measure the queue alone);
``diagnostic.sleep`` sleeps, optionally after committing the external-start marker, and can
fail its first attempts, so tests can crash workers at chosen points.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .context import JobContext
from .kinds import JobFailed, Kind, register


def noop(ctx: JobContext) -> dict[str, Any]:
    return {"ok": True}


def sleep(ctx: JobContext) -> dict[str, Any]:
    p = ctx.payload
    if ctx.attempt <= p.get("fail_attempts", 0):
        raise JobFailed(f"diagnostic failure on attempt {ctx.attempt}", retryable=True)
    if p.get("external"):
        ctx.mark_external_start("diagnostic external call")
    seconds = min(float(p.get("seconds", 0)), max(ctx.remaining().total_seconds(), 0))
    if ctx.stop.wait(seconds):
        raise JobFailed("stopped before finishing", retryable=True, code="shutdown")
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
        },
        "additionalProperties": False,
    },
    max_payload_bytes=1024,
    deadline=timedelta(minutes=10),
    diagnostic=True,
    description="Sleeps; may mark an external start first; may fail its first attempts.",
))
