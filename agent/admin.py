"""A tenant's review settings: whether the model provider may read its documents.

Least privilege: the page needs only ``view_reviewsettings`` to look and
``change_reviewsettings`` to change. A tenant without a row has the defaults (off), so adding
its row is changing its setting and takes the same permission; a row is never deleted (switch
it off instead), and its tenant never changes. The Triage group is not given these
permissions: sending a tenant's documents to an outside provider is not a triage decision.
Every change is in the admin's log and on the row (who, when).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.db.models import ForeignKey, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from accounts.members import member
from accounts.models import Tenant
from jobs.models import Job

from .models import ReviewSettings, WebhookEndpoint

if TYPE_CHECKING:
    from django.forms import ModelChoiceField

    SettingsModelAdmin = admin.ModelAdmin[ReviewSettings]
    EndpointModelAdmin = admin.ModelAdmin[WebhookEndpoint]
    EndpointModelForm = forms.ModelForm[WebhookEndpoint]
else:  # the admin's and the forms' classes take no type parameters at run time
    SettingsModelAdmin = EndpointModelAdmin = admin.ModelAdmin
    EndpointModelForm = forms.ModelForm

DELIVERIES_SHOWN = 20


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(SettingsModelAdmin):
    list_display = ["tenant", "provider_may_read", "updated_at", "updated_by"]
    list_filter = ["provider_may_read"]
    list_select_related = ["tenant", "updated_by"]
    search_fields = ["tenant__slug", "tenant__name"]
    fields = ["tenant", "provider_may_read", "updated_at", "updated_by"]

    def get_readonly_fields(self, request: HttpRequest, obj: ReviewSettings | None = None) -> list[str]:
        # A row belongs to its tenant for good: moving it would switch another tenant's setting.
        return ["updated_at", "updated_by"] + (["tenant"] if obj is not None else [])

    def formfield_for_foreignkey(self, db_field: ForeignKey[Any, Any], request: HttpRequest,
                                 **kwargs: Any) -> ModelChoiceField[Any] | None:
        if db_field.name == "tenant":  # only tenants still on the defaults
            kwargs["queryset"] = Tenant.objects.filter(review_settings__isnull=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_change_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: ReviewSettings | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ReviewSettings, form: Any, change: bool) -> None:
        obj.updated_by = member(request)
        super().save_model(request, obj, form, change)


class WebhookForm(EndpointModelForm):
    """An endpoint's URL and events, as its tenant's admin sets them (``/account/webhooks``): the
    URL checked as every delivery checks it, so a refused one is never saved."""

    url = forms.URLField(max_length=500, assume_scheme="https",
                         help_text=WebhookEndpoint._meta.get_field("url").help_text)

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "document_finished", "document_needs_action"]

    def clean_url(self) -> str:
        from .inbox.webhooks import UnsafeURL, target

        url: str = self.cleaned_data["url"]
        try:
            target(url)  # http(s) only, and a public address unless the setting allows others (SSRF)
        except UnsafeURL as exc:
            raise forms.ValidationError(str(exc)) from None
        return url


class WebhookEndpointForm(WebhookForm):
    """Staff's: any tenant's endpoint. Never its secret: one is made when the endpoint is added and
    by the rotate action, each shown once, and only its prefix afterwards."""

    class Meta:
        model = WebhookEndpoint
        fields = ["tenant", "url", "document_finished", "document_needs_action", "active"]


SECRET_PREFIX = 10  # characters of a secret the admin shows: "whsec_" and four, to tell them apart


def secret_prefix(secret: str) -> str:
    return f"{secret[:SECRET_PREFIX]}…" if secret else "-"


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(EndpointModelAdmin):
    """A tenant's webhook endpoints, set by staff for it, with the deliveries each one was sent:
    every delivery is a ``webhook.deliver`` job, so its state, attempts and errors are the job's
    (and an ``unknown`` one is triaged like any other)."""

    form = WebhookEndpointForm
    list_display = ["id", "tenant", "url", "secret_shown", "document_finished", "document_needs_action", "active",
                    "created_at"]
    list_filter = ["active", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["tenant__slug", "url"]
    readonly_fields = ["secret_shown", "created_at", "deliveries"]
    actions = ["rotate_secret"]

    @admin.display(description="secret")
    def secret_shown(self, obj: WebhookEndpoint) -> str:
        """Its prefix only, whatever the viewer may do: a secret signs events any receiver trusts."""
        return secret_prefix(obj.secret)

    def save_model(self, request: HttpRequest, obj: WebhookEndpoint, form: Any, change: bool) -> None:
        from .inbox.webhooks import new_secret

        if not change:
            obj.secret = new_secret()
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: WebhookEndpoint,
                     post_url_continue: str | None = None) -> HttpResponse:
        return self.shown_once(request, [obj], "The new endpoint's signing secret")

    @admin.action(description="Make a new signing secret for the selected endpoints (shown once)",
                  permissions=["change"])
    def rotate_secret(self, request: HttpRequest,
                      queryset: QuerySet[WebhookEndpoint]) -> TemplateResponse | None:
        from .inbox.webhooks import new_secret

        rotated = []
        for found in queryset:
            fresh = new_secret()
            # Only over the secret this action read: a rotation made meanwhile is not overwritten unseen.
            if WebhookEndpoint.objects.filter(pk=found.pk, secret=found.secret).update(secret=fresh):
                found.secret = fresh
                self.log_change(request, found, "Made a new signing secret.")
                rotated.append(found)
        if not rotated:
            self.message_user(request, "No secret was changed: they changed meanwhile.", messages.WARNING)
            return None
        return self.shown_once(request, rotated, "New signing secrets")

    def shown_once(self, request: HttpRequest, endpoints: list[WebhookEndpoint], title: str) -> TemplateResponse:
        """The secrets, in this answer only (never stored in a message or shown again)."""
        return TemplateResponse(request, "admin/agent/webhookendpoint/secrets_shown_once.html", {
            **self.admin_site.each_context(request), "title": title, "opts": self.model._meta,
            "endpoints": endpoints,
        })

    @admin.display(description="latest deliveries")
    def deliveries(self, obj: WebhookEndpoint) -> str:
        from .inbox.webhooks import KIND_NAME

        if obj.pk is None:
            return "-"
        jobs = (Job.objects.filter(kind=KIND_NAME, scope_id=obj.tenant_id, payload__endpoint=obj.pk)
                .order_by("-id").values("id", "state", "payload", "attempts", "last_error")[:DELIVERIES_SHOWN])
        if not jobs:
            return "none yet"
        return format_html("<ul>{}</ul>", format_html_join("", "<li><a href=\"{}\">job {}</a>: {} of job {}, {} "
                                                               "({} attempts) {}</li>", (
            (reverse("admin:jobs_job_change", args=[j["id"]]), j["id"], j["payload"].get("event"),
             j["payload"].get("job"), j["state"], j["attempts"], j["last_error"]) for j in jobs)))
