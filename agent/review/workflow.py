"""The ``document_review`` handler: propose, check, run, checkpoint; resume from the checkpoint.

Each loop asks the planner for the next tool, has ``policy`` check it, runs it, and commits
the step inside ``ctx.fenced()`` (the transaction that holds only while this epoch owns the
job), so a stale worker cannot write a checkpoint. A worker that starts on a job with a
checkpoint resumes at its step and never repeats a finished one. A rejected proposal runs
nothing: it is recorded in the checkpoint and the event timeline and ends the job as a
non-retryable failure that staff see in ``last_error``.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.dispatch import Signal

from agent.models import Checkpoint
from agent.reading import fields
from agent.reading import findings as findings_
from documents import handling
from jobs import queue
from jobs.context import JobContext
from jobs.kinds import JobCancelled, JobFailed, Summary

from . import duplicates
from . import planner as planners
from .policy import Rejection, check, safe_name
from .steps import FINISH, SEQUENCE, Proposal
from .tools import TOOLS

log = logging.getLogger("agent.workflow")

# Sent after each step's checkpoint commits, in the process running the review, with ``ctx``
# and ``step`` (the number of steps finished). A receiver runs inside the handler: what it
# raises ends the run as the handler's own exception would.
step_committed = Signal()


def run(ctx: JobContext, *, planner: planners.Planner) -> dict[str, Any]:
    """Run the remaining steps of this job's review and return its structured result.

    After each step's checkpoint commits, ``step_committed`` is sent.
    """
    checkpoint = load(ctx)
    if checkpoint.rejected:
        # A refusal ends the job as dead; only staff requeue it, to try again from here.
        # The refusal stays on the event timeline.
        with ctx.fenced():
            checkpoint.rejected = None
            checkpoint.next_step = SEQUENCE[checkpoint.step_index] if checkpoint.step_index < len(SEQUENCE) else ""
            checkpoint.updated_at = ctx.now()
            checkpoint.save()
    source = "document" if handling.of_job(ctx) is not None else "inline"
    while True:
        if ctx.stop.is_set():  # asked to stop (shutdown, a lost lease, a cancel): between steps
            raise JobFailed("stopped between steps; the checkpoint keeps the progress", code="shutdown")
        if ctx.cancelled():  # someone asked to cancel since the last renewal: the worker records it
            raise JobCancelled()
        step = checkpoint.step_index
        proposal = saved_proposal(checkpoint)
        if proposal is None:
            view = planners.view_of(ctx, step_index=step, latest_output=checkpoint.latest_output, source=source)
            proposal = planner.propose(ctx, view, lambda p: save_proposal(ctx, checkpoint, p))
        rejection = check(proposal, job_id=ctx.job_id, step_index=step, remaining=ctx.remaining())
        if rejection is not None:
            reject(ctx, checkpoint, proposal, rejection)
        if proposal.tool == FINISH:
            break
        tool = TOOLS[proposal.tool]
        with ctx.time_limit(tool.budget.total_seconds(), too_slow(proposal.tool, tool.budget)):
            output = tool.run(ctx, proposal.arguments, checkpoint.latest_output)
        with ctx.fenced():
            checkpoint.step_index = step + 1
            checkpoint.next_step = SEQUENCE[step + 1] if step + 1 < len(SEQUENCE) else ""
            checkpoint.latest_output = output
            checkpoint.steps = [*checkpoint.steps, {"tool": proposal.tool, "at": ctx.now().isoformat(),
                                                    "epoch": ctx.epoch}]
            checkpoint.proposal = None
            checkpoint.updated_at = ctx.now()
            checkpoint.save()
            if not checkpoint.next_step:  # the review is read: its fingerprint, with the same fence
                fingerprint(ctx, checkpoint)
        log.info("job %s: step %d (%s) done", ctx.job_id, step + 1, proposal.tool)
        step_committed.send(sender=run, ctx=ctx, step=checkpoint.step_index)
    return result(checkpoint)


# What Alice reads when a step is killed at its time budget (the worker enforces it).
TOO_SLOW = {
    "extract": "the document is too complex to read within {seconds} s",
    "validate": "the document's text is too complex to check within {seconds} s",
    "draft": "the review note could not be written within {seconds} s",
}


def too_slow(tool: str, budget: timedelta) -> str:
    return TOO_SLOW[tool].format(seconds=f"{budget.total_seconds():g}")


def load(ctx: JobContext) -> Checkpoint:
    """This job's checkpoint, or a fresh one (saved with the first step)."""
    checkpoint = Checkpoint.objects.filter(job_id=ctx.job_id).first()
    if checkpoint is None:
        checkpoint = Checkpoint(job_id=ctx.job_id, next_step=SEQUENCE[0], updated_at=ctx.now())
    return checkpoint


def fingerprint(ctx: JobContext, checkpoint: Checkpoint) -> None:
    """Record what identifies the reviewed invoice, to flag the same one sent again (agent.review.duplicates)."""
    document = handling.of_job(ctx)
    recorded = duplicates.record(job_id=ctx.job_id, tenant_id=ctx.job()["scope_id"],
                                 sha256=document.sha256 if document is not None else "",
                                 fields=checkpoint.latest_output.get("fields") or {}, now=ctx.now())
    found = duplicates.finding(recorded)
    if found is not None:  # the result says so too, as a finding that blocks paying it
        output = checkpoint.latest_output
        checkpoint.latest_output = {**output, "findings": [*(output.get("findings") or []), found]}
        checkpoint.save(update_fields=["latest_output"])


def saved_proposal(checkpoint: Checkpoint) -> Proposal | None:
    """A provider's answer saved for this step: used instead of asking again."""
    saved = checkpoint.proposal
    if saved and saved.get("step") == checkpoint.step_index:
        return Proposal(saved.get("tool", ""), saved.get("arguments"))
    return None


def save_proposal(ctx: JobContext, checkpoint: Checkpoint, proposal: Proposal) -> None:
    with ctx.fenced():
        checkpoint.proposal = {"step": checkpoint.step_index, "epoch": ctx.epoch, **proposal.as_dict()}
        checkpoint.updated_at = ctx.now()
        checkpoint.save()


def reject(ctx: JobContext, checkpoint: Checkpoint, proposal: Proposal, rejection: Rejection) -> None:
    """Record the refusal (checkpoint and event, in one fenced transaction), then end the job."""
    name = safe_name(proposal.tool)
    record = {
        "step": checkpoint.step_index + 1,
        "tool": name,
        "code": rejection.code,
        "message": rejection.message,
        "at": ctx.now().isoformat(),
    }
    with ctx.fenced():
        checkpoint.rejected = record
        checkpoint.next_step = ""
        checkpoint.proposal = None
        checkpoint.updated_at = ctx.now()
        checkpoint.save()
        # Nothing moved (to_state empty), but the refusal is on the job's timeline.
        queue.note(job_id=ctx.job_id, epoch=ctx.epoch, actor="agent.policy",
                   reason=f"proposal rejected ({rejection.code}): tool {name}", now=ctx.now())
    log.warning("job %s: proposal for step %d rejected: %s (tool %s)", ctx.job_id, record["step"], rejection.code, name)
    raise JobFailed(_failure(record), retryable=False, code=rejection.code)


def _failure(record: dict[str, Any]) -> str:
    return f"proposal rejected at step {record['step']}: {record['message']}"


def result(checkpoint: Checkpoint) -> dict[str, Any]:
    """The saved result: fields with their status and evidence, those also read (due date, net,
    VAT, buyer) where printed, the draft, the steps taken, warnings,
    pages and their sizes (what evidence boxes are measured against), whether anything could be
    read at all, what the fields were read from ("reading") and the findings (an e-invoice's
    defects, the visible page disagreeing with it)."""
    out = checkpoint.latest_output
    return {
        "fields": out["fields"],
        "also_read": out.get("also_read", {}),
        "draft": out["draft"],
        "steps": [{"tool": s["tool"], "at": s["at"]} for s in checkpoint.steps],
        "warnings": out["warnings"],
        "pages": out["pages"],
        "page_sizes": out.get("page_sizes", []),
        "readable": out.get("readable", out.get("has_text", True)),
        "reading": out.get("reading", "text"),
        "findings": out.get("findings", []),
        "ocr": out.get("ocr"),
    }


def summarize(result: dict[str, Any]) -> Summary:
    """The review's outcome for Alice's list: OK, what to correct, check or look for, or unreadable.

    A value to check (two readings that disagree) and a standing blocking finding (the page
    against the e-invoice, an internal rule) both need Alice's eyes: "1 to check" puts the
    document under her action. A finding a member accepted, or one that does not block, does not."""
    result = findings_.settle(result)
    found = result["fields"]
    reference = " · ".join(
        str(found[name]["value"]) for name in ("supplier_name", "invoice_number")
        if found.get(name, {}).get("status") == "present"
    )
    if not result.get("readable", True):
        return Summary("unreadable", "unreadable", True, reference)
    required = [found[name] for name in fields.REQUIRED if name in found]  # what is also read is never asked
    wrong = sum(1 for f in required if f["status"] == "malformed")
    to_check = {name for name in fields.REQUIRED if found.get(name, {}).get("status") == "to_check"}
    # A standing blocking finding keeps the document from reading OK; one whose field already
    # reads to check is counted there.
    check = len(to_check) + sum(1 for f in findings_.standing(result.get("findings")) if f["field"] not in to_check)
    missing = sum(1 for f in required if f["status"] == "missing")
    if not (wrong or check or missing):
        return Summary("ok", "OK", False, reference)
    parts = (f"{wrong} to correct" if wrong else "", f"{check} to check" if check else "",
             f"{missing} not found" if missing else "")
    return Summary("to_correct", ", ".join(part for part in parts if part), True, reference)


def progress(job_id: int) -> dict[str, Any] | None:
    """The checkpoint as staff pages show it; the extracted text, and its layout (the same words
    with their positions), are left out."""
    checkpoint = Checkpoint.objects.filter(job_id=job_id).first()
    if checkpoint is None:
        return None
    latest = dict(checkpoint.latest_output or {})
    if "text" in latest:
        latest["text"] = f"({len(latest['text'])} characters, not shown)"
    if latest.get("layout"):
        latest["layout"] = "(the page layout, not shown)"
    return {
        "step_index": checkpoint.step_index,
        "next_step": checkpoint.next_step,
        "latest_output": latest,
        "updated_at": checkpoint.updated_at.isoformat(),
        "steps": checkpoint.steps,
        "rejected": checkpoint.rejected,
    }
