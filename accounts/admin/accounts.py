"""Tenants, their members and the groups: who may do what, and how tenants share the workers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse

from jobs import queue

from ..models import Tenant, User

if TYPE_CHECKING:
    from django.utils.datastructures import _ListOrTuple
    from django_stubs_ext import WithAnnotations

    TenantModelAdmin = admin.ModelAdmin[Tenant]
    MemberUserAdmin = UserAdmin[User]
else:  # the admin's classes take no type parameters at run time
    TenantModelAdmin = admin.ModelAdmin
    MemberUserAdmin = UserAdmin


class _TenantCounts(TypedDict):
    """What TenantAdmin's queryset annotates each tenant with."""

    _members: int
    _jobs: int


@admin.register(Tenant)
class TenantAdmin(TenantModelAdmin):
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

    def save_model(self, request: HttpRequest, obj: Tenant, form: Any, change: bool) -> None:
        # The running count is the queue's to keep: never written back from this form.
        fields = [name for name in form.changed_data if name != "running"]
        if change:
            obj.save(update_fields=fields or None)
        else:
            obj.save()
        if "max_running" in form.changed_data:
            queue.recount_running(scope_id=obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tenant]:
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
class MemberAdmin(MemberUserAdmin):
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
    fieldsets = (*UserAdmin.fieldsets, ("Tenant", {"fields": ["tenant"]}))  # type: ignore[misc]
    add_fieldsets = (*UserAdmin.add_fieldsets, ("Tenant", {"fields": ["tenant"]}))

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A new member with a password of one's choosing is a way into that tenant.
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> _ListOrTuple[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields += PRIVILEGE_FIELDS
            if obj is not None and obj.pk == request.user.pk:
                fields.append("tenant")
        return fields

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        if not request.user.is_superuser:
            stored = User.objects.filter(pk=obj.pk).first() if change else None
            obj.is_superuser = bool(stored and stored.is_superuser)
            obj.is_staff = bool(stored and stored.is_staff)
            if stored is not None and obj.pk == request.user.pk:
                obj.tenant_id = stored.tenant_id
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if request.user.is_superuser:
            super().save_related(request, form, formsets, change)
            return
        user = form.instance
        groups, permissions = list(user.groups.all()), list(user.user_permissions.all())
        super().save_related(request, form, formsets, change)
        user.groups.set(groups)
        user.user_permissions.set(permissions)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        if not request.user.is_superuser and unquote(id) != str(request.user.pk):
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)


if admin.site.is_registered(Group):
    admin.site.unregister(Group)


@admin.register(Group)
class SuperuserGroupAdmin(GroupAdmin):
    """Groups hold permissions, so only superusers see or change them (whatever else is granted)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Group | None = None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Group | None = None) -> bool:
        return request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Group | None = None) -> bool:
        return request.user.is_superuser
