"""The triage actions: each asks for a reason first, then moves only the jobs still as staff saw them.

Each move is recorded twice: a ``JobEvent`` (by the queue, actor ``staff:<username>``) and an
admin ``LogEntry``, committed together or not at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from .. import payloads, queue
from ..clock import Clock
from ..errors import InvalidPayload
from ..models import Job
from .display import CANCELLED, COMPLETED, DEAD, LEASED, QUEUED, UNKNOWN, WIDE, parse_seen

if TYPE_CHECKING:
    JobModelAdmin = admin.ModelAdmin[Job]
else:  # the admin's classes take no type parameters at run time
    JobModelAdmin = admin.ModelAdmin

SKIPPED_LISTED = 20  # job ids named in the message about the jobs an action skipped


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=300,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Required. Recorded with your username on each job's timeline and in the admin log.",
    )

    def queue_arguments(self) -> dict[str, Any]:
        return {}


class OutcomeForm(ReasonForm):
    outcome = forms.CharField(
        max_length=20_000,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}),
        help_text=(
            "Required: what the external effect produced. A JSON object (starting with {) becomes the "
            'job\'s result as it is; any other text is saved as {"note": "…"}. Its submitters see it.'
        ),
    )

    def clean_outcome(self) -> dict[str, Any]:
        text: str = self.cleaned_data["outcome"]
        if not text.startswith("{"):
            return {"note": text}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"This starts with {{ but is not valid JSON: {exc}") from None
        except RecursionError:
            raise forms.ValidationError(self.too_deep) from None
        if not isinstance(value, dict):
            raise forms.ValidationError("A JSON outcome must be an object.")
        # The scope's pages and API read the result back: hold it to what a submitted payload
        # may be (depth, no NUL, no lone surrogate), or it is stored and every read of it fails.
        try:
            payloads.check_storable(value, "outcome")
        except InvalidPayload as exc:
            raise forms.ValidationError(f"This JSON cannot be kept as a result: {exc.message}.") from None
        return value

    too_deep = f"This JSON nests deeper than {payloads.MAX_DEPTH} levels; a result may not."

    def queue_arguments(self) -> dict[str, Any]:
        return {"result": self.cleaned_data["outcome"]}


@dataclass(frozen=True)
class Triage:
    """One staff move: from the state the staff member saw to the state it leaves."""

    name: str
    title: str
    verb: str
    done: str
    from_states: tuple[str, ...]
    to_state: str
    explanation: str
    form: type[ReasonForm] = ReasonForm

    @property
    def from_state(self) -> str:
        return " or ".join(self.from_states)

    def run(self, *, state: str, **arguments: Any) -> queue.Outcome:
        if self.to_state == CANCELLED:
            arguments.pop("result", None)
            return queue.cancel(**arguments)
        if self.to_state == QUEUED:
            return queue.requeue(expected_state=state, **arguments)
        return queue.resolve(expected_state=state, to_state=self.to_state, **arguments)


RETRY = Triage(
    "retry_dead", "Retry dead jobs", "Retry", "retried", (DEAD,), QUEUED,
    "Back to queued with fresh attempts and a new deadline. The epoch is kept, and the next "
    "claim raises it, so no token a worker ever held becomes valid again.",
)
RECONCILE_DONE = Triage(
    "reconcile_done", "Reconcile unknown jobs as done", "Reconcile as done", "completed", (UNKNOWN,), COMPLETED,
    "The external effect happened: the job is completed with the outcome you attach, and "
    "nothing runs again.",
    OutcomeForm,
)
RECONCILE_NOT_DONE = Triage(
    "reconcile_not_done", "Reconcile unknown jobs as not done", "Reconcile as not done", "requeued",
    (UNKNOWN,), QUEUED,
    "The external effect did not happen: back to queued with fresh attempts and a new deadline, "
    "so a worker runs it again.",
)
DISCARD = Triage(
    "discard_unknown", "Discard unknown jobs", "Discard", "discarded", (UNKNOWN,), DEAD,
    "Give up on the job: it goes to dead and nothing runs again (a retry stays possible).",
)
CANCEL = Triage(
    "cancel_jobs", "Cancel jobs", "Cancel", "cancelled", (QUEUED, LEASED), CANCELLED,
    "A waiting job is cancelled at once; a running one gets a cancel request that its worker "
    "acknowledges at its next renewal or step (a call in flight settles first). Nothing runs again.",
)
TRIAGES = {t.name: t for t in (RETRY, RECONCILE_DONE, RECONCILE_NOT_DONE, DISCARD, CANCEL)}


class TriageActions(JobModelAdmin):
    """The job admin's actions: a confirmation page with a reason, then the queue's conditional writes."""

    clock: Clock

    def has_triage_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(f"{self.opts.app_label}.triage_job")

    @admin.action(permissions=["triage"], description="Retry selected dead jobs…")
    def retry_dead(self, request: HttpRequest, queryset: QuerySet[Job]) -> TemplateResponse | None:
        return self._triage(request, queryset, RETRY)

    @admin.action(permissions=["triage"], description="Reconcile selected unknown jobs as done (attach the outcome)…")
    def reconcile_done(self, request: HttpRequest, queryset: QuerySet[Job]) -> TemplateResponse | None:
        return self._triage(request, queryset, RECONCILE_DONE)

    @admin.action(permissions=["triage"], description="Reconcile selected unknown jobs as not done (requeue)…")
    def reconcile_not_done(self, request: HttpRequest, queryset: QuerySet[Job]) -> TemplateResponse | None:
        return self._triage(request, queryset, RECONCILE_NOT_DONE)

    @admin.action(permissions=["triage"], description="Discard selected unknown jobs (to dead)…")
    def discard_unknown(self, request: HttpRequest, queryset: QuerySet[Job]) -> TemplateResponse | None:
        return self._triage(request, queryset, DISCARD)

    @admin.action(permissions=["triage"], description="Cancel selected waiting or running jobs…")
    def cancel_jobs(self, request: HttpRequest, queryset: QuerySet[Job]) -> TemplateResponse | None:
        return self._triage(request, queryset, CANCEL)

    def _triage(self, request: HttpRequest, queryset: QuerySet[Job], triage: Triage) -> TemplateResponse | None:
        """Confirm first (reason, what moves, what is skipped); then move what is still as seen."""
        if not self.has_triage_permission(request):
            raise PermissionDenied
        if request.POST.get("post"):
            form = triage.form(request.POST)
            if form.is_valid():
                self._apply(request, queryset, triage, form)
                return None
        else:
            form = triage.form()
        jobs = list(queryset.select_related("scope").order_by("pk"))
        movable = [job for job in jobs if job.state in triage.from_states]
        return TemplateResponse(request, "admin/jobs/job/triage_confirmation.html", {
            **self.admin_site.each_context(request), **WIDE,
            "opts": self.opts,
            "title": triage.title,
            "triage": triage,
            "form": form,
            "jobs": jobs,
            "movable": movable,
            "skipped": [job for job in jobs if job.state not in triage.from_states],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "media": self.media + form.media,
        })

    def _apply(self, request: HttpRequest, queryset: QuerySet[Job], triage: Triage, form: ReasonForm) -> None:
        selected = {int(pk) for pk in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME) if pk.isdigit()}
        seen = dict(parse_seen(request.POST.getlist("seen")))
        targets = sorted(queryset.filter(pk__in=seen.keys() & selected).values_list("pk", flat=True))
        reason: str = form.cleaned_data["reason"]
        actor = f"staff:{request.user.get_username()}"
        states = dict(queryset.filter(pk__in=targets).values_list("pk", "state"))
        moved = [pk for pk in targets
                 if states.get(pk) in triage.from_states
                 and self._move(request, triage, pk=pk, state=states[pk], seen_epoch=seen[pk], actor=actor,
                                reason=reason, form=form)]
        skipped = sorted(selected - set(moved))
        self.message_user(
            request, f"{triage.verb}: {len(moved)} of {len(selected)} selected job(s) {triage.done} "
            f"({triage.from_state} → {triage.to_state}).",
            messages.SUCCESS if moved else messages.WARNING,
        )
        if skipped:
            ids = ", ".join(f"#{pk}" for pk in skipped[:SKIPPED_LISTED])
            more = " …" if len(skipped) > SKIPPED_LISTED else ""
            self.message_user(
                request, f"Skipped {len(skipped)} job(s) no longer {triage.from_state} as you saw them: {ids}{more}.",
                messages.WARNING,
            )

    def _move(self, request: HttpRequest, triage: Triage, *, pk: int, state: str, seen_epoch: int, actor: str,
              reason: str, form: ReasonForm) -> bool:
        """One job, only if it is still in the state and epoch the confirmation page showed.

        The queue's conditional write checks both; the admin log entry commits with the
        queue's event or not at all.
        """
        with transaction.atomic():
            outcome = triage.run(state=state, job_id=pk, expected_epoch=seen_epoch, actor=actor, reason=reason,
                                 now=self.clock.now(), **form.queue_arguments())
            if outcome:
                self.log_change(request, Job.objects.get(pk=pk),
                                f"{triage.verb} ({triage.from_state} → {triage.to_state}). Reason: {reason}")
            return outcome.applied
