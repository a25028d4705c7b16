"""API tokens: shown by prefix only, issued once, revoked rather than edited or deleted."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import ForeignKey, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from jobs.clock import queue_clock

from .. import tokens
from ..members import member
from ..models import ApiToken, Tenant, User

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups
    from django.forms import ModelChoiceField
    from django.utils.datastructures import _ListOrTuple

    TokenModelAdmin = admin.ModelAdmin[ApiToken]
    TokenModelForm = forms.ModelForm[ApiToken]
else:  # the admin's and the forms' classes take no type parameters at run time
    TokenModelAdmin = admin.ModelAdmin
    TokenModelForm = forms.ModelForm



class TokenAddForm(TokenModelForm):
    class Meta:
        model = ApiToken
        fields = ["user", "expires_at"]

    def clean_expires_at(self) -> datetime | None:
        expires_at: datetime | None = self.cleaned_data["expires_at"]
        if expires_at is not None and expires_at <= queue_clock.now():
            raise forms.ValidationError(
                "An expiry must be in the future (leave it empty for a token that does not expire)."
            )
        return expires_at


class TokenStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Iterable[tuple[str, str]]:
        return [("live", "Live"), ("expired", "Expired"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        now = queue_clock.now()
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "live":
            return queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now), revoked_at__isnull=True)
        return queryset


@admin.register(ApiToken)
class ApiTokenAdmin(TokenModelAdmin):
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
    change_form_template = "admin/accounts/apitoken/change_form.html"
    # Never the digest: it is all an attacker with the table would need to test guesses.
    shown_fields = ["shown_prefix", "user", "status", "created_at", "expires_at", "last_used_at", "revoked_at"]
    readonly_fields = shown_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiToken]:
        tokens_ = super().get_queryset(request)
        return tokens_ if request.user.is_superuser else tokens_.filter(user=member(request))

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> _FieldGroups:
        return ("user", "expires_at") if obj is None else tuple(self.shown_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> _ListOrTuple[str]:
        return [] if obj is None else self.readonly_fields

    def get_form(self, request: HttpRequest, obj: ApiToken | None = None, change: bool = False,
                 **kwargs: Any) -> type[forms.ModelForm[ApiToken]]:
        if obj is None:
            kwargs["form"] = TokenAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_autocomplete_fields(self, request: HttpRequest) -> _ListOrTuple[str]:
        return ["user"] if request.user.is_superuser else []

    def formfield_for_foreignkey(self, db_field: ForeignKey[Any, Any], request: HttpRequest,
                                 **kwargs: Any) -> ModelChoiceField[Any] | None:
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = User.objects.filter(pk=member(request).pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # revoke instead: the row is the audit record
        return actions

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False  # nothing on a token is edited; revoking needs has_revoke_permission

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return super().has_change_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
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

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            raise PermissionDenied
        if obj.user_id != request.user.pk and not request.user.is_superuser:
            raise PermissionDenied  # the form offers only oneself; this is for a forged POST
        # The plain token lives only in this request, for the page that shows it once.
        request._issued_api_token = tokens.issue(obj.user, expires_at=obj.expires_at, row=obj)  # type: ignore[attr-defined]

    def response_add(self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None) -> HttpResponse:
        secret = getattr(request, "_issued_api_token", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        response = TemplateResponse(request, "admin/accounts/apitoken/issued.html", {
            **self.admin_site.each_context(request),
            "opts": self.opts, "title": "API token issued", "token": secret, "original": obj,
        })
        response["Cache-Control"] = "no-store"
        return response

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        token = self.get_object(request, object_id)
        revocable = token is not None and token.revoked_at is None and self.has_revoke_permission(request)
        return super().change_view(request, object_id, form_url, {"revocable": revocable, **(extra_context or {})})

    @admin.action(permissions=["revoke"], description="Revoke selected tokens")
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = tokens.revoke(queryset, now=queue_clock.now())
        for token in ApiToken.objects.filter(pk__in=revoked).select_related("user"):
            self.log_change(request, token, "Revoked.")
        selected = queryset.count()
        self.message_user(
            request, f"Revoked {len(revoked)} of {selected} selected token(s)."
            + (f" {selected - len(revoked)} had been revoked already." if selected > len(revoked) else ""),
            messages.SUCCESS if revoked else messages.WARNING,
        )
