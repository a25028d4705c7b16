"""The jobs' admin: dead and unknown jobs first, read-only pages, downloads of the input for
those allowed to see it (each one logged), and the triage actions (``triage``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets
from django.core.exceptions import PermissionDenied
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from ..clock import Clock, queue_clock
from ..models import Job, JobQuerySet
from . import kind_triage
from .display import COMPLETED, DEAD, LEASED, QUEUED, UNKNOWN, WIDE, member, viewer
from .job_page import JobPageFields, guidance
from .triage import CANCEL, DISCARD, RECONCILE_DONE, RECONCILE_NOT_DONE, RETRY, TRIAGES, TriageActions

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec
    from django.utils.datastructures import _ListOrTuple
    from django.utils.safestring import SafeString

# The largest id the search takes as one (a bigint has at most 19 digits).
ID_DIGITS = 19


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"
    NEEDS_HUMAN = "needs_human"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Iterable[tuple[str, str]]:
        return [(self.NEEDS_HUMAN, "Needs a human (dead or unknown)"), *Job.State.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == self.NEEDS_HUMAN:
            return cast("JobQuerySet", queryset).needs_human()  # the job admin's queryset is one
        if self.value() in Job.State.values:
            return queryset.filter(state=self.value())
        return queryset


class AgeFilter(admin.SimpleListFilter):
    """Age since acceptance, on the admin's clock (a logical one in tests)."""

    title = "age"
    parameter_name = "age"
    BANDS = {
        "1h": ("Less than an hour", timedelta(0), timedelta(hours=1)),
        "1d": ("1 to 24 hours", timedelta(hours=1), timedelta(days=1)),
        "7d": ("1 to 7 days", timedelta(days=1), timedelta(days=7)),
        "old": ("Older than 7 days", timedelta(days=7), None),
    }

    def __init__(self, request: HttpRequest, params: dict[str, str], model: type[Job], model_admin: JobAdmin) -> None:
        self.clock = model_admin.clock
        super().__init__(request, params, model, model_admin)

    def lookups(self, request: HttpRequest, model_admin: Any) -> Iterable[tuple[str, str]]:
        return [(key, label) for key, (label, _, _) in self.BANDS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        band = self.BANDS.get(self.value() or "")
        if band is None:
            return queryset
        _, younger, older = band
        now = self.clock.now()
        queryset = queryset.filter(created_at__lte=now - younger)
        return queryset if older is None else queryset.filter(created_at__gt=now - older)


@admin.register(Job)
class JobAdmin(JobPageFields, TriageActions):
    """Dead and unknown jobs first; read-only pages; the triage actions go through the queue."""

    clock: Clock = queue_clock  # tests swap in a logical clock

    # The columns staff triage by, narrow enough for 1280 px beside the filters (jobs-admin.css):
    # the kind under the document's name; the epoch, the lease and the keys on the job's page.
    list_display = ["id", "document_column", "scope_column", "submitter", "state_badge", "attempt_count", "age",
                    "short_error"]
    list_display_links = ["id"]
    list_filter = [StateFilter, "scope", ("submitted_by", admin.RelatedOnlyFieldListFilter), "kind", AgeFilter]
    list_select_related = ["scope", "submitted_by"]
    list_per_page = 50
    show_full_result_count = False  # the state counts above the list already say it
    search_fields = ["=operation_key"]
    search_help_text = ("A job id, a submission key (the Idempotency-Key its submitter sent, exactly), or words of "
                        "a document's file name.")
    actions = [RETRY.name, RECONCILE_DONE.name, RECONCILE_NOT_DONE.name, DISCARD.name, CANCEL.name]
    change_list_template = "admin/jobs/job/change_list.html"
    change_form_template = "admin/jobs/job/change_form.html"
    fieldsets = [
        (None, {"fields": ["id", "scope", "submitted_by", "kind", "state", "attempt_count", "claims",
                           "last_error", "failure_code", "submission_key"]}),
        ("Where else it shows", {"fields": ["submitters_page", "same_document"]}),
        ("Input", {"fields": ["input_summary", "task_call", "document_summary"]}),
        ("Checkpoint", {"fields": ["kind_progress"]}),
        ("Result", {"fields": ["result_display"]}),
        ("Timeline", {"fields": ["timeline"]}),
        ("Times and lease", {"classes": ["collapse"], "fields": [
            "created_at", "available_at", "deadline", "leased_by", "lease_expires_at",
            "external_started_at", "updated_at", "finished_at",
        ]}),
    ]
    readonly_fields = [*flatten_fieldsets(fieldsets), "input_downloads", "evidence"]

    # Nobody edits a job here: its state moves only through the queue (the actions), its input
    # is immutable, and deleting it would delete its audit trail.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Job | None = None) -> bool:
        return False

    def may_see_input(self, request: HttpRequest) -> bool:
        """Inline text and documents are the scopes' content: superusers, and staff granted
        ``view_document`` on its own (triage does not bring it), see them; each look is logged.
        Triage works from the metadata, the checkpoint and the result."""
        user = request.user
        return user.is_active and (user.is_superuser or user.has_perm(f"{self.opts.app_label}.view_document"))

    # The query-string lookups the declared filters use, and nothing else: Django's default
    # lets any lookup on the job's own fields through (``?payload__text__icontains=...`` would
    # search the scopes' inline text), so everything else is a 400.
    allowed_lookups = frozenset({
        StateFilter.parameter_name, AgeFilter.parameter_name,  # state=, age=
        "scope__id__exact", "scope__isnull",  # the scope filter (RelatedFieldListFilter)
        "submitted_by__id__exact", "submitted_by__isnull",  # the submitter filter (RelatedOnlyFieldListFilter)
        "kind", "kind__isnull",  # the kind filter (AllValuesFieldListFilter)
    })

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        return lookup in self.allowed_lookups

    def get_fieldsets(self, request: HttpRequest, obj: Job | None = None) -> _FieldsetSpec:
        fieldsets = list(self.fieldsets)
        if obj is not None and obj.state == UNKNOWN:  # right after the job's own lines
            fieldsets.insert(1, ("Evidence: what the outside call was, and when", {
                "fields": ["evidence"],
                "description": "What the job recorded when it started its outside call, to check against the "
                               "records of the service it called before reconciling it. Never the document's text "
                               "or a prompt.",
            }))
        if not self.may_see_input(request):
            return fieldsets
        return [(name, {**options, "fields": [*options["fields"], "input_downloads"]} if name == "Input" else options)
                for name, options in fieldsets]

    def get_ordering(self, request: HttpRequest) -> _ListOrTuple[Any]:
        needs_human_first = Case(
            When(state=UNKNOWN, then=Value(0)), When(state=DEAD, then=Value(1)),
            default=Value(2), output_field=IntegerField(),
        )
        return [needs_human_first.asc(), "-id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Job]:
        """Each job with its kept input's name (``input_name``, "" without one): the list's column."""
        return super().get_queryset(request).annotate(input_name=kind_triage.job_input().name())

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Job],
                           search_term: str) -> tuple[QuerySet[Job], bool]:
        """Exact id or exact operation key (what a submitter quotes in a support request), or words of
        the document's file name (what it is called). Never the input's content."""
        term = search_term.strip().lstrip("#")
        if not term:
            return queryset, False
        match = Q(operation_key=term)
        by_name = kind_triage.job_input().search(term)
        if by_name is not None:
            match |= by_name
        if term.isdigit() and len(term) < ID_DIGITS:
            match |= Q(pk=int(term))
        return queryset.filter(match), False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        counts = dict(Job.objects.order_by().values_list("state").annotate(n=Count("id")))
        url = reverse("admin:jobs_job_changelist")
        chips = [(StateFilter.NEEDS_HUMAN, "needs a human", counts.get(DEAD, 0) + counts.get(UNKNOWN, 0))]
        chips += [(state, state, counts.get(state, 0)) for state in (UNKNOWN, DEAD, QUEUED, LEASED, COMPLETED)]
        current = request.GET.get(StateFilter.parameter_name)
        context = {"state_counts": [
            {"state": value, "label": label, "count": n, "url": f"{url}?state={value}", "active": value == current}
            for value, label, n in chips
        ], **WIDE, **(extra_context or {})}
        return super().changelist_view(request, context)

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        job = self.get_object(request, object_id)
        buttons = []
        if job is not None and self.has_triage_permission(request):
            buttons = [t for t in TRIAGES.values() if job.state in t.from_states]
        shown: dict[str, Any] = {}
        pane = kind_triage.document_pane()  # the product's, registered when it loads (NO_DOCUMENT_PANE)
        if (job is not None and pane.shows_documents and self.may_see_input(request)
                and kind_triage.job_input().has(job)):
            shown = {"show_document_url": "?document=1#document"}
            if request.method == "GET" and ("document" in request.GET or "page" in request.GET):
                shown |= {"document": self.document_pane(request, job, pane), "document_media": pane.media}
        words = guidance(job, self.clock.now()) if job is not None else ""
        # The page's read-only fields are rendered with the response: rendered here, while they
        # can tell who is looking (``submitters_page``).
        viewing = viewer.set(member(request))
        try:
            response = super().change_view(request, object_id, form_url,
                                           {"triage_buttons": buttons, "guidance": words, **shown, **WIDE,
                                            **(extra_context or {})})
            if isinstance(response, TemplateResponse):
                response.render()
            return response
        finally:
            viewer.reset(viewing)

    def document_pane(self, request: HttpRequest, job: Job, pane: kind_triage.DocumentPane) -> SafeString:
        """The document beside the result, as the product shows it (with the admin's own URLs).
        Opened on request, never by merely opening the job, and each opening is logged."""
        self.log_change(request, job, f"Viewed the document's pages ({input_name(job) or 'unnamed'}).")
        return pane.render(job, page_url=lambda n: reverse("admin:jobs_job_page", args=[job.pk, n]),
                           download_url=reverse("admin:jobs_job_document", args=[job.pk]),
                           requested=request.GET.get("page"))

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        return [
            path("<path:object_id>/document/", view(self.document_view), name="jobs_job_document"),
            path("<path:object_id>/pages/<int:number>.png", view(self.page_view), name="jobs_job_page"),
            path("<path:object_id>/payload/", view(self.payload_view), name="jobs_job_payload"),
            *super().get_urls(),
        ]

    # --- downloads of the input (superusers only, each one logged)

    def _input_of(self, request: HttpRequest, object_id: str) -> Job:
        if not self.may_see_input(request):
            raise PermissionDenied
        job = self.get_object(request, object_id)
        if job is None:
            raise Http404("no such job")
        return job

    def document_view(self, request: HttpRequest, object_id: str) -> FileResponse:
        job = self._input_of(request, object_id)
        stored = kind_triage.job_input().open(job)
        if stored is None:
            raise Http404("this job has no stored document")
        self.log_change(request, job, f"Downloaded the document ({input_name(job) or 'unnamed'}).")
        # An attachment: the browser saves it, never renders a scope's file in the admin's origin.
        response = FileResponse(stored.file, as_attachment=True, filename=stored.filename,
                                content_type=stored.content_type)
        response["Content-Length"] = str(stored.size)
        response["Cache-Control"] = "no-store, private"
        return response

    def page_view(self, request: HttpRequest, object_id: str, number: int) -> FileResponse:
        """One page image of the job's document (the job page's pane, opened and logged there)."""
        job = self._input_of(request, object_id)
        image = kind_triage.job_input().open_page(job, number)
        if image is None:
            raise Http404("no such page")
        response = FileResponse(image.file, content_type=image.content_type)
        response["Cache-Control"] = "no-store, private"
        return response

    def payload_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        job = self._input_of(request, object_id)
        self.log_change(request, job, "Downloaded the payload.")
        response = HttpResponse(json.dumps(job.payload, indent=2, ensure_ascii=False), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="job-{job.pk}-payload.json"'
        response["Cache-Control"] = "no-store"
        return response


def input_name(job: Job) -> str:
    """The name of the input kept beside the job's payload ("" without one), as the admin's query
    annotates it (``JobAdmin.get_queryset``)."""
    return str(getattr(job, "input_name", "") or "")
