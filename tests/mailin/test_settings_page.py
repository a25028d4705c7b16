"""The team's inbound address at /account/email-in: every member sees it and who may send to it;
the team's admin (``mailin.manage_inbox``) changes the allowed senders or the address."""

from __future__ import annotations

import email
import email.policy
import re
import subprocess

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.urls import reverse

from jobs.clock import system_clock
from jobs.models import Job
from mailin import conf, fetch, inboxes, intake
from mailin.addresses import address_of
from mailin.models import Inbox
from tests.conftest import PYTHON, ROOT, child_env, wait_for

from . import mail

pytestmark = pytest.mark.django_db
PAGE = "inbound_settings"


@pytest.fixture(autouse=True)
def mailbox_settings(settings):
    settings.MAILIN = {"ADDRESS": "invoices@docket.example", "IMAP_HOST": "imap.docket.example",
                       "IMAP_USER": "invoices"}
    conf.mailin_settings.cache_clear()
    yield
    conf.mailin_settings.cache_clear()


def admin_of(user):
    user.user_permissions.add(Permission.objects.get(codename="manage_inbox", content_type__app_label="mailin"))
    return user


def form(client) -> dict:
    page = client.get(reverse(PAGE)).content.decode()
    return {"seen": re.search(r'name="seen" value="([^"]+)"', page)[1]}


def test_every_member_sees_the_address_and_the_senders_but_cannot_change_them(client, alice):
    client.force_login(alice)
    page = client.get(reverse(PAGE))
    address = re.search(r'id="inbound-address">([^<]+)<', page.content.decode())[1]
    assert re.fullmatch(r"invoices\+acme\.[a-z2-9]{10}@docket\.example", address)
    assert b'name="senders"' not in page.content and b"ask your team's administrator" in page.content
    assert reverse(PAGE).encode() in client.get(reverse("jobs"), HTTP_ACCEPT="text/html").content  # linked

    inbox = Inbox.objects.get(tenant_id=alice.tenant_id)
    refused = client.post(reverse(PAGE), {"senders": "mallory@evil.example", "seen": inbox.updated_at.isoformat()})
    assert refused.status_code == 403
    inbox.refresh_from_db()
    assert inbox.senders == [] and not inbox.user.is_active and inbox.user.tenant_id == alice.tenant_id


def test_the_admin_saves_the_senders_and_a_wrong_one_is_said_by_the_field(client, alice):
    client.force_login(admin_of(alice))
    saved = client.post(reverse(PAGE), {"senders": "Alice@Acme.example, Bob B. <bob@acme.example>\nalice@acme.example",
                                        **form(client)})
    assert saved.status_code == 303
    assert Inbox.objects.get(tenant_id=alice.tenant_id).senders == ["alice@acme.example", "bob@acme.example"]

    wrong = client.post(reverse(PAGE), {"senders": "carol@acme.example\nnot an address", **form(client)},
                        HTTP_ACCEPT="text/html")
    assert wrong.status_code == 400
    html = wrong.content.decode()
    assert 'id="senders-error"' in html and "“not an address” is not an e-mail address." in html
    assert "carol@acme.example\nnot an address</textarea>" in html  # what she typed, to correct
    assert Inbox.objects.get(tenant_id=alice.tenant_id).senders == ["alice@acme.example", "bob@acme.example"]


def test_a_change_made_meanwhile_is_not_overwritten(client, alice, make_member):
    client.force_login(admin_of(alice))
    seen = form(client)
    other = admin_of(make_member("acme", "dora"))
    inboxes.senders_update(tenant_id=alice.tenant_id, text="dora@acme.example", by=other,
                           seen_at=Inbox.objects.get(tenant_id=alice.tenant_id).updated_at,
                           now=system_clock.now())
    stale = client.post(reverse(PAGE), {"senders": "alice@acme.example", **seen}, HTTP_ACCEPT="text/html")
    assert stale.status_code == 400 and b"changed the list meanwhile" in stale.content
    assert Inbox.objects.get(tenant_id=alice.tenant_id).senders == ["dora@acme.example"]


def test_a_new_address_retires_the_old_one(client, alice, bob):
    client.force_login(admin_of(alice))
    inbox = inboxes.inbox_for(alice.tenant_id, now=system_clock.now())
    inboxes.senders_update(tenant_id=alice.tenant_id, text="alice@acme.example", by=alice, seen_at=inbox.updated_at,
                           now=system_clock.now())
    settings = conf.mailin_settings()
    old = address_of(Inbox.objects.get(pk=inbox.pk), settings)

    assert client.post(reverse(PAGE), {"action": "new_address", **form(client)}).status_code == 303

    new = address_of(Inbox.objects.get(pk=inbox.pk), settings)
    assert new != old
    header = mail.message(sender="alice@acme.example", to=old).split(b"\n\n")[0]
    assert intake.route(header, size=100, conf=settings).outcome == "no_tenant"
    routed = intake.route(mail.message(sender="alice@acme.example", to=new), size=100, conf=settings)
    assert routed.outcome is None and routed.inbox.tenant_id == alice.tenant_id
    # Another team's address, with this team's token, reaches no one.
    globex = address_of(inboxes.inbox_for(bob.tenant_id, now=system_clock.now()), settings)
    forged = new.replace("+acme.", "+globex.")
    assert forged != globex
    assert intake.route(mail.message(sender="alice@acme.example", to=forged), size=100,
                        conf=settings).outcome == "no_tenant"


def test_only_documents_are_taken_from_a_message():
    forwarded = mail.message(sender="a@b.example", to="c@d.example",
                             attachments=[("INV-9.pdf", "application/pdf", b"%PDF-1.7 forwarded")])
    outer = email.message_from_bytes(mail.message(sender="a@b.example", to="c@d.example", html_logo=True,
                                                  attachments=[("INV-1.pdf", "application/pdf", b"%PDF-1.7 one")]),
                                      policy=email.policy.default)
    outer.add_attachment(email.message_from_bytes(forwarded, policy=email.policy.default))  # forwarded as attachment
    raw = bytes(outer)
    names = [part.name for part in intake.documents(raw)]
    assert names == ["INV-1.pdf", "INV-9.pdf"]  # not the text, not the logo; the forwarded one's attachment


def test_wrong_settings_are_named_at_start_up():
    with pytest.raises(ImproperlyConfigured, match="MAILIN_IMAP_SECURITY"):
        conf.build({"IMAP_SECURITY": "tls"})
    with pytest.raises(ImproperlyConfigured, match="MAILIN_ADDRESS"):
        conf.build({"ADDRESS": "invoices+x@example.com"})
    with pytest.raises(ImproperlyConfigured, match="unknown keys: IMAP_HOSTNAME"):
        conf.build({"IMAP_HOSTNAME": "x"})
    with pytest.raises(ImproperlyConfigured, match="folder"):
        conf.build({"PROCESSED_FOLDER": "INBOX"})


def test_runmailin_once_queues_one_fetch_and_says_so(capsys, settings):
    call_command("runmailin", "--once")
    call_command("runmailin", "--once")
    out = capsys.readouterr().out
    assert "queued fetch job" in out and "already waiting or running" in out
    assert Job.objects.filter(kind=fetch.FETCH).count() == 1
    assert Job.objects.for_scope(Job.objects.get(kind=fetch.FETCH).scope_id).count() == 0  # nobody's document
    settings.MAILIN = {}
    conf.mailin_settings.cache_clear()
    with pytest.raises(CommandError, match="inbound e-mail is off"):
        call_command("runmailin", "--once")


@pytest.mark.django_db(transaction=True)
def test_runmailin_queues_a_fetch_each_interval_and_stops_on_sigterm():
    env = child_env(MAILIN_IMAP_HOST="imap.docket.example", MAILIN_IMAP_USER="invoices", MAILIN_EVERY_SECONDS="5")
    proc = subprocess.Popen([PYTHON, "manage.py", "runmailin"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: Job.objects.filter(kind=fetch.FETCH).exists(), timeout=30)
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
    assert Job.objects.filter(kind=fetch.FETCH).count() == 1
