"""The model provider's calls as staff see them when a job is ``unknown``.

A job is ``unknown`` when its worker committed the external-start marker before calling the
provider and never settled the call (a timeout, a worker lost while it waited). To reconcile
it, staff need what was asked and when: the review's step, the ``Idempotency-Key`` the
request carried, the provider's request id if an answer came, the marker's time and the last
step the checkpoint saved. ``started`` writes that record in the marker's own transaction
(``JobContext.mark_external_start(also=...)``), ``answered`` in the fenced write that saves
the answer; ``evidence`` is the kind's hook that the staff job page shows. Never what was
sent: neither the document's text nor the prompt is kept or shown.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from agent.models import Checkpoint, ProviderCall
from jobs.models import Job

from .steps import SEQUENCE

MAX_REQUEST_ID = 200


def step_words(index: int) -> str:
    """The step a call was made for, from the number of steps finished before it: "2 of 3: validate"."""
    total = len(SEQUENCE)
    if index >= total:
        return f"after step {total} of {total}: whether to finish"
    return f"{index + 1} of {total}: {SEQUENCE[index]}"


def started(*, job_id: int, epoch: int, now: datetime, call: str, step: str, key: str) -> Callable[[], None]:
    """The record of a call about to be made, to write with its marker (``also=``): both or neither."""

    def write() -> None:
        ProviderCall.objects.update_or_create(job_id=job_id, idempotency_key=key, defaults={
            "epoch": epoch, "call": call[:100], "step": step[:60], "started_at": now,
            "request_id": "", "answered_at": None,
        })

    return write


def answered(*, job_id: int, key: str, request_id: str, now: datetime) -> None:
    """The provider answered the call: call it inside the fenced write that saves the answer."""
    ProviderCall.objects.filter(job_id=job_id, idempotency_key=key).update(
        request_id=printable(request_id), answered_at=now)


def printable(value: str | None) -> str:
    """A header's value from outside, kept only as printable ASCII, bounded."""
    return "".join(c for c in (value or "") if " " <= c <= "~").strip()[:MAX_REQUEST_ID]


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def evidence(job_id: int) -> list[tuple[str, str]]:
    """What the review recorded of its last provider call and its progress, as (label, value) lines."""
    marked_at = Job.objects.filter(pk=job_id).values_list("external_started_at", flat=True).first()
    calls = ProviderCall.objects.filter(job_id=job_id).order_by("-started_at", "-id")
    call = (calls.filter(started_at=marked_at).first() if marked_at else None) or calls.first()
    lines: list[tuple[str, str]] = []
    if call is None:
        lines.append(("Provider call", "none recorded: this review asked the model provider nothing"
                      if marked_at is None
                      else "none recorded for this marker: it was not set by one of the review's provider calls"))
    else:
        if marked_at is not None and call.started_at != marked_at:
            lines.append(("Provider call", f"none recorded at the marker's time; the last one was {call.call}, "
                                           f"at {utc(call.started_at)}"))
        else:
            lines.append(("Provider call", f"{call.call} (claim {call.epoch})"))
        lines += [
            ("Step", call.step),
            ("Idempotency key", call.idempotency_key),
            ("Provider's request id", call.request_id or (
                "none: its answer carried none" if call.answered_at else "none: no answer was received")),
            ("Answer", f"received and saved at {utc(call.answered_at)}: a rerun uses it and does not ask again"
             if call.answered_at else "none saved"),
        ]
    checkpoint = Checkpoint.objects.filter(job_id=job_id).first()
    steps = checkpoint.steps if checkpoint is not None else []
    if not steps:
        lines.append(("Last saved step", "none: no step of the review had finished"))
    else:
        last = steps[-1]
        at = datetime.fromisoformat(last["at"]) if last.get("at") else None
        saved = f", saved at {utc(at)}" if at else ""
        lines.append(("Last saved step", f"{len(steps)} of {len(SEQUENCE)}: {last.get('tool', '?')}{saved}"))
    return lines
