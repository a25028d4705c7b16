"""A tenant's webhooks in a real browser, at 1280 px and 390 px: her team's admin adds an endpoint and
sees its secret once, sees its deliveries, and disables it; a teammate without the permission is
refused (403), and another tenant's admin finds none of it (404). No page has a serious or critical
axe-core finding, nor scrolls sideways (see ``audit``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from agent.inbox.webhooks import FINISHED, KIND_NAME
from agent.models import WebhookEndpoint
from jobs import queue
from jobs.clock import system_clock
from tests.webhook_receiver import resolve_publicly

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
CAROL = ("carol", "carol-pass-123")
BOB = ("bob", "bob-pass-123")
URL = "https://hooks.example/docket"


@pytest.fixture(autouse=True)
def public_host_resolves(settings, monkeypatch):
    resolve_publicly(settings, monkeypatch)  # the live server runs in this process


def webhook_admin(make_member, tenant: str, username: str, password: str):
    user = make_member(tenant, username, password=password)
    user.user_permissions.add(Permission.objects.get(codename="change_webhookendpoint",
                                                     content_type__app_label="agent"))
    return user


def a_delivery(user, endpoint_id: int) -> int:
    """A review of hers and its document.finished delivery, waiting for a worker (none runs here)."""
    now = system_clock.now()
    review = queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="diagnostic.noop", payload={},
                          operation_key="a-review", now=now, offered_only=False).job
    queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind=KIND_NAME, now=now, offered_only=False,
                 payload={"job": review.pk, "event": FINISHED, "endpoint": endpoint_id},
                 operation_key=f"webhook:{review.pk}:{FINISHED}:{endpoint_id}")
    return review.pk


def posted(page, path: str, data: dict):
    """A form post from this browser's session, with its CSRF token, as a forged form would send it."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return page.request.post(path, form={"csrfmiddlewaretoken": token, **data}, max_redirects=0)


def test_the_admin_adds_sees_the_secret_once_and_the_deliveries_then_disables(make_member, login, monkeypatch):
    # A secret as long as one can be, and with nowhere to break: it still fits a phone's width.
    monkeypatch.setattr("agent.views.new_secret", lambda: "S" * 64)
    alice = off_loop(webhook_admin, make_member, "acme", *ALICE)
    off_loop(make_member, "acme", CAROL[0], password=CAROL[1])
    off_loop(webhook_admin, make_member, "globex", *BOB)

    page = login(*ALICE, start="/account/webhooks")
    assert "No webhooks yet." in page.inner_text("#webhook-endpoints")
    audit(page, "webhooks-empty")

    # Added: the page comes back with the secret, this once.
    page.fill("#webhook-url", URL)
    page.uncheck("input[name=document_finished]")
    page.click("#webhook-new button[type=submit]")
    page.wait_for_selector("#webhook-secret")
    endpoint = off_loop(WebhookEndpoint.objects.get)
    assert (endpoint.tenant_id, endpoint.url, endpoint.document_finished, endpoint.active) == \
        (alice.tenant_id, URL, False, True)
    assert page.inner_text("#webhook-secret code") == endpoint.secret
    row = page.inner_text(f"#webhook-{endpoint.pk}")
    assert URL in row and "document.needs_action" in row and "document.finished" not in row
    audit(page, "webhooks-secret")
    page.reload()
    assert page.locator("#webhook-secret").count() == 0 and endpoint.secret not in page.content()

    # Its deliveries, with their state and the document each is about.
    review_id = off_loop(a_delivery, alice, endpoint.pk)
    page.reload()
    delivery = page.locator("#webhook-deliveries tbody tr").first
    assert "document.finished" in delivery.inner_text() and "waiting" in delivery.inner_text()
    assert delivery.locator("a").get_attribute("href") == f"/jobs/{review_id}"
    audit(page, "webhooks-deliveries")

    # Disabled: said so, off in the list, and nothing else about it changed.
    page.click(f"#webhook-{endpoint.pk} button[value=disable]")
    page.wait_for_selector("#settings-message")
    assert page.inner_text("#settings-message") == "Webhook disabled."
    assert "off" in page.inner_text(f"#webhook-{endpoint.pk}").split("\t")
    assert page.locator(f"#webhook-{endpoint.pk} button[value=enable]").count() == 1
    now = off_loop(lambda: WebhookEndpoint.objects.get(pk=endpoint.pk))
    assert not now.active and now.secret == endpoint.secret
    audit(page, "webhooks-disabled")

    # A teammate without the permission: refused, the endpoint neither shown nor changed.
    carol = login(*CAROL, start="/jobs")
    refused = carol.goto("/account/webhooks")
    assert refused.status == 403 and "administrator" in carol.inner_text("main") and URL not in carol.content()
    audit(carol, "webhooks-forbidden")
    assert posted(carol, f"/account/webhooks/{endpoint.pk}", {"action": "enable"}).status == 403

    # Another tenant's admin: her own (empty) page, and alice's endpoint is as unknown as a missing one.
    bob = login(*BOB, start="/account/webhooks")
    assert URL not in bob.content() and "No webhooks yet." in bob.inner_text("#webhook-endpoints")
    assert posted(bob, f"/account/webhooks/{endpoint.pk}", {"action": "enable"}).status == 404
    assert not off_loop(lambda: WebhookEndpoint.objects.get(pk=endpoint.pk)).active
