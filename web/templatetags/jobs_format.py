"""Template filters for job pages: times readers can trust, jobs in the submitter's words."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django import template
from django.utils.html import format_html

from documents import rules
from documents.models import original_name

from .. import wording

register = template.Library()


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON for results of unknown shape; autoescaped like any other text."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


@register.filter
def when(value: datetime | None) -> str:
    """``<time>`` with the absolute UTC time as its text, which works without script;
    static/jobs.js rewrites it in the reader's zone ("3 min ago", the local time on hover)."""
    if value is None:
        return "—"
    utc = value.astimezone(UTC)
    return format_html('<time datetime="{}" data-when>{}</time>', utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       f"{utc.day} {utc:%B %Y, %H:%M} UTC")  # "13 November 2017, 14:05 UTC": dates read alike


@register.filter
def state_words(job: Any) -> str:
    return wording.state_words(job.state, wording.words_of(job.kind))


@register.filter
def outcome_words(job: Any) -> str:
    return wording.outcome_words(job)


@register.filter
def tone(job: Any) -> str:
    return wording.tone(job)


@register.filter
def document_title(job: Any) -> str:
    """What the job is called on the pages: its document's name, or what it was."""
    name = original_name(job)
    if name:
        return name
    return "Pasted text" if rules.accepts_document(job.kind) else job.kind


@register.filter
def of_job(found: Any, job: Any) -> Any:
    """What a mapping by job id holds for ``job`` (the duplicates of a page's jobs), or None."""
    return found.get(job.pk) if isinstance(found, dict) else None
