"""A tenant's admin (a member with ``agent.change_webhookendpoint``) sets the tenant's webhooks at
/account/webhooks: only hers, the URL checked, the secret shown once."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from agent.inbox.webhooks import CATCHUP
from agent.models import WebhookEndpoint
from jobs.models import Job
from tests.webhook_receiver import resolve_publicly

URL = "https://hooks.example/docket"


@pytest.fixture(autouse=True)
def public_host_resolves(settings, monkeypatch):
    resolve_publicly(settings, monkeypatch)


def admin_of(user):
    user.user_permissions.add(Permission.objects.get(codename="change_webhookendpoint",
                                                     content_type__app_label="agent"))
    return user


def test_a_member_without_the_permission_is_refused_and_not_shown_the_link(client, alice):
    WebhookEndpoint.objects.create(tenant_id=alice.tenant_id, url=URL, secret="s")
    client.force_login(alice)
    page = client.get(reverse("webhook_settings"))
    assert page.status_code == 403 and b"administrator" in page.content and URL.encode() not in page.content
    assert client.post(reverse("webhook_settings"), {"url": URL, "document_finished": "on"}).status_code == 403
    endpoint = WebhookEndpoint.objects.get()
    assert client.post(reverse("webhook_change", args=[endpoint.pk]), {"action": "delete"}).status_code == 403
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()
    assert reverse("webhook_settings").encode() not in client.get(reverse("notification_settings")).content
    admin_of(alice)
    assert reverse("webhook_settings").encode() in client.get(reverse("notification_settings")).content


def test_the_admin_adds_an_endpoint_whose_secret_is_shown_once(client, alice):
    client.force_login(admin_of(alice))
    response = client.post(reverse("webhook_settings"), {"url": URL, "document_needs_action": "on"})
    assert response.status_code == 303 and response["Location"] == reverse("webhook_settings")
    made = WebhookEndpoint.objects.get()
    assert (made.tenant_id, made.url, made.document_finished, made.document_needs_action, made.active) == \
        (alice.tenant_id, URL, False, True, True)
    assert len(made.secret) > 30
    # The catch-up chain (stopped while no endpoint was active) starts again with the endpoint.
    assert Job.objects.filter(kind=CATCHUP, state="queued").count() == 1
    first = client.get(reverse("webhook_settings"))
    assert first.status_code == 200 and made.secret.encode() in first.content and URL.encode() in first.content
    again = client.get(reverse("webhook_settings"))
    assert made.secret.encode() not in again.content and URL.encode() in again.content
    old = made.secret
    assert client.post(reverse("webhook_change", args=[made.pk]), {"action": "rotate"}).status_code == 303
    made.refresh_from_db()
    assert made.secret != old and made.secret.encode() in client.get(reverse("webhook_settings")).content
    assert made.secret.encode() not in client.get(reverse("webhook_settings")).content


@pytest.mark.parametrize("url", ["ftp://hooks.example/x", "http://127.0.0.1:8000/hook", "http://10.0.0.5/hook",
                                 "http://169.254.169.254/latest", "https://user:pw@hooks.example/x", "not a url"])
def test_creation_validates_the_url_as_the_admins_form_does(client, alice, url):
    client.force_login(admin_of(alice))
    response = client.post(reverse("webhook_settings"), {"url": url, "document_finished": "on"})
    assert response.status_code == 400
    assert not WebhookEndpoint.objects.exists()


def test_disable_enable_and_delete(client, alice):
    client.force_login(admin_of(alice))
    made = WebhookEndpoint.objects.create(tenant_id=alice.tenant_id, url=URL, secret="s")
    client.post(reverse("webhook_change", args=[made.pk]), {"action": "disable"})
    made.refresh_from_db()
    assert not made.active
    assert not Job.objects.filter(kind=CATCHUP).exists()
    client.post(reverse("webhook_change", args=[made.pk]), {"action": "enable"})
    made.refresh_from_db()
    assert made.active and Job.objects.filter(kind=CATCHUP, state="queued").count() == 1
    client.post(reverse("webhook_change", args=[made.pk]), {"action": "enable"})  # the same slot: no second one
    assert Job.objects.filter(kind=CATCHUP).count() == 1
    assert client.post(reverse("webhook_change", args=[made.pk]), {"action": "explode"}).status_code == 400
    assert client.post(reverse("webhook_change", args=[made.pk]), {"action": "delete"}).status_code == 303
    assert not WebhookEndpoint.objects.exists()


def test_another_tenants_endpoints_are_never_listed_nor_changed(client, alice, bob):
    theirs = WebhookEndpoint.objects.create(tenant_id=bob.tenant_id, url="https://hooks.example/globex",
                                            secret="globex-secret")
    client.force_login(admin_of(alice))
    page = client.get(reverse("webhook_settings"))
    assert page.status_code == 200 and b"globex" not in page.content
    missing = client.post(reverse("webhook_change", args=[theirs.pk + 1000]), {"action": "delete"})
    for action in ("rotate", "disable", "delete"):
        response = client.post(reverse("webhook_change", args=[theirs.pk]), {"action": action})
        assert response.status_code == 404 and response.content == missing.content
    theirs_now = WebhookEndpoint.objects.get(pk=theirs.pk)
    assert (theirs_now.secret, theirs_now.active) == ("globex-secret", True)
    client.post(reverse("webhook_settings"), {"url": URL, "document_finished": "on", "tenant": bob.tenant_id})
    assert WebhookEndpoint.objects.get(url=URL).tenant_id == alice.tenant_id


def test_a_post_without_its_csrf_token_is_refused(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_of(alice))
    assert client.post(reverse("webhook_settings"), {"url": URL, "document_finished": "on"}).status_code == 403
    assert not WebhookEndpoint.objects.exists()


def test_the_admin_sees_her_tenants_latest_deliveries_with_their_state(client, alice, bob, accept, clock):
    from agent.inbox.webhooks import KIND_NAME
    from jobs import queue
    from tests.conftest import drive_to

    mine = WebhookEndpoint.objects.create(tenant_id=alice.tenant_id, url=URL, secret="s")
    theirs = WebhookEndpoint.objects.create(tenant_id=bob.tenant_id, url="https://hooks.example/globex", secret="t")

    def delivery(user, endpoint, event, review):
        return queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind=KIND_NAME, now=clock.now(),
                            payload={"job": review.pk, "event": event, "endpoint": endpoint.pk},
                            operation_key=f"webhook:{review.pk}:{event}:{endpoint.pk}", offered_only=False).job

    review, bobs = accept(), accept(user=bob)
    delivery(alice, mine, "document.finished", review)
    failed = drive_to(delivery(alice, mine, "document.needs_action", review), "dead", now=clock.now())
    delivery(bob, theirs, "document.finished", bobs)
    client.force_login(admin_of(alice))
    html = client.get(reverse("webhook_settings")).content.decode()
    rows = html.split('id="webhook-deliveries"')[1].split("</table>")[0]
    assert rows.count("<tr>") == 3  # the header and her two: none of globex's
    assert f'href="/jobs/{review.pk}">job {review.pk}</a>' in rows and f"/jobs/{bobs.pk}" not in rows
    assert "document.needs_action" in rows and f"failed: {failed.last_error}" in rows
    assert "document.finished" in rows and "waiting" in rows
