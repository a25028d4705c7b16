"""What a member keeps of the list: the filters she saved under a name, to pick again."""

from __future__ import annotations

from django.conf import settings
from django.db import models

# A name fits a chip; a member keeps a handful, not hundreds.
MAX_NAME = 60
MAX_SAVED = 20
MAX_QUERY = 1000


class SavedFilter(models.Model):
    """One member's named set of the list's filters: its query string as the list validated it
    (``web.schemas.JobListQuery.params``), never as it was typed in an address. Scoped to the
    member and her tenant: a member who changes team sees none of the old team's."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="+", db_index=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    name = models.CharField(max_length=MAX_NAME)
    query = models.CharField(max_length=MAX_QUERY, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user", "name"], name="saved_filter_name_once")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
