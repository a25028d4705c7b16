"""``diagnostic.read``: a diagnostic kind that reads its document, offered to users only with
JOBS_DIAGNOSTIC_KINDS.

It reads its document from the store (files or an object store) and answers its SHA-256, so a
test sees every job read its own bytes wherever they are kept; with ``JOBS_DIAGNOSTIC_TRACE=path``
in its environment it appends "job epoch" to that file as it starts (as ``diagnostic.sleep``
does). With ``keep_pages`` it keeps a one-pixel page image beside its document after its sleep, so
it reaches the store at its start and at its end, as a document kind does.
"""

from __future__ import annotations

import hashlib
import os
from datetime import timedelta
from typing import Any

from jobs.context import JobContext
from jobs.kinds import JobFailed, Kind

from . import handling
from .rules import DocumentRules

# One white pixel: the page image diagnostic.read keeps with ``keep_pages``.
BLANK_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8"
                          "ffff3f0005fe02fe0def46b80000000049454e44ae426082")


def read(ctx: JobContext) -> dict[str, Any]:
    trace = os.environ.get("JOBS_DIAGNOSTIC_TRACE")
    if trace:
        with open(trace, "a") as out:
            out.write(f"{ctx.job_id} {ctx.epoch}\n")
    digest = hashlib.sha256(handling.read(ctx)).hexdigest()
    if ctx.payload.get("external"):
        ctx.mark_external_start("diagnostic external call")
    seconds = min(float(ctx.payload.get("seconds", 0)), max(ctx.remaining().total_seconds(), 0))
    if ctx.stop.wait(seconds):
        raise JobFailed("stopped before finishing", retryable=True, code="shutdown")
    if ctx.payload.get("keep_pages") and not handling.pages_kept(ctx):  # the store again, at the end
        handling.keep_pages(ctx, [(BLANK_PNG, 1, 1)])
    return {"sha256": digest, "attempt": ctx.attempt, "epoch": ctx.epoch}


KIND = Kind(
    name="diagnostic.read",
    handler=read,
    payload_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 60}, "external": {"type": "boolean"},
                       "keep_pages": {"type": "boolean"}},
        "additionalProperties": False,
    },
    max_payload_bytes=256,
    deadline=timedelta(minutes=10),
    diagnostic=True,
    description="Reads its document from the document store and answers its SHA-256; may sleep, then keep a page "
                "image beside it.",
)
RULES = DocumentRules(max_bytes=1024 * 1024)
