from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .models import ApiToken, Job, JobEvent, Tenant, User


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]


@admin.register(User)
class MemberAdmin(UserAdmin):
    list_display = ["username", "tenant", "is_staff", "is_active"]
    list_filter = ["tenant", "is_staff"]
    fieldsets = UserAdmin.fieldsets + (("Tenant", {"fields": ["tenant"]}),)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "created_at", "last_used_at"]
    fields = ["prefix", "user", "created_at", "last_used_at"]
    readonly_fields = fields


class JobEventInline(admin.TabularInline):
    model = JobEvent
    fields = ["at", "from_state", "to_state", "epoch", "actor", "reason"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "tenant", "kind", "state", "attempts", "epoch", "created_at"]
    list_filter = ["state", "kind", "tenant"]
    inlines = [JobEventInline]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]
