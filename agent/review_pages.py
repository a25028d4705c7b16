"""How a document review shows beyond the queue's own rows: on Alice's pages (``ReviewPages``,
registered with the web app) and on staff's job page (``ReviewTriage``, registered with the
queue's admin), both from ``AgentConfig.ready()``.

Each answer is one of the app's modules (``presentation``, ``review.revision``,
``review.duplicates``, ``inbox.corrections``, ``inbox.work``); these classes only say which,
and what the review offers.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from accounts.models import User
from jobs.models import Job
from web.kind_pages import Correction, Duplicate, PageBox, Remark, Words, Work

from . import presentation
from .inbox import corrections, work
from .review import duplicates, provider_calls, revision, workflow


class ReviewPages:
    """The review's pages (``web.kind_pages.KindPages``): its fields, corrections, duplicates and work states."""

    words: Words = presentation.WORDS
    outcomes: Mapping[str, str] = presentation.OUTCOMES
    result_template = "agent/review_result.html"
    supports_corrections = True
    supports_duplicates = True
    supports_work = True
    work_states: Mapping[str, str] = work.STATES

    def present(self, result: dict[str, Any]) -> dict[str, Any]:
        return presentation.present(result)

    def export_columns(self, result: dict[str, Any]) -> dict[str, Any]:
        return dict(presentation.export_columns(result))

    def list_columns(self, result: dict[str, Any]) -> dict[str, str]:
        return presentation.list_columns(result)

    def sort_key(self, key: str) -> Any:
        return presentation.sort_key(key)

    def tally(self, result: dict[str, Any]) -> str:
        return presentation.tally(result)

    def note(self, result: dict[str, Any]) -> str:
        return presentation.note(result)

    def boxes(self, result: dict[str, Any]) -> list[PageBox]:
        return presentation.boxes(result)

    def progress_text(self, job_id: int) -> str | None:
        return presentation.progress_text(job_id)

    def revise(self, results: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
        return revision.revise(results)

    def history(self, job_id: int, viewer_id: int | None) -> list[Remark]:
        return corrections.history(job_id, viewer_id)

    def correct(self, *, job_id: int, tenant_id: int | None, user: User, field: str, value: str | None,
                confirm: bool, now: datetime) -> Correction:
        return corrections.correct(job_id=job_id, tenant_id=tenant_id, user=user, field=field, value=value,
                                   confirm=confirm, now=now)

    def duplicates(self, job_ids: list[int]) -> dict[int, Duplicate]:
        return duplicates.of_jobs(job_ids)

    def duplicate_ids(self, tenant_id: int | None) -> QuerySet[Any, Any]:
        return duplicates.flagged(tenant_id)

    def work(self, jobs: list[Job]) -> dict[int, Work]:
        return work.of_jobs(jobs)

    def work_elsewhere(self, tenant_id: int | None, viewer_id: int | None) -> QuerySet[Any, Any]:
        return work.elsewhere(tenant_id, viewer_id)

    def work_assigned(self, tenant_id: int | None, user_id: int) -> QuerySet[Any, Any]:
        return work.assigned(tenant_id, user_id)

    def work_history(self, job_id: int) -> list[tuple[datetime, str]]:
        return work.history(job_id)

    def version_sql(self, job: str) -> tuple[str, ...]:
        return work.version_sql(job) + duplicates.version_sql(job)


class ReviewTriage:
    """What staff's job page shows of a review (``jobs.admin.kind_triage.KindTriage``): its
    checkpoint, its provider calls, and what to do about its own failure codes."""

    supports_checkpoint = True
    supports_evidence = True
    guidance: Mapping[str, Mapping[str, str]] = presentation.STAFF_GUIDANCE

    def checkpoint(self, job_id: int) -> dict[str, Any] | None:
        return workflow.progress(job_id)

    def evidence(self, job_id: int) -> list[tuple[str, str]]:
        return provider_calls.evidence(job_id)


PAGES = ReviewPages()
TRIAGE = ReviewTriage()
