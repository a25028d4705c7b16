"""Fixtures for the agent: review jobs on the sample documents, a claim's context, a
worker's outcome handling in-process, a scripted planner and a fake provider."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agent import samples
from agent.review import workflow
from agent.review.planner import Planner, View
from agent.review.steps import Proposal
from documents.store import Upload
from jobs import queue
from jobs.context import JobContext
from jobs.kinds import JobDeferred, JobFailed
from jobs.models import Job

from .fake_provider import FakeProvider

LEASE = timedelta(minutes=10)  # capped at the deadline by the claim


def require_ocr() -> None:
    """Skip, saying why, without Tesseract and its packs; fail instead under REQUIRE_OCR=1."""
    from agent.reading import ocr

    why = ocr.available()
    if why:
        if os.environ.get("REQUIRE_OCR") == "1":
            pytest.fail(f"REQUIRE_OCR=1 but {why}", pytrace=False)
        pytest.skip(why)


@pytest.fixture
def needs_ocr():
    require_ocr()


@pytest.fixture
def no_ocr(monkeypatch):
    """This process without Tesseract: a scan has no text (agent.reading.ocr finds no library to load)."""
    from agent.reading import ocr

    monkeypatch.setattr(ocr, "LIBRARY", "/nonexistent/libtesseract.so.5")
    monkeypatch.setattr(ocr, "_engine", None)


@pytest.fixture
def review_job(accept):
    """Accept a document_review job for a sample file (a Path) or inline text."""

    def make(document: Path | bytes | None = None, *, text: str | None = None, user=None, **kwargs) -> Job:
        upload = None
        if isinstance(document, Path):
            upload = Upload(document.read_bytes(), document.name, "application/octet-stream")
        elif isinstance(document, bytes):
            upload = Upload(document, "invoice.pdf", "application/pdf")
        payload = {"text": text} if text is not None else {}
        return accept("document_review", payload, user=user, document=upload, **kwargs)

    return make


@pytest.fixture
def claim(clock):
    """Claim the next job as a worker would, and give back its handler context."""

    def claim_(worker: str = "w1", lease: timedelta = LEASE) -> JobContext:
        got = queue.claim(now=clock.now(), worker=worker, lease=lease)
        assert got is not None, "nothing to claim"
        return JobContext(got, clock=clock)

    return claim_


def drive(ctx: JobContext, planner: Planner, **kwargs: Any) -> queue.Outcome:
    """What a worker does with the handler's outcome (as jobs.worker does): complete, defer or fail."""
    now = ctx.now
    try:
        result = workflow.run(ctx, planner=planner, **kwargs)
    except JobDeferred as exc:
        return queue.defer(job_id=ctx.job_id, epoch=ctx.epoch, until=exc.until, now=now(), reason=exc.reason)
    except JobFailed as exc:
        return queue.fail(job_id=ctx.job_id, epoch=ctx.epoch, error=f"{exc.code}: {exc.message}", code=exc.code,
                          now=now(), retryable=exc.retryable)
    return queue.complete(job_id=ctx.job_id, epoch=ctx.epoch, result=result, now=now())


class ScriptedPlanner:
    """Proposes what the test scripted, in order; a callable entry is called with the view."""

    def __init__(self, *proposals: Proposal | Callable[[View], Proposal]) -> None:
        self.proposals = list(proposals)
        self.views: list[View] = []

    def propose(self, ctx: JobContext, view: View, save) -> Proposal:
        self.views.append(view)
        nxt = self.proposals.pop(0)
        return nxt(view) if callable(nxt) else nxt


@pytest.fixture
def after_step():
    """``after_step(hook)``: call ``hook(n)`` after each review step's checkpoint commits
    (``workflow.step_committed``, n: the steps finished), for this test only."""
    hooks: list[Callable[[int], None]] = []

    def receiver(sender: object, *, step: int, **kwargs: object) -> None:
        for hook in hooks:
            hook(step)

    workflow.step_committed.connect(receiver)
    yield hooks.append
    workflow.step_committed.disconnect(receiver)


@pytest.fixture
def provider():
    server = FakeProvider()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def pdf():
    return samples.CLEAN_PDF
