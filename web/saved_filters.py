"""A member's saved filters of the list: save the current ones under a name (the same name again
replaces them), pick one again, delete one. Each read and write is scoped to the member and her
tenant; the query kept is the list's own validated one, never an address as typed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.http import QueryDict

from . import schemas
from .edge import HttpError
from .models import MAX_NAME, MAX_QUERY, MAX_SAVED, SavedFilter
from .parsing import validated


class FilterRefused(ValueError):
    """What the member asked cannot be kept; the message says why, in her words."""


@dataclass(frozen=True)
class Shown:
    """A saved filter as the list shows it: its name, its query, whether the list shows it now."""

    id: int
    name: str
    query: str
    current: bool


def list_query(text: str) -> str:
    """The list's filters in ``text`` (a query string) as the list keeps them, without the page;
    ``FilterRefused`` when the list would not read them."""
    try:
        query = validated(schemas.JobListQuery, QueryDict(text[:MAX_QUERY]).dict())
    except HttpError:
        raise FilterRefused("These filters could not be read, so they were not saved.") from None
    return urlencode(query.params())


def saved_filters(*, tenant_id: int | None, user_id: int, current: str = "") -> list[Shown]:
    if tenant_id is None:
        return []
    rows = SavedFilter.objects.filter(tenant_id=tenant_id, user_id=user_id).only("id", "name", "query")
    return [Shown(row.pk, row.name, row.query, row.query == current) for row in rows[:MAX_SAVED]]


def save_filter(*, tenant_id: int | None, user_id: int, name: str, query: str, now: datetime) -> bool:
    """Keep ``query`` under ``name`` for this member: True when it is new, False when it replaced
    the filters of that name. ``FilterRefused``: no name, or as many kept as a member may."""
    if tenant_id is None:
        raise FilterRefused("Your account belongs to no team, so it has no list to filter.")
    name = " ".join(name.split())
    if not name:
        raise FilterRefused("Give these filters a name to save them.")
    if len(name) > MAX_NAME:
        raise FilterRefused(f"A name of at most {MAX_NAME} characters, please.")
    query = list_query(query)
    mine = SavedFilter.objects.filter(tenant_id=tenant_id, user_id=user_id)
    with transaction.atomic():
        if mine.filter(name=name).update(query=query, updated_at=now):
            return False
        if mine.count() >= MAX_SAVED:
            raise FilterRefused(f"You have {MAX_SAVED} saved filters, the most one can keep: delete one first.")
        try:
            with transaction.atomic():  # a savepoint: a second save of the same name at the same moment
                SavedFilter.objects.create(tenant_id=tenant_id, user_id=user_id, name=name, query=query,
                                           created_at=now, updated_at=now)
        except IntegrityError:
            mine.filter(name=name).update(query=query, updated_at=now)
            return False
    return True


def delete_filter(*, tenant_id: int | None, user_id: int, filter_id: int) -> str | None:
    """Delete one of this member's saved filters: its name, or None when she has none of that id."""
    if tenant_id is None:
        return None
    found = SavedFilter.objects.filter(pk=filter_id, tenant_id=tenant_id, user_id=user_id).only("name").first()
    if found is None or not SavedFilter.objects.filter(pk=found.pk, tenant_id=tenant_id, user_id=user_id).delete()[0]:
        return None
    return found.name
