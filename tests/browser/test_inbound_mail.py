"""The team's inbound address in a real browser, at 1280 px and 390 px: the admin lists the allowed
senders (a wrong address said by its field), sees what was received and what was ignored; a
teammate sees the address and the list only. No page has a serious or critical axe-core finding,
nor scrolls sideways (see ``audit``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from jobs import queue
from jobs.clock import system_clock
from mailin import conf
from mailin.models import InboundAttachment, InboundMessage

from .audit import audit
from .conftest import off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALICE = ("alice", "alice-pass-123")
CAROL = ("carol", "carol-pass-123")
# A long real-world name, with nowhere to break, as a scanner names its files.
LONG_NAME = "Scan_2026-11-02_Harbour-Paper-Supplies-GmbH_Rechnung_RE-2026-000123456789_Seite-1-von-3.pdf"


@pytest.fixture(autouse=True)
def mailbox_settings(settings):
    settings.MAILIN = {"ADDRESS": "accounts-payable-invoices@docket-mail.example.com",
                       "IMAP_HOST": "imap.example.com", "IMAP_USER": "invoices"}
    conf.mailin_settings.cache_clear()
    yield
    conf.mailin_settings.cache_clear()


def received(user) -> None:
    """One message of hers read (a document and a refused archive), one stranger's ignored."""
    now = system_clock.now()
    job = queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="diagnostic.noop", payload={},
                       operation_key="mailed", now=now, offered_only=False).job
    message = InboundMessage.objects.create(key="a" * 64, tenant_id=user.tenant_id, sender="alice@acme.example",
                                            size=2000, outcome="accepted", folder="Processed", received_at=now)
    InboundAttachment.objects.create(message=message, sha256="b" * 64, name=LONG_NAME, size=1000, job=job)
    InboundAttachment.objects.create(message=message, sha256="c" * 64, name="invoices.zip", size=900,
                                     refused="archive")
    InboundMessage.objects.create(key="d" * 64, tenant_id=user.tenant_id, sender="mallory@elsewhere.example",
                                  size=900, outcome="unknown_sender", folder="Rejected", received_at=now)


def test_the_admin_lists_senders_and_a_teammate_sees_the_address(make_member, login):
    alice = off_loop(make_member, "acme", ALICE[0], password=ALICE[1])
    off_loop(alice.user_permissions.add, off_loop(Permission.objects.get, codename="manage_inbox"))
    off_loop(make_member, "acme", CAROL[0], password=CAROL[1])
    off_loop(received, alice)

    page = login(*ALICE, start="/account/email-in")
    address = page.inner_text("#inbound-address")
    assert address.startswith("accounts-payable-invoices+acme.") and address.endswith("@docket-mail.example.com")
    assert "mallory@elsewhere.example" in page.inner_text("#unknown-senders")
    recent = page.inner_text("#inbound-recent")
    assert LONG_NAME in recent and "Archives are not unpacked" in recent
    page.fill("#senders", "alice@acme.example\nnot an address")
    page.click("#inbound-senders button[type=submit]")
    page.wait_for_selector("#senders-error")
    assert page.inner_text("#senders-error") == "“not an address” is not an e-mail address."
    assert page.get_attribute("#senders", "aria-describedby") == "senders-error"
    audit(page, "inbound-mail-error")

    page.fill("#senders", "alice@acme.example\ncarol@acme.example")
    page.click("#inbound-senders button[type=submit]")
    page.wait_for_selector("#settings-message")
    assert page.input_value("#senders") == "alice@acme.example\ncarol@acme.example"
    audit(page, "inbound-mail-admin")

    teammate = login(*CAROL, start="/account/email-in")
    assert teammate.inner_text("#inbound-address") == address
    assert teammate.inner_text("#sender-list").split() == ["alice@acme.example", "carol@acme.example"]
    assert teammate.locator("#senders").count() == 0 and teammate.locator("#unknown-senders").count() == 0
    audit(teammate, "inbound-mail-member")
