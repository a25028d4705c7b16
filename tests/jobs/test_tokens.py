"""API tokens: live, expired or revoked; last use recorded at most once a minute; createtoken."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts import tokens
from accounts.models import ApiToken
from jobs.clock import queue_clock, system_clock
from tests.conftest import processes_together


def row(secret: str) -> ApiToken:
    return ApiToken.objects.get(digest=tokens.digest(secret))


# --- which tokens authenticate


def test_a_token_authenticates_its_user_and_only_its_digest_is_stored(alice, clock):
    secret = tokens.issue(alice)
    assert tokens.user_for(secret, now=clock.now()) == alice
    stored = row(secret)
    assert stored.prefix == secret[:10] and secret not in (stored.digest, stored.prefix)


@pytest.mark.parametrize("presented", ["", "jq_", "jq_not-a-token", "Bearer jq_x", "a" * 60])
def test_an_unknown_token_authenticates_nobody(alice, clock, presented):
    tokens.issue(alice)
    assert tokens.user_for(presented, now=clock.now()) is None


def test_a_token_expires_at_its_expiry(alice, clock):
    secret = tokens.issue(alice, expires_at=clock.now() + timedelta(days=90))
    clock.advance(days=90, seconds=-1)
    assert tokens.user_for(secret, now=clock.now()) == alice
    clock.advance(seconds=1)
    assert tokens.user_for(secret, now=clock.now()) is None


def test_a_revoked_token_authenticates_nobody_and_its_row_is_kept(alice, bob, clock):
    alices, bobs = tokens.issue(alice), tokens.issue(bob)
    assert tokens.revoke(ApiToken.objects.filter(user=alice), now=clock.now()) == [row(alices).pk]
    assert tokens.user_for(alices, now=clock.now()) is None
    assert tokens.user_for(bobs, now=clock.now()) == bob
    assert row(alices).revoked_at == clock.now()


def test_revoking_a_revoked_token_changes_nothing(alice, clock):
    secret = tokens.issue(alice)
    first = clock.now()
    tokens.revoke(ApiToken.objects.all(), now=first)
    clock.advance(hours=1)
    assert tokens.revoke(ApiToken.objects.all(), now=clock.now()) == []
    assert row(secret).revoked_at == first


def test_an_inactive_users_token_authenticates_nobody(alice, clock):
    secret = tokens.issue(alice)
    alice.is_active = False
    alice.save()
    assert tokens.user_for(secret, now=clock.now()) is None


def test_expired_revoked_and_unknown_tokens_get_the_same_401(alice, clock):
    expired = tokens.issue(alice, expires_at=system_clock.now() - timedelta(seconds=1))
    revoked = tokens.issue(alice)
    tokens.revoke(ApiToken.objects.filter(digest=tokens.digest(revoked)), now=system_clock.now())
    answers = []
    for secret in (expired, revoked, tokens.PREFIX + "x" * 43):
        response = Client(headers={"Authorization": f"Bearer {secret}"}).get("/jobs")
        answers.append((response.status_code, response.json()))
    assert answers[0][0] == 401 and answers[0][1]["error"] == "invalid_token"
    assert answers[0] == answers[1] == answers[2]
    live = Client(headers={"Authorization": f"Bearer {tokens.issue(alice)}"}).get("/jobs")
    assert live.status_code == 200


# --- last use


def test_the_first_use_records_when_and_later_uses_at_most_once_a_minute(alice, clock):
    secret = tokens.issue(alice)
    assert row(secret).last_used_at is None
    first = clock.now()
    tokens.user_for(secret, now=first)
    assert row(secret).last_used_at == first

    clock.advance(seconds=59)
    tokens.user_for(secret, now=clock.now())
    assert row(secret).last_used_at == first

    clock.advance(seconds=2)
    tokens.user_for(secret, now=clock.now())
    assert row(secret).last_used_at == clock.now()


def test_a_use_within_the_minute_is_a_single_read(alice, clock, django_assert_num_queries):
    secret = tokens.issue(alice)
    tokens.user_for(secret, now=clock.now())
    clock.advance(seconds=30)
    with django_assert_num_queries(1):
        assert tokens.user_for(secret, now=clock.now()) == alice


def test_a_failed_authentication_records_no_use(alice, clock):
    secret = tokens.issue(alice, expires_at=clock.now())
    assert tokens.user_for(secret, now=clock.now()) is None
    assert row(secret).last_used_at is None


def test_touch_writes_only_when_the_last_recorded_use_is_a_minute_old(alice, clock):
    token = row(tokens.issue(alice))
    assert tokens.touch(token.pk, now=clock.now())
    assert not tokens.touch(token.pk, now=clock.now() + timedelta(seconds=60))
    assert tokens.touch(token.pk, now=clock.now() + timedelta(seconds=60, microseconds=1))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_of_many_processes_recording_a_use_at_once_exactly_one_writes(alice, clock, tmp_path):
    """Eight requests with one token in the same instant: the conditional UPDATE lets one write."""
    token = row(tokens.issue(alice))
    parties = 8
    argv = ["touch_token", str(token.pk), clock.now().isoformat(), str(tmp_path), str(parties)]
    outputs = [out.strip() for out in processes_together(*[argv] * parties)]
    assert sorted(outputs) == ["False"] * (parties - 1) + ["True"]
    assert ApiToken.objects.get(pk=token.pk).last_used_at == clock.now()


# --- createtoken


def createtoken(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("createtoken", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_createtoken_prints_only_the_token_on_stdout(alice, capsys):
    out, _ = createtoken("alice")
    assert out.startswith(tokens.PREFIX) and out.count("\n") == 1 and len(out.split()) == 1
    assert tokens.user_for(out.strip()) == alice
    assert row(out.strip()).expires_at is None
    assert "shown only this once" in capsys.readouterr().err


def test_createtoken_expires_after_the_lifetime_given(alice, capsys):
    # The command dates the token by the queue's clock (the database's): read on the same clock,
    # not on this host's, which may differ from it by the clock's calibration.
    before = queue_clock.now()
    out, _ = createtoken("alice", "--expires", "90d")
    after = queue_clock.now()
    expires_at = row(out.strip()).expires_at
    assert before + timedelta(days=90) <= expires_at <= after + timedelta(days=90)
    assert len(out.split()) == 1 and "expires at" in capsys.readouterr().err

    out, _ = createtoken("alice", "--expires", "12h")
    assert row(out.strip()).expires_at - queue_clock.now() <= timedelta(hours=12)


@pytest.mark.parametrize("lifetime", ["0d", "-1d", "90", "90 days", "1.5d", "forever", "3w"])
def test_createtoken_refuses_a_lifetime_it_cannot_read_and_issues_nothing(alice, lifetime):
    with pytest.raises(CommandError, match="token lifetime"):
        createtoken("alice", f"--expires={lifetime}")
    assert not ApiToken.objects.exists()


def test_createtoken_refuses_an_unknown_user(db):
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        createtoken("nobody")
