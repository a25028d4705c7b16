"""What the job list's columns and a job's read-only page show: never the scope's content
itself, only its metadata, the kind's checkpoint, the result and the timeline."""

from __future__ import annotations

import json
from datetime import datetime

from django.contrib import admin
from django.db.models import Q
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from ..clock import Clock
from ..models import Job
from ..tasks_backend import kind as task_kind
from . import kind_triage
from .display import (
    CANCELLED,
    COMPLETED,
    DEAD,
    LEASED,
    QUEUED,
    UNKNOWN,
    member_names,
    person,
    pretty_json,
    short_age,
    utc,
    viewer,
)

TASK_ARGUMENTS_SHOWN = 120  # characters of a task's arguments on its job page
DOCUMENT_NAME_SHOWN = 32  # characters of a document's name in the list (all of it on hover)
ERROR_SHOWN = 48  # characters of the last error's first line in the list (all of it on hover)
SAME_DOCUMENT_SHOWN = 10  # other jobs of the same file listed on a job's page
EXTERNAL_START = "external start: "  # the reason of the marker's event (jobs.queue.mark_external_start)


class JobColumns:
    """The job list's columns: what staff triage by, narrow enough for 1280 px (jobs-admin.css)."""

    clock: Clock

    @admin.display(description="state", ordering="state")
    def state_badge(self, obj: Job) -> str:
        if obj.state in (DEAD, UNKNOWN):
            return format_html('<strong class="job-state job-state-{}">{}</strong>', obj.state, obj.state)
        return obj.state

    @admin.display(description="document / kind", ordering="input_name")
    def document_column(self, obj: Job) -> str:
        """The kept input's name (whole on hover and on the job's page; ``kind_triage.JobInput``), its
        job kind under it."""
        shown = str(getattr(obj, "input_name", "") or "")
        if not shown:
            name = format_html('<span class="job-document">{}</span>', "pasted text" if obj.payload else "—")
        else:
            name = format_html('<span class="job-document" title="{}">{}</span>', shown,
                               Truncator(shown).chars(DOCUMENT_NAME_SHOWN))
        return format_html('{}<span class="job-kind">{}</span>', name, obj.kind)

    @admin.display(description="scope", ordering="scope__slug")
    def scope_column(self, obj: Job) -> str:
        return format_html('<span class="job-who">{}</span>', obj.scope)

    @admin.display(description="submitter", ordering="submitted_by__username")
    def submitter(self, obj: Job) -> str:
        return format_html('<span class="job-who">{}</span>', person(obj.submitted_by))

    @admin.display(description="attempts", ordering="attempts")
    def attempt_count(self, obj: Job) -> str:
        return f"{obj.attempts}/{obj.max_attempts}"

    @admin.display(description="last error")
    def short_error(self, obj: Job) -> str:
        """Its first line, shortened (jobs-admin.css); the full text on the job's page and on hover."""
        if not obj.last_error:
            return "—"
        first_line = obj.last_error.splitlines()[0]
        return format_html('<span class="job-error" title="{}">{}</span>', obj.last_error,
                           Truncator(first_line).chars(ERROR_SHOWN))

    @admin.display(description="age", ordering="created_at")
    def age(self, obj: Job) -> str:
        return short_age(self.clock.now() - obj.created_at)


class JobPageFields(JobColumns):
    """A job's read-only page: who and what, where else it shows, its input's metadata, the
    kind's checkpoint, the result and the timeline."""

    @admin.display(description="claims")
    def claims(self, obj: Job) -> str:
        """The epoch, in words: how many times a worker claimed it."""
        if not obj.epoch:
            return "not claimed yet"
        return (f"claimed {obj.epoch} time{pluralize(obj.epoch)} by a worker (its epoch: only the latest "
                "claim's writes count)")

    @admin.display(description="submission key")
    def submission_key(self, obj: Job) -> str:
        return format_html("<code>{}</code> (the Idempotency-Key its submitter sent; the list's search finds it)",
                           obj.operation_key)

    @admin.display(description="submitter's page")
    def submitters_page(self, obj: Job) -> str:
        """The scope's page of this job. Only the scope's members open it (the same 404 as an unknown id for
        anyone else, staff included), so staff of another scope get its address, not a dead link. A
        site without such pages (the queue installed alone) names none."""
        url = kind_triage.submitter_page(obj.pk)  # the product's page, registered when it loads
        if url is None:
            return "— (this site has no submitters' pages)"
        user = viewer.get()
        # A member of the job's scope: the host's user model names its scope ``scope_id``, as
        # the job does; a user model without one belongs to none.
        if user is not None and getattr(user, "scope_id", None) == obj.scope_id:
            return format_html('<a href="{}" id="submitters-page">{}</a>: what {} and the other members of {} see',
                               url, url, person(obj.submitted_by), obj.scope)
        return format_html('<code id="submitters-page">{}</code>: what {} and the other members of {} see; only '
                           "{}'s members can open it, and you are not one", url, person(obj.submitted_by),
                           obj.scope, obj.scope)

    @admin.display(description="same document")
    def same_document(self, obj: Job) -> str:
        """The scope's other jobs of the same file (``kind_triage.JobInput.same``), newest first: never
        another scope's."""
        job_input = kind_triage.job_input()
        same = job_input.same(obj)
        if same is None:
            return "— (no stored document)"
        others = (same.filter(scope_id=obj.scope_id).exclude(pk=obj.pk).order_by("-id")
                  .only("id", "state", "created_at").annotate(input_name=job_input.name()))
        shown = list(others[:SAME_DOCUMENT_SHOWN])
        if not shown:
            return format_html("none: no other job of {} has this file", obj.scope)
        now = self.clock.now()
        rows = format_html_join("", '<li><a href="{}">job {}</a> {} — {}, {} ago</li>', (
            (reverse("admin:jobs_job_change", args=[job.pk]), job.pk, job.input_name or "", job.state,
             short_age(now - job.created_at)) for job in shown))
        more = others.count() - len(shown) if len(shown) == SAME_DOCUMENT_SHOWN else 0
        tail = format_html("<p>and {} older</p>", more) if more else ""
        return format_html('<ul class="job-same-document">{}</ul>{}', rows, tail)

    @admin.display(description="evidence")
    def evidence(self, obj: Job) -> str:
        """The outside call's marker (this app's) and what the kind recorded of the call (its hook)."""
        lines = marker_lines(obj)
        triage = kind_triage.of(obj.kind)
        if not triage.supports_evidence:
            lines.append(("Recorded by the kind", "nothing more: this kind keeps no record of its outside calls"))
        else:
            try:
                lines += triage.evidence(obj.pk)
            except Exception as exc:  # noqa: BLE001  a broken hook must not hide the rest of the page from staff
                lines.append(("Recorded by the kind", f"unavailable: {type(exc).__name__}: {exc}"))
        return format_html('<table class="job-evidence"><tbody>{}</tbody></table>', format_html_join(
            "", '<tr><th scope="row">{}</th><td>{}</td></tr>', lines))

    @admin.display(description="payload")
    def input_summary(self, obj: Job) -> str:
        """Keys and sizes, never the values of text: inline text is the scope's document."""
        if not obj.payload:
            return "—"
        rows = []
        for key, value in obj.payload.items():
            if isinstance(value, str):
                shown = f"text, {len(value):,} characters"
            elif isinstance(value, dict):
                shown = f"object, {len(value)} keys"
            elif isinstance(value, list):
                shown = f"list, {len(value)} items"
            else:
                shown = json.dumps(value)  # numbers, booleans, null: settings, not content
            rows.append((key, shown))
        return format_html('<ul class="job-input">{}</ul>', format_html_join("", "<li><code>{}</code>: {}</li>", rows))

    @admin.display(description="task")
    def task_call(self, obj: Job) -> str:
        """A task job's function and its arguments, truncated: what staff need to know which
        call failed, not the caller's data in full."""
        if obj.kind != task_kind.KIND or not isinstance(obj.payload, dict):
            return "—"
        arguments = [json.dumps(a, ensure_ascii=False, default=str) for a in obj.payload.get("args", [])]
        arguments += [f"{k}={json.dumps(v, ensure_ascii=False, default=str)}"
                      for k, v in obj.payload.get("kwargs", {}).items()]
        return format_html("<code>{}({})</code>", obj.payload.get("function", "?"),
                           Truncator(", ".join(arguments)).chars(TASK_ARGUMENTS_SHOWN))

    @admin.display(description="document")
    def document_summary(self, obj: Job) -> str:
        return kind_triage.job_input().summary(obj)

    @admin.display(description="content")
    def input_downloads(self, obj: Job) -> str:
        """Only on superusers' pages (see get_fieldsets); each download is logged."""
        links = [(reverse("admin:jobs_job_payload", args=[obj.pk]), "Download the payload (JSON)")]
        if kind_triage.job_input().has(obj):
            links.append((reverse("admin:jobs_job_document", args=[obj.pk]), "Download the document"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="checkpoint")
    def kind_progress(self, obj: Job) -> str:
        """The kind's own progress view (the agent's checkpoint), without importing its app."""
        triage = kind_triage.of(obj.kind)
        if not triage.supports_checkpoint:
            return "— (this kind keeps no checkpoint)"
        try:
            progress = triage.checkpoint(obj.pk)
        except Exception as exc:  # noqa: BLE001  a broken hook must not hide the rest of the page from staff
            return format_html("unavailable: {}", f"{type(exc).__name__}: {exc}")
        return pretty_json(progress) if progress else "— (none yet)"

    @admin.display(description="result")
    def result_display(self, obj: Job) -> str:
        return "—" if obj.result is None else pretty_json(obj.result)

    @admin.display(description="events")
    def timeline(self, obj: Job) -> str:
        events = list(obj.events.order_by("id"))
        names = member_names(events)
        return render_to_string("admin/jobs/job/timeline.html", {
            "events": [(event, names.get(event.actor, event.actor)) for event in events]})


def marker_lines(job: Job) -> list[tuple[str, str]]:
    """When the external call was marked started and how the job became unknown: the job's row and timeline."""
    events = list(job.events.filter(Q(reason__startswith=EXTERNAL_START) | Q(to_state=UNKNOWN)).order_by("id"))
    marks = [e for e in events if e.reason.startswith(EXTERNAL_START) and e.to_state == LEASED]
    mark = marks[-1] if marks else None
    lines: list[tuple[str, str]] = []
    at = job.external_started_at or (mark.at if mark else None)
    if at is None:
        lines.append(("External call marked started", "no marker on record"))
    else:
        what = f": {mark.reason.removeprefix(EXTERNAL_START)}" if mark else ""
        claim = f", claim {mark.epoch}" if mark else ""
        lines.append(("External call marked started", f"{utc(at)}{claim}{what}"))
    became = [e for e in events if e.to_state == UNKNOWN]
    if became:
        lines.append(("Became unknown", f"{utc(became[-1].at)}, {became[-1].reason} ({became[-1].actor})"))
    return lines


def guidance(job: Job, now: datetime) -> str:
    """One line on what to do with a job in its state (and, for a dead or unknown one, why it
    stopped: ``Job.failure_code``), for the top of its page."""
    if job.state == QUEUED and job.available_at > now:
        return (f"Waiting to be tried again at {utc(job.available_at)}, after a failed try: nothing to do "
                "(Cancel stops it).")
    if job.state == LEASED and job.cancel_requested_at is not None:
        return f"Cancelling since {utc(job.cancel_requested_at)}: wait; its worker stops at its next step or renewal."
    if job.state == LEASED:
        ends = utc(job.lease_expires_at) if job.lease_expires_at else "its deadline"
        return (f"Running: wait. Its lease ends at {ends}; if its worker is gone by then, the job goes back to the "
                "queue (or to unknown, had it started an outside call).")
    own = kind_triage.of(job.kind).guidance.get(job.state, {}).get(job.failure_code or "")
    if own:
        return own
    for codes, words in GUIDANCE_BY_FAILURE.get(job.state, ()):
        if job.failure_code in codes:
            return words
    return GUIDANCE.get(job.state, "")


GUIDANCE = {
    QUEUED: "Waiting for a worker: nothing to do (Cancel stops it before it starts).",
    DEAD: "Failed, and nothing will run it again (the last error says why): Retry queues it with fresh attempts and "
          "a new deadline, worth it once the cause has passed (an outage, a lost worker), not for a refused document.",
    UNKNOWN: "An outside call started and never settled, so nobody knows whether it took effect: check the "
             "evidence below with the service it called, then reconcile as done (with its outcome) if it did, or "
             "as not done to run it again if it did not.",
    COMPLETED: "Done: nothing to do. The result below is what its submitter sees.",
    CANCELLED: "Cancelled: nothing to do, and nothing runs it again.",
}
# What a dead or unknown job's failure code (jobs.queue.FailureCode, or an acceptance refusal's,
# jobs.errors) changes in that line; a kind's own codes have the kind's lines (KindTriage.guidance),
# and codes named nowhere get the state's line.
GUIDANCE_BY_FAILURE: dict[str, tuple[tuple[frozenset[str], str], ...]] = {
    UNKNOWN: (
        (frozenset({"time_limit"}),
         "The service it called did not answer in time. A timeout during that service's outage: it did nothing you "
         "can see, and reconciling as not done reruns it; if its records show the call below answered, reconcile "
         "as done with its outcome."),
        (frozenset({"lease_expired", "handler_crashed", "stopped", "shutdown"}),
         "Its worker was lost while the outside call below was in flight: ask the service it called about its "
         "idempotency key, then reconcile as done (with its outcome) if it answered, or as not done to run it again."),
    ),
    DEAD: (
        (frozenset({"too_large", "too_complex", "unpacks_too_large", "damaged_document", "unsupported_media_type",
                    "memory_limit", "cpu_limit", "too_deep"}),
         "Its document was refused or is beyond its kind's limits (the last error says why): Retry would fail "
         "the same way; its submitter has to send another file."),
        (frozenset({"deadline", "deadline_passed", "no_time_left"}),
         "It ran out of time before its deadline: Retry queues it with fresh attempts and a new deadline, worth it "
         "once the workers can take it in time."),
        (frozenset({"discarded"}),
         "Staff discarded it when its outcome was unknown (the timeline says who and why): Retry runs it again."),
    ),
}
