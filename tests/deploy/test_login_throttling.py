"""Login throttling (django-axes): failures count per username from an address, and per address.

A username with LOGIN_FAILURE_LIMIT failures from one address inside the cool-off is locked
from that address: the login page says so (429) and even the right password is refused there.
The same user from elsewhere, and other users from that address, are unaffected, so one
colleague's typos never lock out an office behind one NAT. An address is locked for every
username only at LOGIN_ADDRESS_FAILURE_LIMIT, ten times as many.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db.models import F
from django.test import Client

pytestmark = pytest.mark.django_db

ALICE_HOME, ALICE_AWAY, BOB_HOME, OFFICE = "10.0.0.1", "10.0.0.2", "10.0.0.3", "127.0.0.1"
LIMIT = settings.AXES_FAILURE_LIMIT
ADDRESS_LIMIT = settings.LOGIN_ADDRESS_FAILURE_LIMIT


def log_in(client, username: str, password: str, address: str, **headers):
    client.cookies.clear()
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=address, HTTP_ACCEPT="text/html", **headers)


def logged_in(response) -> bool:
    return response.status_code == 302 and SESSION_KEY in response.wsgi_request.session


def locked_out(response) -> bool:
    text = response.content.decode()
    return response.status_code == 429 and 'id="locked-out"' in text and "Too many failed log-ins" in text


def fail_until_locked(client, username: str, address: str, **headers):
    for attempt in range(1, LIMIT + 1):
        response = log_in(client, username, "wrong-password", address, **headers)
        if attempt < LIMIT:
            assert response.status_code == 200 and "did not match" in response.content.decode()
    return response


def test_the_settings_throttle_a_username_from_an_address_and_an_address_only_much_later():
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AXES_HANDLER == "jobsite.throttling.OfficeFriendlyHandler"
    assert 3 <= LIMIT <= 20 and timedelta(minutes=15) == settings.AXES_COOLOFF_TIME
    assert ADDRESS_LIMIT >= 5 * LIMIT


def test_wrong_passwords_lock_the_account_from_that_address_and_the_right_one_is_then_refused_there(client, alice,
                                                                                                     bob):
    last = fail_until_locked(client, "alice", ALICE_HOME)
    assert locked_out(last)
    assert "paused for 15 minutes" in last.content.decode()

    right = log_in(client, "alice", "alice-pass-123", ALICE_HOME)
    assert locked_out(right) and not logged_in(right)
    assert 'value="alice"' in right.content.decode()  # the form keeps the username

    # The trade-off: alice from another address is not locked (an attacker there starts his own count).
    assert logged_in(log_in(client, "alice", "alice-pass-123", ALICE_AWAY))
    # Another user from the same address is unaffected.
    assert logged_in(log_in(client, "bob", "bob-pass-123", ALICE_HOME))


def test_alice_logs_in_from_the_address_where_bob_just_failed_ten_times(client, alice, bob):
    """One colleague's typos (or an attacker who knows his username) never lock out the office."""
    assert locked_out(fail_until_locked(client, "bob", OFFICE))
    assert locked_out(log_in(client, "bob", "bob-pass-123", OFFICE))
    assert logged_in(log_in(client, "alice", "alice-pass-123", OFFICE))
    # Nor bob himself from home.
    assert logged_in(log_in(client, "bob", "bob-pass-123", BOB_HOME))


def test_fewer_failures_than_the_limit_do_not_lock(client, alice):
    for _ in range(LIMIT - 1):
        log_in(client, "alice", "wrong-password", ALICE_HOME)
    assert logged_in(log_in(client, "alice", "alice-pass-123", ALICE_HOME))


def test_an_address_spraying_many_usernames_is_locked_only_at_the_much_higher_address_limit(client, alice):
    for n in range(ADDRESS_LIMIT - 1):
        log_in(client, f"guess{n}", "wrong-password", "10.9.9.9")
    assert logged_in(log_in(client, "alice", "alice-pass-123", "10.9.9.9"))  # ten times the limit, less one
    assert locked_out(log_in(client, "guess-last", "wrong-password", "10.9.9.9"))
    assert locked_out(log_in(client, "alice", "alice-pass-123", "10.9.9.9"))
    assert logged_in(log_in(client, "alice", "alice-pass-123", ALICE_HOME))


def test_the_lockout_ends_after_the_cool_off(client, alice):
    fail_until_locked(client, "alice", ALICE_HOME)
    assert locked_out(log_in(client, "alice", "alice-pass-123", ALICE_HOME))
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=16))
    assert logged_in(log_in(client, "alice", "alice-pass-123", ALICE_HOME))


def test_behind_the_proxy_the_address_is_nginxs_x_real_ip(client, settings, alice, bob):
    """Every request reaches gunicorn from nginx on 127.0.0.1: counting that address would
    lock everyone out together."""
    settings.BEHIND_PROXY = True
    fail_until_locked(client, "alice", OFFICE, HTTP_X_REAL_IP="203.0.113.7")
    assert locked_out(log_in(client, "alice", "alice-pass-123", OFFICE, HTTP_X_REAL_IP="203.0.113.7"))
    assert logged_in(log_in(client, "alice", "alice-pass-123", OFFICE, HTTP_X_REAL_IP="198.51.100.2"))
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.7"}


def test_a_superuser_sees_lockouts_in_the_admin(client, alice, make_member):
    fail_until_locked(client, "alice", ALICE_HOME)
    admin = make_member("acme", "root", password="root-pass-123")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)

    index = client.get("/admin/", REMOTE_ADDR=BOB_HOME)
    assert "Access attempts" in index.content.decode()
    listing = client.get("/admin/axes/accessattempt/?locked_out=yes", REMOTE_ADDR=BOB_HOME)
    assert listing.status_code == 200
    text = listing.content.decode()
    assert "alice" in text and ALICE_HOME in text
    assert "wrong-password" not in text  # the admin never shows a password tried


def test_staff_lift_a_lockout_in_the_admin(client, alice, make_member):
    fail_until_locked(client, "alice", ALICE_HOME)
    assert locked_out(log_in(client, "alice", "alice-pass-123", ALICE_HOME))
    admin = make_member("acme", "root", password="root-pass-123")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    staff = Client()
    staff.force_login(admin)
    attempt = AccessAttempt.objects.get(username="alice")
    lifted = staff.post("/admin/axes/accessattempt/", {"action": "delete_selected", "_selected_action": [attempt.pk],
                                                       "post": "yes"}, REMOTE_ADDR=BOB_HOME)
    assert lifted.status_code == 302 and not AccessAttempt.objects.exists()
    assert logged_in(log_in(client, "alice", "alice-pass-123", ALICE_HOME))
