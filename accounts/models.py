"""The product's accounts: tenants (the queue's scopes, by the product's name), their members,
and the API tokens members call the API with.

The tables are the ones these models had in the queue's app (``jobs_tenant``, ``jobs_user``,
``jobs_apitoken``): the models moved, the rows did not (``accounts.migrations``).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _

from jobs.models import Scope


class Tenant(Scope):
    """A customer organisation: a scope of the queue, so its jobs share the workers fairly with
    other tenants' and are kept apart from theirs."""

    class Meta:
        proxy = True


class User(AbstractUser):
    """A person who belongs to exactly one tenant; identity alone decides the tenant."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, null=True, blank=True, related_name="members")

    class Meta:
        db_table = "jobs_user"  # the table it had in the queue's app
        verbose_name = _("user")  # AbstractUser's names, translated as Django's own are
        verbose_name_plural = _("users")

    @property
    def scope_id(self) -> int | None:
        """The user's tenant by the queue's name: its admin's job page asks whether staff are
        members of the job's scope (``jobs.admin.job_page``)."""
        return self.tenant_id


class ApiToken(models.Model):
    """A bearer token for API clients. Only the SHA-256 of the secret is kept.

    A revoked token keeps its row (who had it, when it was last used, when it was revoked):
    revocation is an audit fact, not a deletion.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    prefix = models.CharField(max_length=12, help_text="The first characters, to tell tokens apart.")
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(
        null=True, blank=True, help_text="When it last authenticated a request (to the minute)."
    )
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: the token does not expire.")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "jobs_apitoken"  # the table it had in the queue's app

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
