"""Inbound e-mail against a real IMAP server: a private Dovecot on loopback (conftest.py).

Each test has a mailbox of its own; messages arrive by IMAP APPEND, the fetch job reads them.
"""

from __future__ import annotations

import subprocess
import uuid
from datetime import timedelta

import pytest

from jobs import queue
from jobs.clock import LogicalClock, system_clock
from jobs.context import JobContext
from jobs.kinds import JobFailed
from jobs.models import Job
from mailin import fetch, inboxes
from mailin.addresses import address_of
from mailin.conf import mailin_settings
from mailin.models import InboundAttachment, InboundMessage
from tests.conftest import PYTHON, ROOT, child_env, claim_first

from . import mail
from .conftest import PASSWORD

pytestmark = pytest.mark.django_db
SENDER = "alice@acme.example"


def mailin_env(dovecot, user: str) -> dict[str, str]:
    return {"MAILIN_ADDRESS": "invoices@docket.example", "MAILIN_IMAP_HOST": "127.0.0.1",
            "MAILIN_IMAP_PORT": str(dovecot.port), "MAILIN_IMAP_SECURITY": "plain", "MAILIN_IMAP_USER": user,
            "MAILIN_IMAP_PASSWORD": PASSWORD, "MAILIN_TIMEOUT_SECONDS": "10"}


@pytest.fixture
def box(dovecot, settings):
    """This test's mailbox, and the settings that point the fetch at it."""
    user = dovecot.new_user()
    settings.MAILIN = {"ADDRESS": "invoices@docket.example", "IMAP_HOST": "127.0.0.1", "IMAP_PORT": dovecot.port,
                       "IMAP_SECURITY": "plain", "IMAP_USER": user, "IMAP_PASSWORD": PASSWORD,
                       "TIMEOUT_SECONDS": 10}
    mailin_settings.cache_clear()
    yield user
    mailin_settings.cache_clear()


@pytest.fixture
def address(make_member, box):
    """Alice's team (acme): its inbound address, with her address on the allowed senders."""
    alice = make_member("acme", "alice")
    alice.email = SENDER.upper()  # addresses compare without case
    alice.save(update_fields=["email"])
    now = system_clock.now()
    inbox = inboxes.inbox_for(alice.tenant_id, now=now)
    inboxes.senders_update(tenant_id=alice.tenant_id, text=f"{SENDER}\nBilling@Harbour.example", by=alice,
                           seen_at=inbox.updated_at, now=now)
    inbox.refresh_from_db()
    return address_of(inbox, mailin_settings())


def run_fetch() -> dict:
    """One fetch job, queued as runmailin queues it, claimed and run as a worker runs it."""
    now = system_clock.now()
    job = fetch.queue_fetch(now=now, key=f"test:{uuid.uuid4()}")
    assert job is not None
    claim = claim_first(job, now=now)
    result = fetch.run_fetch(JobContext(claim, clock=system_clock))
    assert queue.complete(job_id=claim.job_id, epoch=claim.epoch, result=result, now=system_clock.now())
    return result


def documents(tenant_slug: str = "acme"):
    return Job.objects.filter(scope__slug=tenant_slug, kind="document_review").order_by("pk")


def test_each_attachment_of_an_allowed_sender_becomes_a_job_once(dovecot, box, address):
    raw = mail.message(sender=SENDER, to=address, html_logo=True, attachments=[
        ("INV-2026-0042.pdf", "application/pdf", mail.invoice_pdf()),
        ("INV-2026-0043.xml", "application/xml", mail.ubl_xml()),
    ])
    dovecot.append(box, raw)

    result = run_fetch()

    jobs = list(documents())
    # the logo is no document
    assert [j.document.original_name for j in jobs] == ["INV-2026-0042.pdf", "INV-2026-0043.xml"]
    assert {j.document.content_type for j in jobs} == {"application/pdf", "application/xml"}
    assert jobs[0].batch and jobs[0].batch == jobs[1].batch
    assert {j.submitted_by.username for j in jobs} == {"alice"}  # on her own list: the sender is her account's
    assert result["jobs"] == 2 and result["read"] == 1
    assert dovecot.count(box, "INBOX") == 0 and dovecot.count(box, "Processed") == 1
    recorded = InboundMessage.objects.get()
    assert (recorded.outcome, recorded.sender, recorded.tenant.slug) == ("accepted", SENDER, "acme")

    # The same message delivered again (a resend, a second copy in the folder): no second job.
    dovecot.append(box, raw)
    assert run_fetch()["jobs"] == 2  # the same two, found by their operation keys
    assert documents().count() == 2 and InboundAttachment.objects.count() == 2
    assert dovecot.count(box, "Processed") == 2 and dovecot.count(box, "INBOX") == 0


def test_a_supplier_on_the_list_sends_as_the_team_and_an_edited_address_makes_nothing_twice(dovecot, box, address):
    raw = mail.message(sender="billing@harbour.example", to=address,
                       attachments=[("H-1.pdf", "application/pdf", mail.invoice_pdf())])
    dovecot.append(box, raw)
    run_fetch()
    job = documents().get()
    assert job.submitted_by.username == "inbound-mail.acme" and not job.submitted_by.is_active

    # A member takes the supplier's address meanwhile; the same message read again is the same job.
    type(job.submitted_by).objects.filter(username="alice").update(email="billing@harbour.example")
    dovecot.append(box, raw)
    run_fetch()
    assert documents().count() == 1


def test_strangers_are_ignored_counted_and_moved_aside_without_an_answer(dovecot, box, address, mailoutbox):
    dovecot.append(box, mail.message(sender="mallory@elsewhere.example", to=address,
                                     attachments=[("invoice.pdf", "application/pdf", mail.invoice_pdf())]))
    tag = address.split("+")[1].split("@")[0]
    dovecot.append(box, mail.message(sender=SENDER, to=address.replace(tag, "acme.wrongtoken1"),
                                     attachments=[("invoice.pdf", "application/pdf", mail.invoice_pdf())]))

    result = run_fetch()

    assert documents().count() == 0 and result["rejected"] == 2
    assert dovecot.count(box, "Rejected") == 2 and dovecot.count(box, "INBOX") == 0
    assert sorted(InboundMessage.objects.values_list("outcome", flat=True)) == ["no_tenant", "unknown_sender"]
    assert inboxes.counts(InboundMessage.objects.get(outcome="unknown_sender").tenant_id).unknown_sender == 1
    assert mailoutbox == []  # nothing is answered, to anyone


def test_malformed_oversized_and_zipped_mail_is_recorded_refused_and_moved(dovecot, box, address):
    # No From at all, and a broken multipart from an allowed sender.
    dovecot.append(box, b"To: " + address.encode() + b"\r\nSubject: ???\r\n\r\n\x00\xff garbage\r\n")
    dovecot.append(box, (f"From: {SENDER}\r\nTo: {address}\r\nMessage-ID: <broken@mail.example>\r\n"
                         "Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n"
                         "Content-Type: application/pdf; name=\"cut.pdf\"\r\nContent-Transfer-Encoding: base64\r\n"
                         "Content-Disposition: attachment; filename=\"cut.pdf\"\r\n\r\n"
                         "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX!!").encode())  # binary, cut short, never closed
    # A 40 MB attachment: over the message limit, refused from its size without being downloaded.
    dovecot.append(box, mail.raw_message(sender=SENDER, to=address, message_id="<big@mail.example>", attachments=[
        ("scan.pdf", "application/pdf", b"%PDF-1.7\n" + bytes(40 << 20))]))
    # Under the message limit, over the document limit (5 MB); and a zip, refused, not unpacked.
    dovecot.append(box, mail.raw_message(sender=SENDER, to=address, message_id="<mixed@mail.example>", attachments=[
        ("photo.jpg", "image/jpeg", b"\xff\xd8\xff\xe0" + bytes(5 << 20)),
        ("invoices.zip", "application/zip", mail.zipped({"a.pdf": mail.invoice_pdf()})),
        ("INV-7.pdf", "application/pdf", mail.invoice_pdf()),
    ]))

    run_fetch()

    assert dovecot.count(box, "INBOX") == 0
    assert dovecot.count(box, "Rejected") == 1 and dovecot.count(box, "Processed") == 3
    outcomes = dict(InboundMessage.objects.values_list("key", "outcome"))
    assert sorted(outcomes.values()) == ["accepted", "accepted", "malformed", "too_large"]
    refused = dict(InboundAttachment.objects.filter(job__isnull=True).values_list("name", "refused"))
    assert refused["photo.jpg"] == "too_large" and refused["invoices.zip"] == "archive"
    assert refused["cut.pdf"] == "unsupported_media_type"  # cut short, and no PDF: acceptance's own check
    assert [j.document.original_name for j in documents()] == ["INV-7.pdf"]


CRASH = """
import os, signal, sys
from datetime import timedelta
import django
django.setup()
from jobs import queue
from jobs.clock import system_clock
from jobs.context import JobContext
from mailin import fetch, intake

def die():
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[2] == "after_accepting":  # every job committed; the message neither recorded nor moved
    accept = intake.accept
    def accept_then_die(*args, **kwargs):
        accept(*args, **kwargs)
        die()
    intake.accept = accept_then_die
else:  # "between_attachments": the first attachment's job committed, the second's not
    accept = queue.accept
    def accept_once_then_die(*args, **kwargs):
        accepted = accept(*args, **kwargs)
        queue.accept = lambda *args, **kwargs: die()
        return accepted
    queue.accept = accept_once_then_die
claim = queue.claim(now=system_clock.now(), worker="doomed", lease=timedelta(seconds=60))
assert claim is not None and claim.job_id == int(sys.argv[1]), claim
fetch.run_fetch(JobContext(claim, clock=system_clock))
"""


@pytest.mark.parametrize("point", ["between_attachments", "after_accepting"])
@pytest.mark.django_db(transaction=True)
def test_a_fetch_killed_mid_way_loses_nothing_and_makes_nothing_twice(dovecot, box, address, point):
    dovecot.append(box, mail.message(sender=SENDER, to=address, attachments=[
        ("A.pdf", "application/pdf", mail.invoice_pdf()), ("B.xml", "application/xml", mail.ubl_xml())]))
    job = fetch.schedule(now=system_clock.now())

    doomed = subprocess.run([PYTHON, "-c", CRASH, str(job.pk), point], cwd=ROOT,
                            env=child_env(**mailin_env(dovecot, box)), capture_output=True, timeout=60)

    assert doomed.returncode == -9, doomed.stderr.decode()[-2000:]
    made = {"between_attachments": ["A.pdf"], "after_accepting": ["A.pdf", "B.xml"]}[point]
    assert [j.document.original_name for j in documents()] == made  # committed before the process died ...
    assert InboundMessage.objects.count() == 0 and dovecot.count(box, "INBOX") == 1  # ... the message still there
    job.refresh_from_db()
    later = LogicalClock(job.lease_expires_at + timedelta(seconds=1))  # once the dead worker's lease ran out
    assert queue.recover(now=later.now()).requeued == [job.pk]

    claim = claim_first(job, now=later.now())  # the queue gives the fetch to another worker
    assert claim.epoch == 2
    result = fetch.run_fetch(JobContext(claim, clock=later))

    assert result["jobs"] == 2 and [j.document.original_name for j in documents()] == ["A.pdf", "B.xml"]  # none twice
    assert dovecot.count(box, "INBOX") == 0 and dovecot.count(box, "Processed") == 1
    assert InboundMessage.objects.get().attachments.count() == 2


def test_a_fetch_that_lost_its_claim_moves_nothing(dovecot, box, address):
    dovecot.append(box, mail.message(sender=SENDER, to=address,
                                     attachments=[("A.pdf", "application/pdf", mail.invoice_pdf())]))
    now = system_clock.now()
    job = fetch.schedule(now=now)
    claim = claim_first(job, now=now)
    Job.objects.filter(pk=job.pk).update(epoch=claim.epoch + 1)  # another worker took it meanwhile

    with pytest.raises(queue.StaleEpoch):
        fetch.run_fetch(JobContext(claim, clock=system_clock))

    assert InboundMessage.objects.count() == 0 and dovecot.count(box, "INBOX") == 1


def test_the_imap_server_away_fails_the_fetch_for_a_retry(settings, box):
    settings.MAILIN = {**settings.MAILIN, "IMAP_PORT": 1}
    mailin_settings.cache_clear()
    now = system_clock.now()
    job = fetch.schedule(now=now)
    claim = claim_first(job, now=now)
    with pytest.raises(JobFailed) as failed:
        fetch.run_fetch(JobContext(claim, clock=system_clock))
    assert failed.value.retryable and failed.value.code == fetch.UNREACHABLE
    assert failed.value.message.endswith("at 127.0.0.1:1 could not be read: ConnectionRefusedError")
