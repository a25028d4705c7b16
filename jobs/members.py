"""Tenants and their members."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils.text import slugify

from .models import Tenant, User


def create_member(*, username: str, tenant_slug: str, password: str | None = None,
                  staff: bool = False) -> tuple[User, str]:
    """Create the user in the tenant (made if missing); return it and its password."""
    slug = slugify(tenant_slug)
    if not slug or slug != tenant_slug:
        raise ValueError(f"tenant slug {tenant_slug!r} must be lowercase letters, digits and hyphens")
    if User.objects.filter(username=username).exists():
        raise ValueError(f"a user named {username!r} already exists")
    password = password or secrets.token_urlsafe(12)
    with transaction.atomic():
        tenant, _ = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug.title()})
        user = User.objects.create_user(username=username, password=password, tenant=tenant, is_staff=staff)
        if staff:
            from django.contrib.auth.models import Permission

            user.user_permissions.add(*Permission.objects.filter(content_type__app_label="jobs"))
    return user, password
