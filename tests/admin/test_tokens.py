"""API tokens in the admin: issued once through accounts.tokens, shown by prefix, revoked and kept."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.admin.models import LogEntry

from accounts import tokens
from accounts.models import ApiToken, User
from jobs.clock import system_clock

from .conftest import messages_of

TOKENS = "/admin/accounts/apitoken/"


def issued(user, **kwargs) -> tuple[str, ApiToken]:
    secret = tokens.issue(user, **kwargs)
    return secret, ApiToken.objects.get(digest=tokens.digest(secret))


def revoke(client, *token: ApiToken):
    return client.post(TOKENS, {"action": "revoke_tokens", "index": 0, "_selected_action": [t.pk for t in token]})


def test_tokens_show_only_their_prefix_never_the_digest(client, superuser, alice):
    secret, token = issued(alice)
    client.force_login(superuser)
    for url in [TOKENS, f"{TOKENS}{token.pk}/change/"]:
        text = client.get(url).content.decode()
        assert token.prefix in text
        assert token.digest not in text and secret not in text


def test_adding_a_token_shows_it_once_and_stores_only_its_digest(client, superuser, alice):
    client.force_login(superuser)
    response = client.post(f"{TOKENS}add/", {"user": alice.pk})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    secret = response.context["token"]
    assert secret.startswith(tokens.PREFIX) and secret.encode() in response.content
    assert tokens.user_for(secret) == alice
    stored = ApiToken.objects.get(user=alice)
    assert stored.digest == tokens.digest(secret) and stored.prefix == secret[:10] and stored.expires_at is None
    assert secret not in client.get(f"{TOKENS}{stored.pk}/change/").content.decode()
    assert LogEntry.objects.get().object_id == str(stored.pk)  # the addition is in the admin log


def test_adding_a_token_with_an_expiry(client, superuser, alice):
    client.force_login(superuser)
    expires = (system_clock.now() + timedelta(days=30)).replace(microsecond=0)
    response = client.post(f"{TOKENS}add/", {"user": alice.pk, "expires_at_0": f"{expires:%Y-%m-%d}",
                                             "expires_at_1": f"{expires:%H:%M:%S}"})
    assert tokens.user_for(response.context["token"]) == alice
    assert ApiToken.objects.get(user=alice).expires_at == expires


def test_an_expiry_in_the_past_is_refused_and_nothing_is_issued(client, superuser, alice):
    client.force_login(superuser)
    past = system_clock.now() - timedelta(minutes=1)
    response = client.post(f"{TOKENS}add/", {"user": alice.pk, "expires_at_0": f"{past:%Y-%m-%d}",
                                             "expires_at_1": f"{past:%H:%M:%S}"})
    assert response.status_code == 200 and "expires_at" in response.context["adminform"].form.errors
    assert not ApiToken.objects.exists()


def test_revoking_stops_a_token_working_and_keeps_it_for_audit(client, superuser, alice, bob):
    alices, alice_token = issued(alice)
    bobs, _ = issued(bob)
    client.force_login(superuser)
    response = revoke(client, alice_token)
    assert response.status_code == 302
    assert any("Revoked 1 of 1 selected token(s)." in m for m in messages_of(response))

    assert tokens.user_for(alices) is None and tokens.user_for(bobs) == bob
    alice_token.refresh_from_db()
    assert alice_token.revoked_at is not None
    log = LogEntry.objects.get(object_id=str(alice_token.pk))
    assert (log.user, log.change_message) == (superuser, "Revoked.")


def test_revoking_again_keeps_the_first_revocation_time(client, superuser, alice):
    _, token = issued(alice)
    client.force_login(superuser)
    revoke(client, token)
    first = ApiToken.objects.get(pk=token.pk).revoked_at
    response = revoke(client, token)
    assert ApiToken.objects.get(pk=token.pk).revoked_at == first
    assert any("Revoked 0 of 1 selected token(s). 1 had been revoked already." in m for m in messages_of(response))
    assert LogEntry.objects.count() == 1


def test_a_live_tokens_page_has_a_revoke_button_that_revokes_it(client, superuser, alice):
    secret, token = issued(alice)
    client.force_login(superuser)
    page = client.get(f"{TOKENS}{token.pk}/change/").content.decode()
    assert 'name="action" value="revoke_tokens"' in page and 'name="_save"' not in page
    # The button's form: this token, index 0, the action.
    client.post(TOKENS, {"_selected_action": token.pk, "index": "0", "action": "revoke_tokens"})
    assert tokens.user_for(secret) is None
    assert 'value="revoke_tokens"' not in client.get(f"{TOKENS}{token.pk}/change/").content.decode()


def test_a_token_is_never_edited_in_the_admin(client, superuser, alice, bob):
    secret, token = issued(alice)
    client.force_login(superuser)
    response = client.post(f"{TOKENS}{token.pk}/change/", {"user": bob.pk, "revoked_at_0": "", "expires_at_0": ""})
    assert response.status_code == 403
    assert tokens.user_for(secret) == alice


def test_the_list_says_which_tokens_are_live_expired_or_revoked(client, superuser, alice):
    _, live = issued(alice)
    _, expired = issued(alice, expires_at=system_clock.now() - timedelta(seconds=1))
    _, revoked = issued(alice)
    revoke_at = system_clock.now()
    tokens.revoke(ApiToken.objects.filter(pk=revoked.pk), now=revoke_at)
    client.force_login(superuser)
    for status, token in [("live", live), ("expired", expired), ("revoked", revoked)]:
        assert list(client.get(TOKENS, {"status": status}).context["cl"].result_list) == [token]
    assert "delete_selected" not in client.get(TOKENS).content.decode()  # revoke, not delete


def test_a_superuser_still_deletes_a_user_who_has_tokens(client, superuser, alice):
    issued(alice)
    client.force_login(superuser)
    assert client.post(f"/admin/accounts/user/{alice.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not User.objects.filter(pk=alice.pk).exists() and not ApiToken.objects.exists()
