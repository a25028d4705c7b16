"""The ``document_review`` kind as the queue runs it: the review's workflow, with what the inbox
does around it.

The handler tells the member's notifications and the tenant's webhooks that a review started,
then runs the workflow (``agent.review.workflow``) with the planner the environment selects;
the kind declares the review's limits (and ``DOCUMENTS`` the documents it takes), how its result is summed up, which
failures are the provider's, and the webhook deliveries once a completion commits. It stands
above the review and the inbox, as the app's own wiring: ``AgentConfig.ready()`` registers it.

Every process registers the kind at start-up, and most never run a review (a worker of other
kinds, a management command, a benchmark's child): the reader and the workflow are loaded by
the kind's ``warm`` (``jobs.kinds.warmed``), once, in the process that first needs them, never
by the registration. The callables below load them as they are called.
"""

from __future__ import annotations

from typing import Any

from documents.rules import DocumentRules
from jobs.context import JobContext
from jobs.kinds import Kind, Limits, Summary

from .inbox import notifications, webhooks
from .reading.limits import MAX_DOCUMENT_BYTES
from .review.steps import DEADLINE, FAILURES, MAX_INLINE_CHARS


def warm() -> None:
    """Load the reader and the workflow (about half a second of CPU) before the first review."""
    from .review import workflow  # noqa: F401


def review(ctx: JobContext) -> dict[str, Any]:
    """The registered handler: the planner the environment selects (local by default)."""
    from .review import planner as planners
    from .review.workflow import run

    notifications.review_started(ctx)  # her email digest will tell what this review comes to
    webhooks.review_started(ctx)  # a catch-up queued before it completes (its deliveries never lost)
    return run(ctx, planner=planners.from_env())


def check_document(*, content: bytes, name: str, content_type: str) -> str:
    from .reading import documents

    return documents.check_document(content=content, name=name, content_type=content_type)


def check_input(*, payload: dict[str, Any], attached: bool) -> None:
    from .reading import documents

    documents.check_input(payload=payload, has_document=attached)  # the one input attached is a document


def summarize(result: dict[str, Any]) -> Summary:
    from .review import workflow

    return workflow.summarize(result)


KIND = Kind(
    name="document_review",
    handler=review,
    payload_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_INLINE_CHARS}},
        "additionalProperties": False,
    },
    max_payload_bytes=4 * MAX_INLINE_CHARS + 64,  # UTF-8 text of at most MAX_INLINE_CHARS characters
    deadline=DEADLINE,
    check_input=check_input,
    # Reading a user's document is where a hostile one would hurt: in a child process under
    # hard limits, each step within its budget. OCR runs there too (agent.reading.ocr, in-process): its
    # models take ~150 MB in the child that loads them, and an image of the largest accepted
    # size (50 million pixels) decodes to up to 200 MB before it is made grey and scaled, so
    # the memory is 768 MB (a 49-million-pixel RGBA PNG was read within 640 MB of data
    # segment, not within 512). 60 s of CPU stay: OCR takes about 1 s a page at 300 dpi.
    isolated=True,
    limits=Limits(memory_mb=768, cpu_seconds=60),
    description="Review a supplier invoice: extract its text, check the required fields, draft a note for Alice.",
    summarize=summarize,
    failures=FAILURES,  # the provider's and the planner's: our side's doing
    # Once the completion committed: the tenant's webhook deliveries, each a job of its own.
    on_completed=webhooks.on_completed,
    warm=warm,
)

# The documents a review takes (``documents.rules``): at most MAX_DOCUMENT_BYTES, each checked at acceptance.
DOCUMENTS = DocumentRules(max_bytes=MAX_DOCUMENT_BYTES, check=check_document)
