"""Tenants and their members, and the staff who triage their jobs."""

from __future__ import annotations

import secrets
from typing import cast

from django.contrib.auth.models import Group, Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils.text import slugify

from .models import Tenant, User

TRIAGE_GROUP = "Triage"
# What triage needs and nothing else: see jobs (the list, a job's page with its timeline and
# checkpoint) and move the ones that need a human. Not users, groups, tokens or tenants, and
# not the jobs' input (inline text and documents are the tenants' content: superusers see them,
# and staff a superuser grants ``jobs.view_document`` on its own; see jobs.admin).
TRIAGE_PERMISSIONS = [("jobs", "view_job"), ("jobs", "triage_job")]


def triage_group() -> Group:
    """The "Triage" group, made with its permissions the first time it is needed.

    Made at use rather than by a data migration: permissions are created after all
    migrations have run (post_migrate), so a migration on a fresh database would find none,
    and a database flushed by tests would lose the group. An existing group is left as
    superusers have set it: granting or withholding a permission there is their decision.
    """
    group, created = Group.objects.get_or_create(name=TRIAGE_GROUP)
    if created:
        wanted = Permission.objects.none()
        for app_label, codename in TRIAGE_PERMISSIONS:
            wanted |= Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        group.permissions.set(wanted)
    return group


def create_member(*, username: str, tenant_slug: str, password: str | None = None,
                  staff: bool = False) -> tuple[User, str]:
    """Create the user in the tenant (made if missing); return it and its password.

    Staff are triage members (in the Triage group), never administrators of users or tokens.
    A given password must pass the site's password validators; a generated one is 22
    random URL-safe characters, which passes Django's whole default set.
    """
    slug = slugify(tenant_slug)
    if not slug or slug != tenant_slug:
        raise ValueError(f"tenant slug {tenant_slug!r} must be lowercase letters, digits and hyphens")
    if User.objects.filter(username=username).exists():
        raise ValueError(f"a user named {username!r} already exists")
    password = password or secrets.token_urlsafe(16)
    try:
        validate_password(password, User(username=username))
    except ValidationError as exc:
        raise ValueError("the password is refused: " + " ".join(exc.messages)) from None
    with transaction.atomic():
        tenant, _ = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug.title()})
        user = User.objects.create_user(username=username, password=password, tenant=tenant, is_staff=staff)
        if staff:
            user.groups.add(triage_group())
    return user, password


def member(request: HttpRequest) -> User:
    """Who is using the admin: always a signed-in member (the admin site lets no one else in)."""
    return cast("User", request.user)
