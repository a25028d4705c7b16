"""Staff triage: the admin opens on the jobs that need a human and moves them only through the queue.

Job pages are read-only for everyone: state, epoch, lease and result change only through
the triage actions, which call ``jobs.queue`` with the state the staff member saw. Each
action asks for a reason on a confirmation page first (as ``delete_selected`` does), and
each move is recorded twice: a ``JobEvent`` (by the queue, actor ``staff:<username>``) and
an admin ``LogEntry``.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from datetime import timezone as dt_timezone
from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, Count, IntegerField, Q, Value, When
from django.http import FileResponse, Http404, HttpResponse
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from web import http, status

from . import documents, kinds, queue, task_kind, tokens
from .clock import queue_clock
from .models import ApiToken, Job, JobEvent, Tenant, User

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN, CANCELLED = (s.value for s in Job.State)
TASK_ARGUMENTS_SHOWN = 120  # characters of a task's arguments on its job page
DOCUMENT_NAME_SHOWN = 32  # characters of a document's name in the list (all of it on hover)
ERROR_SHOWN = 48  # characters of the last error's first line in the list (all of it on hover)
SAME_DOCUMENT_SHOWN = 10  # other jobs of the same file listed on a job's page
# The job pages without the admin's app sidebar: the list's triage columns and its filters
# fit 1280 px beside each other only with that width (the breadcrumbs lead back home).
WIDE = {"is_nav_sidebar_enabled": False}
# Who is looking at a job's page, while it renders (a read-only field has only the job).
_viewer: ContextVar[Any] = ContextVar("job_admin_viewer", default=None)


# --- Tenants, members, groups, tokens ------------------------------------------------------


class _TenantCounts(TypedDict):
    """What TenantAdmin's queryset annotates each tenant with."""

    _members: int
    _jobs: int


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    """Tenants and how they share the workers: a weight, a running limit, a waiting limit."""

    list_display = ["slug", "name", "weight", "max_running", "max_waiting", "member_count", "job_count",
                    "created_at"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["created_at", "running"]
    fieldsets = [
        (None, {"fields": ["slug", "name", "created_at"]}),
        ("Sharing the workers", {
            "fields": ["weight", "max_running", "max_waiting", "running"],
            "description": "Tenants take turns; a weight of 2 gets twice the turns of 1. A running limit "
                           "caps this tenant's jobs running at once on all workers; a waiting limit caps "
                           "its jobs waiting (empty: the site's default).",
        }),
    ]

    def save_model(self, request, obj, form, change):
        # The running count is the queue's to keep: never written back from this form.
        fields = [name for name in form.changed_data if name != "running"]
        if change:
            obj.save(update_fields=fields or None)
        else:
            obj.save()
        if "max_running" in form.changed_data:
            queue.recount_running(tenant_id=obj.pk)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            _members=Count("members", distinct=True), _jobs=Count("jobs", distinct=True)
        )

    @admin.display(description="members", ordering="_members")
    def member_count(self, obj: WithAnnotations[Tenant, _TenantCounts]) -> int:
        return obj._members

    @admin.display(description="jobs", ordering="_jobs")
    def job_count(self, obj: WithAnnotations[Tenant, _TenantCounts]) -> int:
        return obj._jobs


# What makes a user more than a tenant's member. Only superusers ever change these.
PRIVILEGE_FIELDS = ["is_superuser", "is_staff", "groups", "user_permissions"]


@admin.register(User)
class MemberAdmin(UserAdmin):
    """Superusers manage users. Anyone else let in here (granted ``change_user``) edits
    ordinary fields only: never anyone's privileges, never a superuser's account, never
    another user's password, never its own tenant (which would let it act as that tenant).

    The limits are in the form (read-only fields) *and* in the save (stored values put back,
    whatever was posted), so a forged POST changes nothing either.
    """

    list_display = ["username", "tenant", "email", "is_staff", "is_active", "last_login"]
    list_filter = ["tenant", "is_staff", "is_active"]
    list_select_related = ["tenant"]
    search_fields = ["username", "email", "first_name", "last_name", "tenant__slug"]
    # UserAdmin sets its fieldsets (a tuple); its stub keeps ModelAdmin's "list, tuple or None".
    fieldsets = UserAdmin.fieldsets + (("Tenant", {"fields": ["tenant"]}),)  # type: ignore[operator]
    add_fieldsets = UserAdmin.add_fieldsets + (("Tenant", {"fields": ["tenant"]}),)

    def has_add_permission(self, request):
        # A new member with a password of one's choosing is a way into that tenant.
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields += PRIVILEGE_FIELDS
            if obj is not None and obj.pk == request.user.pk:
                fields.append("tenant")
        return fields

    def save_model(self, request, obj, form, change):
        if not request.user.is_superuser:
            stored = User.objects.filter(pk=obj.pk).first() if change else None
            obj.is_superuser = bool(stored and stored.is_superuser)
            obj.is_staff = bool(stored and stored.is_staff)
            if stored is not None and obj.pk == request.user.pk:
                obj.tenant_id = stored.tenant_id
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        if request.user.is_superuser:
            return super().save_related(request, form, formsets, change)
        user = form.instance
        groups, permissions = list(user.groups.all()), list(user.user_permissions.all())
        super().save_related(request, form, formsets, change)
        user.groups.set(groups)
        user.user_permissions.set(permissions)

    def user_change_password(self, request, id, form_url=""):
        if not request.user.is_superuser and unquote(id) != str(request.user.pk):
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)


if admin.site.is_registered(Group):
    admin.site.unregister(Group)


@admin.register(Group)
class SuperuserGroupAdmin(GroupAdmin):
    """Groups hold permissions, so only superusers see or change them (whatever else is granted)."""

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_add_permission(self, request):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


class TokenAddForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["user", "expires_at"]

    def clean_expires_at(self):
        expires_at = self.cleaned_data["expires_at"]
        if expires_at is not None and expires_at <= queue_clock.now():
            raise forms.ValidationError(
                "An expiry must be in the future (leave it empty for a token that does not expire)."
            )
        return expires_at


class TokenStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("live", "Live"), ("expired", "Expired"), ("revoked", "Revoked")]

    def queryset(self, request, queryset):
        now = queue_clock.now()
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "live":
            return queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now), revoked_at__isnull=True)
        return queryset


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens show only their prefix; the secret is shown once, on the page that issues it.

    Superusers manage everyone's tokens; anyone else granted token permissions sees, issues
    and revokes only its own. Nothing on a token is edited: it is revoked (kept, for audit).
    """

    list_display = ["shown_prefix", "user", "tenant", "status", "created_at", "expires_at", "last_used_at",
                    "revoked_at"]
    list_filter = [TokenStatusFilter, "user__tenant"]
    list_select_related = ["user__tenant"]
    search_fields = ["prefix", "user__username"]
    actions = ["revoke_tokens"]
    change_form_template = "admin/jobs/apitoken/change_form.html"
    # Never the digest: it is all an attacker with the table would need to test guesses.
    shown_fields = ["shown_prefix", "user", "status", "created_at", "expires_at", "last_used_at", "revoked_at"]
    readonly_fields = shown_fields

    def get_queryset(self, request):
        tokens_ = super().get_queryset(request)
        return tokens_ if request.user.is_superuser else tokens_.filter(user=request.user)

    def get_fields(self, request, obj=None):
        return ["user", "expires_at"] if obj is None else self.shown_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = TokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_autocomplete_fields(self, request):
        return ["user"] if request.user.is_superuser else []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = User.objects.filter(pk=request.user.pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # revoke instead: the row is the audit record
        return actions

    def has_change_permission(self, request, obj=None):
        return False  # nothing on a token is edited; revoking needs has_revoke_permission

    def has_revoke_permission(self, request) -> bool:
        return super().has_change_permission(request)

    def has_delete_permission(self, request, obj=None):
        # Only as part of deleting a user; everyone else revokes.
        return request.user.is_superuser

    @admin.display(description="token", ordering="prefix")
    def shown_prefix(self, obj: ApiToken) -> str:
        return f"{obj.prefix}…"

    @admin.display(description="tenant", ordering="user__tenant__slug")
    def tenant(self, obj: ApiToken) -> Tenant | None:
        return obj.user.tenant

    @admin.display(description="status")
    def status(self, obj: ApiToken) -> str:
        if obj.revoked_at is not None:
            return "revoked"
        if obj.expires_at is not None and obj.expires_at <= queue_clock.now():
            return "expired"
        return "live"

    def save_model(self, request, obj, form, change):
        if change:
            raise PermissionDenied
        if obj.user_id != request.user.pk and not request.user.is_superuser:
            raise PermissionDenied  # the form offers only oneself; this is for a forged POST
        # The plain token lives only in this request, for the page that shows it once.
        request._issued_api_token = tokens.issue(obj.user, expires_at=obj.expires_at, row=obj)

    def response_add(self, request, obj, post_url_continue=None):
        secret = getattr(request, "_issued_api_token", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        response = TemplateResponse(request, "admin/jobs/apitoken/issued.html", {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": "API token issued", "token": secret, "original": obj,
        })
        response["Cache-Control"] = "no-store"
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        token = self.get_object(request, object_id)
        revocable = token is not None and token.revoked_at is None and self.has_revoke_permission(request)
        return super().change_view(request, object_id, form_url, {"revocable": revocable, **(extra_context or {})})

    @admin.action(permissions=["revoke"], description="Revoke selected tokens")
    def revoke_tokens(self, request, queryset):
        revoked = tokens.revoke(queryset, now=queue_clock.now())
        for token in ApiToken.objects.filter(pk__in=revoked).select_related("user"):
            self.log_change(request, token, "Revoked.")
        selected = queryset.count()
        self.message_user(
            request, f"Revoked {len(revoked)} of {selected} selected token(s)."
            + (f" {selected - len(revoked)} had been revoked already." if selected > len(revoked) else ""),
            messages.SUCCESS if revoked else messages.WARNING,
        )


# --- Jobs: list ------------------------------------------------------------------------------


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"
    NEEDS_HUMAN = "needs_human"

    def lookups(self, request, model_admin):
        return [(self.NEEDS_HUMAN, "Needs a human (dead or unknown)"), *Job.State.choices]

    def queryset(self, request, queryset):
        if self.value() == self.NEEDS_HUMAN:
            return queryset.needs_human()
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

    def __init__(self, request, params, model, model_admin):
        self.clock = model_admin.clock
        super().__init__(request, params, model, model_admin)

    def lookups(self, request, model_admin):
        return [(key, label) for key, (label, _, _) in self.BANDS.items()]

    def queryset(self, request, queryset):
        band = self.BANDS.get(self.value() or "")
        if band is None:
            return queryset
        _, younger, older = band
        now = self.clock.now()
        queryset = queryset.filter(created_at__lte=now - younger)
        return queryset if older is None else queryset.filter(created_at__gt=now - older)


def short_age(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"


# --- Jobs: triage actions --------------------------------------------------------------------


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
            'job\'s result as it is; any other text is saved as {"note": "…"}. The tenant sees it.'
        ),
    )

    def clean_outcome(self) -> dict[str, Any]:
        text = self.cleaned_data["outcome"]
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
        # The tenant's pages and API read the result back: hold it to what a submitted payload
        # may be (depth, no NUL, no lone surrogate), or it is stored and every read of it fails.
        try:
            http.check_storable(value, "outcome")
        except http.HttpError as exc:
            raise forms.ValidationError(f"This JSON cannot be kept as a result: {exc.detail}.") from None
        return value

    too_deep = f"This JSON nests deeper than {http.MAX_PAYLOAD_DEPTH} levels; a result may not."

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


# --- Jobs: the admin -------------------------------------------------------------------------


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """Dead and unknown jobs first; read-only pages; the triage actions go through the queue."""

    clock = queue_clock  # tests swap in a logical clock

    # The columns staff triage by, narrow enough for 1280 px beside the filters (jobs-admin.css):
    # the kind under the document's name; the epoch, the lease and the keys on the job's page.
    list_display = ["id", "document_column", "tenant_column", "submitter", "state_badge", "attempt_count", "age",
                    "short_error"]
    list_display_links = ["id"]
    list_filter = [StateFilter, "tenant", ("submitted_by", admin.RelatedOnlyFieldListFilter), "kind", AgeFilter]
    list_select_related = ["tenant", "submitted_by"]
    list_per_page = 50
    show_full_result_count = False  # the state counts above the list already say it
    search_fields = ["=operation_key"]
    search_help_text = ("A job id, a submission key (the Idempotency-Key its submitter sent, exactly), or words of "
                        "a document's file name.")
    actions = [RETRY.name, RECONCILE_DONE.name, RECONCILE_NOT_DONE.name, DISCARD.name, CANCEL.name]
    change_list_template = "admin/jobs/job/change_list.html"
    change_form_template = "admin/jobs/job/change_form.html"
    fieldsets = [
        (None, {"fields": ["id", "tenant", "submitted_by", "kind", "state", "attempt_count", "claims",
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
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_triage_permission(self, request) -> bool:
        return request.user.has_perm(f"{self.opts.app_label}.triage_job")

    def may_see_input(self, request) -> bool:
        """Inline text and documents are the tenants' content: superusers, and staff granted
        ``view_document`` on its own (triage does not bring it), see them; each look is logged.
        Triage works from the metadata, the checkpoint and the result."""
        user = request.user
        return user.is_active and (user.is_superuser or user.has_perm(f"{self.opts.app_label}.view_document"))

    # The query-string lookups the declared filters use, and nothing else: Django's default
    # lets any lookup on the job's own fields through (``?payload__text__icontains=...`` would
    # search the tenants' inline text), so everything else is a 400.
    allowed_lookups = frozenset({
        StateFilter.parameter_name, AgeFilter.parameter_name,  # state=, age=
        "tenant__id__exact", "tenant__isnull",  # the tenant filter (RelatedFieldListFilter)
        "submitted_by__id__exact", "submitted_by__isnull",  # the submitter filter (RelatedOnlyFieldListFilter)
        "kind", "kind__isnull",  # the kind filter (AllValuesFieldListFilter)
    })

    def lookup_allowed(self, lookup, value, request=None):
        return lookup in self.allowed_lookups

    def get_fieldsets(self, request, obj=None):
        fieldsets = list(self.fieldsets)
        if obj is not None and obj.state == UNKNOWN:  # right after the job's own lines
            fieldsets.insert(1, ("Evidence: what the outside call was, and when", {
                "fields": ["evidence"],
                "description": "What the job recorded when it started its outside call, to check against the "
                               "provider's own records before reconciling it. Never the document's text or a prompt.",
            }))
        if not self.may_see_input(request):
            return fieldsets
        return [(name, {**options, "fields": [*options["fields"], "input_downloads"]} if name == "Input" else options)
                for name, options in fieldsets]

    def get_ordering(self, request):
        needs_human_first = Case(
            When(state=UNKNOWN, then=Value(0)), When(state=DEAD, then=Value(1)),
            default=Value(2), output_field=IntegerField(),
        )
        return [needs_human_first.asc(), "-id"]

    def get_search_results(self, request, queryset, search_term):
        """Exact id or exact operation key (what a tenant quotes in a support request), or words of
        the document's file name (what it is called). Never the input's content."""
        term = search_term.strip().lstrip("#")
        if not term:
            return queryset, False
        match = Q(operation_key=term) | Q(document_name__icontains=term)
        if term.isdigit() and len(term) < 19:
            match |= Q(pk=int(term))
        return queryset.filter(match), False

    def changelist_view(self, request, extra_context=None):
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

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = self.get_object(request, object_id)
        buttons = []
        if job is not None and self.has_triage_permission(request):
            buttons = [t for t in TRIAGES.values() if job.state in t.from_states]
        shown: dict[str, Any] = {}
        if job is not None and job.document and self.may_see_input(request):
            shown = {"show_document_url": "?document=1#document"}
            if request.method == "GET" and ("document" in request.GET or "page" in request.GET):
                shown["document"] = self.document_pane(request, job)
        words = guidance(job, self.clock.now()) if job is not None else ""
        # The page's read-only fields are rendered with the response: rendered here, while they
        # can tell who is looking (``submitters_page``).
        viewing = _viewer.set(request.user)
        try:
            response = super().change_view(request, object_id, form_url,
                                           {"triage_buttons": buttons, "guidance": words, **shown, **WIDE,
                                            **(extra_context or {})})
            if isinstance(response, TemplateResponse):
                response.render()
            return response
        finally:
            _viewer.reset(viewing)

    def document_pane(self, request, job: Job) -> status.DocumentPane | None:
        """The document beside the result, as its tenant sees it (with the admin's own URLs).
        Opened on request, never by merely opening the job, and each opening is logged."""
        self.log_change(request, job, f"Viewed the document's pages ({job.document_name or 'unnamed'}).")
        return status.document_pane(job, page_url=lambda n: reverse("admin:jobs_job_page", args=[job.pk, n]),
                                    download_url=reverse("admin:jobs_job_document", args=[job.pk]),
                                    requested=request.GET.get("page"))

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<path:object_id>/document/", view(self.document_view), name="jobs_job_document"),
            path("<path:object_id>/pages/<int:number>.png", view(self.page_view), name="jobs_job_page"),
            path("<path:object_id>/payload/", view(self.payload_view), name="jobs_job_payload"),
            *super().get_urls(),
        ]

    # --- list columns

    @admin.display(description="state", ordering="state")
    def state_badge(self, obj: Job) -> str:
        if obj.state in (DEAD, UNKNOWN):
            return format_html('<strong class="job-state job-state-{}">{}</strong>', obj.state, obj.state)
        return obj.state

    @admin.display(description="document / kind", ordering="document_name")
    def document_column(self, obj: Job) -> str:  # not "document": that is the stored file's field
        """The document's name (whole on hover and on the job's page), its job kind under it."""
        if not obj.document_name:
            name = format_html('<span class="job-document">{}</span>', "pasted text" if obj.payload else "—")
        else:
            name = format_html('<span class="job-document" title="{}">{}</span>', obj.document_name,
                               Truncator(obj.document_name).chars(DOCUMENT_NAME_SHOWN))
        return format_html('{}<span class="job-kind">{}</span>', name, obj.kind)

    @admin.display(description="tenant", ordering="tenant__slug")
    def tenant_column(self, obj: Job) -> str:
        return format_html('<span class="job-who">{}</span>', obj.tenant)

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

    # --- the read-only job page

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
        """The tenant's page of this job. Only the tenant's members open it (the same 404 as an unknown id for
        anyone else, staff included), so staff of another tenant get its address, not a dead link."""
        url = reverse("job_detail", args=[obj.pk])
        user = _viewer.get()
        if user is not None and user.tenant_id == obj.tenant_id:
            return format_html('<a href="{}" id="submitters-page">{}</a>: what {} and the other members of {} see',
                               url, url, person(obj.submitted_by), obj.tenant)
        return format_html('<code id="submitters-page">{}</code>: what {} and the other members of {} see; only '
                           "{}'s members can open it, and you are not one", url, person(obj.submitted_by),
                           obj.tenant, obj.tenant)

    @admin.display(description="same document")
    def same_document(self, obj: Job) -> str:
        """The tenant's other jobs of the same file (its SHA-256), newest first: never another tenant's."""
        if not obj.document_sha256:
            return "— (no stored document)"
        others = (Job.objects.filter(tenant_id=obj.tenant_id, document_sha256=obj.document_sha256)
                  .exclude(pk=obj.pk).order_by("-id").only("id", "state", "document_name", "created_at"))
        shown = list(others[:SAME_DOCUMENT_SHOWN])
        if not shown:
            return format_html("none: no other job of {} has this file", obj.tenant)
        now = self.clock.now()
        rows = format_html_join("", '<li><a href="{}">job {}</a> {} — {}, {} ago</li>', (
            (reverse("admin:jobs_job_change", args=[job.pk]), job.pk, job.document_name or "", job.state,
             short_age(now - job.created_at)) for job in shown))
        more = others.count() - len(shown) if len(shown) == SAME_DOCUMENT_SHOWN else 0
        tail = format_html("<p>and {} older</p>", more) if more else ""
        return format_html('<ul class="job-same-document">{}</ul>{}', rows, tail)

    @admin.display(description="evidence")
    def evidence(self, obj: Job) -> str:
        """The outside call's marker (this app's) and what the kind recorded of the call (its hook)."""
        lines = marker_lines(obj)
        spec = kinds.get(obj.kind)
        if spec is None or spec.evidence is None:
            lines.append(("Recorded by the kind", "nothing more: this kind keeps no record of its outside calls"))
        else:
            try:
                lines += spec.evidence(obj.pk)
            except Exception as exc:  # noqa: BLE001  a broken hook must not hide the rest of the page from staff
                lines.append(("Recorded by the kind", f"unavailable: {type(exc).__name__}: {exc}"))
        return format_html('<table class="job-evidence"><tbody>{}</tbody></table>', format_html_join(
            "", '<tr><th scope="row">{}</th><td>{}</td></tr>', lines))

    @admin.display(description="payload")
    def input_summary(self, obj: Job) -> str:
        """Keys and sizes, never the values of text: inline text is the tenant's document."""
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
        if not obj.document:
            return "—"
        return format_html(
            "{} ({}, {} bytes)<br>SHA-256 <code>{}</code>",
            obj.document_name or "document", obj.document_type or "unknown type",
            f"{obj.document_size or 0:,}", obj.document_sha256,
        )

    @admin.display(description="content")
    def input_downloads(self, obj: Job) -> str:
        """Only on superusers' pages (see get_fieldsets); each download is logged."""
        links = [(reverse("admin:jobs_job_payload", args=[obj.pk]), "Download the payload (JSON)")]
        if obj.document:
            links.append((reverse("admin:jobs_job_document", args=[obj.pk]), "Download the document"))
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="checkpoint")
    def kind_progress(self, obj: Job) -> str:
        """The kind's own progress view (the agent's checkpoint), without importing its app."""
        spec = kinds.get(obj.kind)
        if spec is None or spec.progress is None:
            return "— (this kind keeps no checkpoint)"
        try:
            progress = spec.progress(obj.pk)
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

    # --- downloads of the input (superusers only, each one logged)

    def _input_of(self, request, object_id) -> Job:
        if not self.may_see_input(request):
            raise PermissionDenied
        job = self.get_object(request, object_id)
        if job is None:
            raise Http404("no such job")
        return job

    def document_view(self, request, object_id):
        job = self._input_of(request, object_id)
        root = documents.path("").resolve()
        stored = documents.path(job.document).resolve() if job.document else None
        if stored is None or not stored.is_relative_to(root) or not stored.is_file():
            raise Http404("this job has no stored document")
        self.log_change(request, job, f"Downloaded the document ({job.document_name or 'unnamed'}).")
        # An attachment: the browser saves it, never renders a tenant's file in the admin's origin.
        response = FileResponse(stored.open("rb"), as_attachment=True,
                                filename=documents.download_filename(job.document_name),
                                content_type=documents.download_type(job.document_type))
        response["Cache-Control"] = "no-store, private"
        return response

    def page_view(self, request, object_id, number: int):
        """One page image of the job's document (the job page's pane, opened and logged there)."""
        job = self._input_of(request, object_id)
        image = documents.page_image(job.document, number) if job.document else None
        if image is None:
            raise Http404("no such page")
        response = FileResponse(image.open("rb"), content_type=documents.PAGE_MEDIA_TYPE)
        response["Cache-Control"] = "no-store, private"
        return response

    def payload_view(self, request, object_id):
        job = self._input_of(request, object_id)
        self.log_change(request, job, "Downloaded the payload.")
        response = HttpResponse(json.dumps(job.payload, indent=2, ensure_ascii=False), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="job-{job.pk}-payload.json"'
        response["Cache-Control"] = "no-store"
        return response

    # --- actions

    @admin.action(permissions=["triage"], description="Retry selected dead jobs…")
    def retry_dead(self, request, queryset):
        return self._triage(request, queryset, RETRY)

    @admin.action(permissions=["triage"], description="Reconcile selected unknown jobs as done (attach the outcome)…")
    def reconcile_done(self, request, queryset):
        return self._triage(request, queryset, RECONCILE_DONE)

    @admin.action(permissions=["triage"], description="Reconcile selected unknown jobs as not done (requeue)…")
    def reconcile_not_done(self, request, queryset):
        return self._triage(request, queryset, RECONCILE_NOT_DONE)

    @admin.action(permissions=["triage"], description="Discard selected unknown jobs (to dead)…")
    def discard_unknown(self, request, queryset):
        return self._triage(request, queryset, DISCARD)

    @admin.action(permissions=["triage"], description="Cancel selected waiting or running jobs…")
    def cancel_jobs(self, request, queryset):
        return self._triage(request, queryset, CANCEL)

    def _triage(self, request, queryset, triage: Triage):
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
        jobs = list(queryset.select_related("tenant").order_by("pk"))
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

    def _apply(self, request, queryset, triage: Triage, form: ReasonForm) -> None:
        selected = {int(pk) for pk in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME) if pk.isdigit()}
        seen = dict(parse_seen(request.POST.getlist("seen")))
        targets = sorted(queryset.filter(pk__in=seen.keys() & selected).values_list("pk", flat=True))
        reason = form.cleaned_data["reason"]
        actor = f"staff:{request.user.get_username()}"
        states = dict(queryset.filter(pk__in=targets).values_list("pk", "state"))
        moved = [pk for pk in targets
                 if states.get(pk) in triage.from_states
                 and self._move(request, triage, pk, states[pk], seen[pk], actor, reason, form)]
        skipped = sorted(selected - set(moved))
        self.message_user(
            request, f"{triage.verb}: {len(moved)} of {len(selected)} selected job(s) {triage.done} "
            f"({triage.from_state} → {triage.to_state}).",
            messages.SUCCESS if moved else messages.WARNING,
        )
        if skipped:
            ids = ", ".join(f"#{pk}" for pk in skipped[:20]) + (" …" if len(skipped) > 20 else "")
            self.message_user(
                request, f"Skipped {len(skipped)} job(s) no longer {triage.from_state} as you saw them: {ids}.",
                messages.WARNING,
            )

    def _move(self, request, triage: Triage, pk: int, state: str, seen_epoch: int, actor: str, reason: str,
              form: ReasonForm) -> bool:
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


def parse_seen(values: list[str]):
    """``"<id>:<epoch>"`` pairs the confirmation page rendered for the jobs it offered to move."""
    for value in values:
        pk, _, epoch = value.partition(":")
        if pk.isdigit() and epoch.isdigit():
            yield int(pk), int(epoch)


def pretty_json(value: Any) -> str:
    return format_html("<pre class=\"job-json\">{}</pre>", json.dumps(value, indent=2, ensure_ascii=False, default=str))


def person(user: User) -> str:
    """A member by name: the full name when it has one, else the username (never ``user:<id>``)."""
    return user.get_full_name() or user.get_username()


def member_names(events: list[JobEvent]) -> dict[str, str]:
    """``user:<id>`` actors by the member's name, in one query."""
    ids = {int(e.actor[5:]) for e in events if e.actor.startswith("user:") and e.actor[5:].isdigit()}
    return {f"user:{user.pk}": person(user) for user in User.objects.filter(pk__in=ids)}


def utc(moment: Any) -> str:
    return moment.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


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


EXTERNAL_START = "external start: "  # the reason of the marker's event (jobs.queue.mark_external_start)


def guidance(job: Job, now: Any) -> str:
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
                "queue (or to unknown, had it started a provider call).")
    for codes, words in GUIDANCE_BY_FAILURE.get(job.state, ()):
        if job.failure_code in codes:
            return words
    return GUIDANCE.get(job.state, "")


GUIDANCE = {
    QUEUED: "Waiting for a worker: nothing to do (Cancel stops it before it starts).",
    DEAD: "Failed, and nothing will run it again (the last error says why): Retry queues it with fresh attempts and "
          "a new deadline, worth it once the cause has passed (an outage, a lost worker), not for a refused document.",
    UNKNOWN: "A provider call started and never settled, so nobody knows whether the provider did it: check the "
             "evidence below with the provider, then reconcile as done (with its outcome) if it did, or as not "
             "done to run it again if it did not.",
    COMPLETED: "Done: nothing to do. The result below is what its submitter sees.",
    CANCELLED: "Cancelled: nothing to do, and nothing runs it again.",
}
# What a dead or unknown job's failure code (jobs.queue.FailureCode, or the kind's JobFailed.code)
# changes in that line; codes not here get the state's line.
GUIDANCE_BY_FAILURE: dict[str, tuple[tuple[frozenset[str], str], ...]] = {
    UNKNOWN: (
        (frozenset({"planner_timeout", "model_timeout", "time_limit"}),
         "The provider did not answer in time. A timeout during a provider outage: the provider did nothing you "
         "can see, and reconciling as not done reruns it; if its records show the call below answered, reconcile "
         "as done with its outcome."),
        (frozenset({"lease_expired", "handler_crashed", "stopped", "shutdown"}),
         "Its worker was lost while the provider call below was in flight: ask the provider about its idempotency "
         "key, then reconcile as done (with its outcome) if it answered, or as not done to run it again."),
        (frozenset({"planner_error", "model_error"}),
         "The connection to the provider broke after the call below was sent: ask the provider about its "
         "idempotency key, then reconcile as done (with its outcome) if it answered, or as not done to run it "
         "again."),
    ),
    DEAD: (
        (frozenset({"too_large", "too_complex", "unpacks_too_large", "damaged_document", "unsupported_media_type",
                    "nothing_to_review", "memory_limit", "cpu_limit", "too_deep"}),
         "Its document was refused or is beyond the review's limits (the last error says why): Retry would fail "
         "the same way; its submitter has to send another file."),
        (frozenset({"deadline", "deadline_passed", "no_time_left"}),
         "It ran out of time before its deadline: Retry queues it with fresh attempts and a new deadline, worth it "
         "once the workers can take it in time."),
        (frozenset({"discarded"}),
         "Staff discarded it when its outcome was unknown (the timeline says who and why): Retry runs it again."),
    ),
}
