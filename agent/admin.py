"""A tenant's review settings: whether the model provider may read its documents.

Least privilege: the page needs only ``view_reviewsettings`` to look and
``change_reviewsettings`` to change. A tenant without a row has the defaults (off), so adding
its row is changing its setting and takes the same permission; a row is never deleted (switch
it off instead), and its tenant never changes. The Triage group is not given these
permissions: sending a tenant's documents to an outside provider is not a triage decision.
Every change is in the admin's log and on the row (who, when).
"""

from __future__ import annotations

from django.contrib import admin

from jobs.models import Tenant

from .models import ReviewSettings


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(admin.ModelAdmin):
    list_display = ["tenant", "provider_may_read", "updated_at", "updated_by"]
    list_filter = ["provider_may_read"]
    list_select_related = ["tenant", "updated_by"]
    search_fields = ["tenant__slug", "tenant__name"]
    fields = ["tenant", "provider_may_read", "updated_at", "updated_by"]

    def get_readonly_fields(self, request, obj=None):
        # A row belongs to its tenant for good: moving it would switch another tenant's setting.
        return ["updated_at", "updated_by"] + (["tenant"] if obj is not None else [])

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant":  # only tenants still on the defaults
            kwargs["queryset"] = Tenant.objects.filter(review_settings__isnull=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request):
        return self.has_change_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)
