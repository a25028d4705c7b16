"""createmember: passwords pass the site's validators; --staff makes a triage member."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.password_validation import get_password_validators, validate_password
from django.core.management import CommandError, call_command

from accounts.members import TRIAGE_GROUP
from accounts.models import Tenant, User

# Django's default set, as `startproject` writes it.
DJANGO_DEFAULT_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]


def createmember(*args: str) -> str:
    out = StringIO()
    call_command("createmember", *args, stdout=out)
    return out.getvalue()


def test_a_password_the_validators_refuse_is_refused_and_nothing_is_made(db):
    refusal = "This password is too short. It must contain at least 8 characters."
    with pytest.raises(CommandError, match=re.escape(refusal)):
        createmember("weak", "--tenant", "newco", "--password", "a")
    assert not User.objects.filter(username="weak").exists()
    assert not Tenant.objects.filter(slug="newco").exists()


def test_the_error_lists_every_validators_message(db, settings):
    settings.AUTH_PASSWORD_VALIDATORS = DJANGO_DEFAULT_VALIDATORS
    with pytest.raises(CommandError) as refused:
        createmember("weak", "--tenant", "acme", "--password", "1234567")
    message = str(refused.value)
    for part in ("too short", "too common", "entirely numeric"):
        assert part in message, message


def test_the_password_is_checked_against_the_user_it_is_for(db, settings):
    settings.AUTH_PASSWORD_VALIDATORS = DJANGO_DEFAULT_VALIDATORS
    with pytest.raises(CommandError, match="too similar to the username"):
        createmember("margaretha", "--tenant", "acme", "--password", "margaretha1")
    assert not User.objects.filter(username="margaretha").exists()


def test_a_generated_password_passes_djangos_whole_default_set(db, settings):
    settings.AUTH_PASSWORD_VALIDATORS = DJANGO_DEFAULT_VALIDATORS
    for n in range(20):
        printed = createmember(f"member{n}", "--tenant", "acme")
        password = printed.rsplit("password: ", 1)[1].strip()
        user = User.objects.get(username=f"member{n}")
        validate_password(password, user, get_password_validators(DJANGO_DEFAULT_VALIDATORS))
        assert user.check_password(password)


def test_staff_are_made_triage_members(db):
    printed = createmember("triage", "--tenant", "ops", "--staff", "--password", "long-enough-pass")
    assert printed.startswith("triage (ops, staff) password: long-enough-pass")
    user = User.objects.get(username="triage")
    assert user.is_staff and not user.is_superuser
    assert [g.name for g in user.groups.all()] == [TRIAGE_GROUP]
    assert user.get_all_permissions() == {"jobs.view_job", "jobs.triage_job"}
