"""Tenants' webhooks: each event's delivery a job of its own, POSTed over real HTTP to a receiver
on 127.0.0.1, signed, retried on timeouts and 5xx, never sent twice by the queue."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import time
from datetime import timedelta

import pytest

from agent import samples
from agent.admin import WebhookEndpointForm
from agent.inbox import webhooks
from agent.models import WebhookEndpoint
from jobs import kinds, queue
from jobs.clock import system_clock
from jobs.models import Job, JobEvent
from jobs.worker import Worker
from tests.conftest import name_document, wait_for
from tests.webhook_receiver import Receiver

SECRET = "s3cret-of-acme"  # a test endpoint's secret


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(*script: int | str, **options) -> Receiver:
        made.append(Receiver(*script, **options))
        return made[-1]

    yield make
    for r in made:
        r.close()


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True, "TIMEOUT_SECONDS": 0.5,
                         "SITE_URL": "https://docket.example"}


def endpoint(user, url: str, **kwargs) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(tenant_id=user.tenant_id, url=url, secret=kwargs.pop("secret", SECRET),
                                          **kwargs)


def completed_review(accept, clock, *, user=None, needs_action: bool = False, now=None) -> Job:
    """A document_review job completed as a worker completes one (its summary with it)."""
    now = now or clock.now()
    job = accept("diagnostic.noop", {}, user=user, now=now)
    name_document(job.pk, "invoice-clean.pdf")
    got = queue.claim(now=now, worker="w0")
    assert got is not None and got.job_id == job.pk
    summary = kinds.Summary("to_correct", "1 to correct", True) if needs_action else kinds.Summary("ok", "OK", False)
    assert queue.complete(job_id=got.job_id, epoch=got.epoch, result={"fields": {}}, now=now, summary=summary)
    return Job.objects.get(pk=job.pk)


def deliveries() -> list[Job]:
    return list(Job.objects.filter(kind=webhooks.KIND_NAME).order_by("id"))


def run(clock) -> bool:
    return Worker(name="w1", clock=clock, burst=True, listen=False).run_one()


# --- Events, signed, over HTTP -----------------------------------------------------------------


def test_a_completed_review_is_delivered_signed_with_its_outcome_and_no_document_text(
        review_job, clock, alice, receiver, monkeypatch):
    monkeypatch.delenv("AGENT_PLANNER", raising=False)
    r = receiver()
    hook = endpoint(alice, r.url)
    review = review_job(samples.BAD_IBAN_PDF)
    assert run(clock)  # the review: its completion queues the deliveries (Kind.on_completed)
    review.refresh_from_db()
    assert (review.state, review.needs_action) == ("completed", True)
    queued = deliveries()
    assert sorted(d.payload["event"] for d in queued) == ["document.finished", "document.needs_action"]
    assert all(d.state == "queued" and d.scope_id == alice.tenant_id for d in queued)

    assert run(clock) and run(clock)

    assert [d.state for d in deliveries()] == ["completed", "completed"]
    assert len(r.requests) == 2
    for request in r.requests:
        headers, body = request["headers"], request["body"]
        expected = hmac.new(SECRET.encode(), headers["X-Docket-Timestamp"].encode() + b"." + body,
                            hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["X-Docket-Signature"], f"sha256={expected}")
        assert request["path"] == "/hooks/docket"
        event = json.loads(body)
        assert set(event) == {"event", "id", "created", "data"}
        assert event["data"]["job_id"] == review.pk
        assert event["data"]["status_url"] == f"https://docket.example/jobs/{review.pk}"
        assert event["data"]["outcome"] == "to_correct"
        assert event["data"]["document_name"] == review.document.original_name
    assert {json.loads(q["body"])["event"] for q in r.requests} == {"document.finished", "document.needs_action"}
    # Nothing of the document's text: only ids, the outcome and the file's name.
    assert b"IBAN" not in b"".join(q["body"] for q in r.requests)
    assert hook.pk in {d.payload["endpoint"] for d in deliveries()}


def test_a_wrong_secret_does_not_verify(accept, clock, alice, receiver):
    r = receiver()
    endpoint(alice, r.url, secret="another-secret")
    webhooks.enqueue(completed_review(accept, clock).pk)
    assert run(clock)
    request = r.requests[0]
    forged = hmac.new(SECRET.encode(), request["headers"]["X-Docket-Timestamp"].encode() + b"." + request["body"],
                      hashlib.sha256).hexdigest()
    assert request["headers"]["X-Docket-Signature"] != f"sha256={forged}"


def test_only_subscribed_events_and_active_endpoints_are_queued_and_never_twice(accept, clock, alice, receiver):
    r = receiver()
    both = endpoint(alice, r.url)
    finished_only = endpoint(alice, r.url, document_needs_action=False)
    endpoint(alice, r.url, active=False)
    review = completed_review(accept, clock, needs_action=True)

    first = webhooks.enqueue(review.pk)
    again = webhooks.enqueue(review.pk)  # a repeated follow-up: the operation keys give the same jobs

    assert first == again and len(first) == 3
    assert sorted((d.payload["endpoint"], d.payload["event"]) for d in deliveries()) == sorted([
        (both.pk, "document.finished"), (both.pk, "document.needs_action"), (finished_only.pk, "document.finished")])


def test_a_review_not_needing_action_sends_only_document_finished(accept, clock, alice, receiver):
    endpoint(alice, receiver().url)
    webhooks.enqueue(completed_review(accept, clock, needs_action=False).pk)
    assert [d.payload["event"] for d in deliveries()] == ["document.finished"]


# --- Retries ----------------------------------------------------------------------------------


def test_a_receiver_that_never_answers_gets_the_event_once_and_the_delivery_is_unknown(accept, clock, alice,
                                                                                       receiver):
    r = receiver("hang", 200)
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)

    assert run(clock)
    clock.advance(minutes=2)  # past any backoff: nothing is sent again
    assert run(clock) is False

    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code, delivery.attempts) == ("unknown", "webhook_no_answer", 1)
    assert delivery.external_started_at is not None and "not known" in delivery.last_error
    assert len(r.requests) == 1


def test_a_receiver_slower_than_the_limit_receives_each_of_12_events_exactly_once(accept, clock, alice, receiver):
    """Each answer comes after the limit: the request was sent, so whether the receiver acted on
    it is not known. Every delivery is unknown, and no event arrives twice."""
    r = receiver(delay=2.0)  # 200, two seconds after each request; the limit is 0.5 s
    endpoint(alice, r.url)
    reviews = [completed_review(accept, clock) for _ in range(12)]
    made = [d for review in reviews for d in webhooks.enqueue(review.pk)]
    assert len(made) == 12

    for _ in range(6):  # every delivery, then every retry the queue would make after its backoff
        while run(clock):
            pass
        clock.advance(minutes=10)

    assert [d.state for d in deliveries()] == ["unknown"] * 12
    assert sorted(r.received().values()) == [1] * 12
    assert set(r.received()) == {f"evt_{pk}" for pk in made}


def test_a_refused_connection_sends_nothing_and_is_retried_then_delivered_once(accept, clock, alice, receiver):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: the connection is refused
    hook = endpoint(alice, f"http://127.0.0.1:{closed.getsockname()[1]}/hooks")
    webhooks.enqueue(completed_review(accept, clock).pk)
    try:
        assert run(clock)
    finally:
        closed.close()
    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code, delivery.external_started_at) == ("queued", "webhook_unreachable",
                                                                                     None)
    r = receiver()
    WebhookEndpoint.objects.filter(pk=hook.pk).update(url=r.url)
    clock.advance(minutes=2)  # past the backoff
    assert run(clock)

    (delivery,) = deliveries()
    assert (delivery.state, delivery.attempts) == ("completed", 2)
    assert len(r.requests) == 1


def test_a_failed_tls_handshake_sends_nothing_and_is_retried(accept, clock, alice, receiver):
    r = receiver()  # plain HTTP: the TLS handshake fails before any byte of the request is written
    endpoint(alice, r.url.replace("http://", "https://"))
    webhooks.enqueue(completed_review(accept, clock).pk)
    assert run(clock)
    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code, delivery.external_started_at) == ("queued", "webhook_unreachable",
                                                                                     None)
    assert r.requests == []


# --- One limit for the whole request --------------------------------------------------------------


def test_a_receiver_dripping_its_answer_is_cut_off_at_the_whole_request_limit(accept, clock, alice, receiver,
                                                                              settings):
    """Each byte of the answer comes well within the limit, the answer as a whole never does: the
    delivery ends at the limit (not when the receiver stops), unknown, sent once."""
    settings.WEBHOOKS = {**settings.WEBHOOKS, "TIMEOUT_SECONDS": 1.0}
    r = receiver("drip", drip_every=0.2)  # the status line and headers, one byte every 0.2 s: ~15 s
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)

    started = time.monotonic()
    assert run(clock)
    took = time.monotonic() - started

    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code) == ("unknown", "webhook_no_answer")
    assert "longer than 1 s" in delivery.last_error
    assert 1.0 <= took < 3.0
    assert len(r.requests) == 1


def test_a_receiver_dripping_the_body_after_its_200_is_delivered_without_waiting_for_it(accept, clock, alice,
                                                                                     receiver):
    r = receiver("drip-body", drip_every=0.2)  # 200 and its headers at once, then a body byte every 0.2 s
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)

    started = time.monotonic()
    assert run(clock)

    assert time.monotonic() - started < 0.5  # the limit is 0.5 s: its status is all a delivery reads
    (delivery,) = deliveries()
    assert (delivery.state, delivery.result["status"]) == ("completed", 200)


def test_a_500_then_200_is_delivered_once_on_the_second_attempt(accept, clock, alice, receiver):
    r = receiver(500, 200)
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)

    assert run(clock)
    assert deliveries()[0].state == "queued"
    clock.advance(minutes=2)
    assert run(clock)
    clock.advance(minutes=2)
    assert run(clock) is False  # nothing more to do

    (delivery,) = deliveries()
    assert (delivery.state, delivery.attempts, delivery.result["status"]) == ("completed", 2, 200)
    assert len(r.requests) == 2  # the 500 and the one delivery


@pytest.mark.parametrize("status, state", [(404, "dead"), (400, "dead"), (429, "queued"), (408, "queued"),
                                           (503, "queued")])
def test_4xx_fails_for_good_but_408_and_429_are_retried(accept, clock, alice, receiver, status, state):
    r = receiver(status)
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)
    assert run(clock)
    assert deliveries()[0].state == state
    assert len(r.requests) == 1


# --- Tenants ----------------------------------------------------------------------------------


def test_a_tenants_event_never_goes_to_another_tenants_endpoint(accept, clock, alice, bob, receiver):
    mine, theirs = receiver(), receiver()
    endpoint(alice, mine.url)
    bobs = endpoint(bob, theirs.url)
    review = completed_review(accept, clock, user=alice, needs_action=True)

    webhooks.enqueue(review.pk)
    while run(clock):
        pass

    assert len(mine.requests) == 2 and theirs.requests == []
    assert {d.payload["endpoint"] for d in deliveries()} != {bobs.pk}
    # A delivery of alice's tenant naming bob's endpoint (or bob's job) sends nothing.
    forged = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind=webhooks.KIND_NAME,
                          payload={"job": review.pk, "event": "document.finished", "endpoint": bobs.pk},
                          operation_key="forged", now=clock.now(), offered_only=False).job
    assert run(clock)
    forged.refresh_from_db()
    assert (forged.state, forged.result["sent"]) == ("completed", False)
    assert theirs.requests == []


def test_users_cannot_submit_deliveries(accept, alice):
    assert kinds.offered(webhooks.KIND_NAME) is None


# --- Where deliveries may go (SSRF) ------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "http://localhost/", "http://10.1.2.3/",
                                 "http://192.168.0.1/", "http://169.254.169.254/latest/meta-data",
                                 "http://[::1]/", "http://0.0.0.0/"])
def test_private_and_loopback_addresses_are_refused_unless_allowed(url):
    with pytest.raises(webhooks.UnsafeURL, match="non-public"):
        webhooks.target(url, allow_private=False)
    assert webhooks.target(url, allow_private=True).address


# IPv6 forms that reach a non-public IPv4 address through the host's stack or a gateway.
TRANSITION_ADDRESSES = [
    "::127.0.0.1",  # IPv4-compatible: loopback
    "::a00:1",  # IPv4-compatible: 10.0.0.1
    "::ffff:127.0.0.1",  # IPv4-mapped: loopback
    "::ffff:169.254.169.254",  # IPv4-mapped: the cloud's metadata address
    "64:ff9b::a00:1",  # NAT64 (well-known prefix): 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64: 169.254.169.254
    "64:ff9b:1::808:808",  # local-use NAT64: translated to whatever network its operator chose
    "2002:7f00:1::",  # 6to4: 127.0.0.1
    "2002:c0a8:1::1",  # 6to4: 192.168.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo: its client 192.0.2.45 (documentation range)
    "2001:0:a00:1::1",  # Teredo: its server 10.0.0.1
]


@pytest.mark.parametrize("address", TRANSITION_ADDRESSES)
def test_ipv6_transition_addresses_of_non_public_ipv4_are_refused(address):
    with pytest.raises(webhooks.UnsafeURL, match="non-public"):
        webhooks.target(f"http://[{address}]:8080/hooks", allow_private=False)


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"])
def test_ipv6_transition_addresses_of_public_ipv4_are_allowed(address):
    assert webhooks.target(f"http://[{address}]/hooks", allow_private=False).address == address


@pytest.mark.parametrize("address", TRANSITION_ADDRESSES)
def test_a_name_resolving_to_a_transition_address_is_refused_at_save_and_at_send(
        settings, monkeypatch, accept, clock, alice, address):
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "hooks.example":
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False}
    form = WebhookEndpointForm(data={"tenant": alice.tenant_id, "url": "https://hooks.example/x",
                                     "document_finished": True, "active": True})
    assert not form.is_valid() and "non-public" in str(form.errors["url"])

    endpoint(alice, "https://hooks.example/x")  # saved before the name changed its answer
    webhooks.enqueue(completed_review(accept, clock).pk)
    assert run(clock)
    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code, delivery.external_started_at) == ("dead", "webhook_url_refused",
                                                                                     None)
    assert address in delivery.last_error


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "http://user:pw@example.com/",
                                 "javascript:alert(1)"])
def test_only_http_urls_without_credentials(url):
    with pytest.raises(webhooks.UnsafeURL):
        webhooks.target(url, allow_private=True)


def test_the_admin_form_refuses_a_loopback_url_in_production_settings(settings, alice):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False}
    form = WebhookEndpointForm(data={"tenant": alice.tenant_id, "url": "http://127.0.0.1:9/x", "secret": "x" * 20,
                                     "document_finished": True, "active": True})
    assert not form.is_valid() and "non-public" in str(form.errors["url"])


def test_a_delivery_whose_url_became_private_fails_for_good_without_sending(settings, accept, clock, alice, receiver):
    r = receiver()
    endpoint(alice, r.url)
    webhooks.enqueue(completed_review(accept, clock).pk)
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False}
    assert run(clock)
    (delivery,) = deliveries()
    assert (delivery.state, delivery.failure_code) == ("dead", "webhook_url_refused")
    assert r.requests == []


# --- A worker killed during the request: unknown, sent at most once ---------------------------


@pytest.mark.slow
def test_a_worker_killed_during_a_delivery_leaves_it_unknown_and_sent_once(transactional_db, alice, receiver,
                                                                          tmp_path):
    from tests.workers import Workers

    r = receiver("block")
    endpoint(alice, r.url)
    now = system_clock.now()
    job = queue.accept(scope_id=alice.tenant_id, user_id=alice.pk, kind="diagnostic.noop", payload={},
                       operation_key="review", now=now, offered_only=False).job
    got = queue.claim(now=now, worker="w0")
    assert got is not None
    queue.complete(job_id=got.job_id, epoch=got.epoch, result={}, now=now, summary=kinds.Summary("ok", "OK", False))
    (delivery_id,) = webhooks.enqueue(job.pk)
    workers = Workers(tmp_path / "runworkers.log", "--processes", "1", "--lease", "1", "--poll-interval", "0.2",
                      WEBHOOKS_ALLOW_PRIVATE="1")
    try:
        assert r.got.wait(30), "the delivery never reached the receiver"
        delivery = Job.objects.get(pk=delivery_id)
        assert delivery.state == "leased" and delivery.external_started_at is not None
        os.kill(int(delivery.leased_by.rsplit(":", 1)[1]), signal.SIGKILL)

        wait_for(lambda: Job.objects.get(pk=delivery_id).state == "unknown")
        r.release.set()
        # The replacement worker keeps polling; nothing sends it again.
        wait_for(lambda: "pid=" in workers.text() and "exitcode=-9" in workers.text())
        assert Job.objects.get(pk=delivery_id).state == "unknown"
        assert len(r.requests) == 1
        assert JobEvent.objects.filter(job_id=delivery_id, to_state="unknown", actor="recovery").exists()
    finally:
        workers.kill_all()
    assert len(r.requests) == 1


# --- A receiver dripping its answers, against real worker processes ---------------------------------

DRIP_LIMIT = 4.0  # WEBHOOKS_TIMEOUT_SECONDS for these tests: the whole request


def drip_deliveries(user, receiver, *, reviews: int) -> list[int]:
    """Two of ``user``'s endpoints on ``receiver`` and ``reviews`` completed reviews: a delivery
    of each review to each endpoint, queued."""
    hooks = [endpoint(user, receiver.url, document_needs_action=False) for _ in range(2)]
    completed: list[int] = []
    for n in range(reviews):  # completed as set-up, never offered to a worker that may be running
        now = system_clock.now()
        review = queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="diagnostic.noop", payload={},
                              operation_key=f"review-{n}", now=now, offered_only=False,
                              available_at=now + timedelta(days=1)).job
        Job.objects.filter(pk=review.pk, state="queued").update(state="completed", finished_at=now, outcome="ok")
        completed.append(review.pk)
    made = [d for pk in completed for d in webhooks.enqueue(pk)]
    assert len(made) == reviews * len(hooks)
    return made


def seconds_sending(delivery_id: int) -> float:
    """From the delivery's claim to the write that ended it, on the queue's clock."""
    events = list(JobEvent.objects.filter(job_id=delivery_id).order_by("id").values("to_state", "at"))
    claimed = max(e["at"] for e in events if e["to_state"] == "leased")
    ended = max(e["at"] for e in events if e["to_state"] in ("unknown", "queued", "completed", "dead"))
    return (ended - claimed).total_seconds()


@pytest.mark.slow
def test_deliveries_to_a_receiver_dripping_a_byte_every_3_s_each_end_at_the_whole_request_limit(
        transactional_db, alice, receiver, tmp_path):
    """The issue's receiver: it answers one byte every 3 s, each read well inside any per-read
    timeout. Each delivery ends at the limit, unknown, and reached the receiver once."""
    from tests.workers import Workers

    r = receiver(*["drip"] * 4, drip_every=3.0)
    made = drip_deliveries(alice, r, reviews=2)
    workers = Workers(tmp_path / "runworkers.log", "--processes", "2", "--poll-interval", "0.2",
                      WEBHOOKS_ALLOW_PRIVATE="1", WEBHOOKS_TIMEOUT_SECONDS=str(DRIP_LIMIT))
    try:
        wait_for(lambda: Job.objects.filter(pk__in=made, state="unknown").count() == len(made), timeout=120)
    finally:
        workers.kill_all()

    held = sorted(round(seconds_sending(pk), 2) for pk in made)
    print(f"deliveries to the dripping receiver: seconds from claim to end {held}")
    assert all(DRIP_LIMIT <= s < DRIP_LIMIT + 2 for s in held), held
    assert set(Job.objects.filter(pk__in=made).values_list("failure_code", flat=True)) == {"webhook_no_answer"}
    assert sorted(r.received().values()) == [1] * len(made)


REVIEW_TEXT = "Invoice INV-2026-17 from ACME GmbH, 14 March 2026, total EUR 1,234.50"


def review_seconds(user, key: str) -> float:
    """A review of ``user``'s, from its acceptance to its completion by the running workers."""
    started = time.monotonic()
    job = queue.accept(scope_id=user.tenant_id, user_id=user.pk, kind="document_review",
                       payload={"text": REVIEW_TEXT}, operation_key=key, now=system_clock.now(),
                       offered_only=False).job
    wait_for(lambda: Job.objects.get(pk=job.pk).state in Job.TERMINAL, timeout=120)
    took = time.monotonic() - started
    assert Job.objects.get(pk=job.pk).state == "completed"
    return took


@pytest.mark.slow
def test_another_tenants_review_finishes_in_its_usual_time_while_deliveries_drip(transactional_db, alice, bob,
                                                                                 receiver, tmp_path):
    """While deliveries to a dripping receiver are running, bob's review takes its usual time: each
    delivery holds a worker for the whole-request limit at most, and the per-kind fleet limit
    (``webhook.deliver``: one process at a time) leaves the other worker to the reviews."""
    from tests.workers import Workers

    limit = 10.0  # the default whole-request limit: a review waiting behind one would show it
    r = receiver(*["drip"] * 2, drip_every=3.0)
    workers = Workers(tmp_path / "runworkers.log", "--processes", "2", "--poll-interval", "0.2",
                      WEBHOOKS_ALLOW_PRIVATE="1", WEBHOOKS_TIMEOUT_SECONDS=str(limit))
    try:
        review_seconds(bob, "warm-up")  # the workers' first review loads what every later one reuses
        usual = review_seconds(bob, "usual")
        made = drip_deliveries(alice, r, reviews=1)  # one to each of the two endpoints, one after the other
        assert r.got.wait(30), "no delivery reached the dripping receiver"
        during = review_seconds(bob, "during")
        wait_for(lambda: Job.objects.filter(pk__in=made, state="unknown").count() == len(made), timeout=4 * limit + 60)
    finally:
        workers.kill_all()

    print(f"bob's review: {usual:.2f} s usually, {during:.2f} s while the deliveries drip")
    assert during < usual + 3.0 < limit
    assert sorted(r.received().values()) == [1] * len(made)


def test_a_failing_follow_up_costs_the_completed_job_nothing(accept, clock, register_kind, caplog):
    def broken(job_id: int) -> None:
        raise RuntimeError("follow-up broke")

    register_kind(kinds.Kind(name="test.followed", handler=lambda ctx: {"ok": True}, diagnostic=True,
                             on_completed=broken))
    job = accept("test.followed", {})
    assert run(clock)
    job.refresh_from_db()
    assert job.state == "completed"
    assert "on_completed_failed" in caplog.text


# --- Deliveries are the server's jobs, nobody's documents --------------------------------------------


def test_deliveries_are_filed_under_the_system_and_no_member_sees_them(client, make_member, accept, clock, alice,
                                                                       receiver):
    from jobs import tasks_backend
    from web import status

    carol = make_member("acme", "carol")  # alice's team, without the webhook permission
    endpoint(alice, receiver().url)
    review = completed_review(accept, clock, needs_action=True)
    counted = status.needing_action(tenant_id=alice.tenant_id, user_id=alice.pk)
    made = webhooks.enqueue(review.pk)
    assert len(made) == 2
    while run(clock):  # delivered: each has a result a member could otherwise read
        pass

    assert {j.submitted_by_id for j in deliveries()} == {tasks_backend.system_user_id()}
    assert {j.scope_id for j in deliveries()} == {alice.tenant_id}  # its endpoint's tenant: its fair share
    assert status.needing_action(tenant_id=alice.tenant_id, user_id=alice.pk) == counted
    for member in (alice, carol):
        client.force_login(member)
        listed = client.get("/jobs?scope=team", HTTP_ACCEPT="application/json").json()
        assert [j["id"] for j in listed["jobs"]] == [review.pk]
        html = client.get("/jobs?scope=team", HTTP_ACCEPT="text/html").content.decode()
        assert all(f"/jobs/{pk}" not in html for pk in made)
        csv_rows = client.get("/jobs/export.csv?scope=team").content.decode().splitlines()
        assert len(csv_rows) == 2  # the header and the review
        for pk in made:
            for url in (f"/jobs/{pk}", f"/jobs/{pk}/result.json"):
                answer = client.get(url, HTTP_ACCEPT="application/json")
                assert answer.status_code == 404 and answer.json()["error"] == "not_found"

    root = make_member("ops", "root")
    root.is_staff = root.is_superuser = True
    root.save()
    client.force_login(root)
    assert client.get(f"/admin/jobs/job/{made[0]}/change/").status_code == 200


# --- Staff --------------------------------------------------------------------------------------


def test_staff_see_an_endpoints_deliveries_with_their_state(client, make_member, accept, clock, alice, receiver):
    root = make_member("ops", "root")
    root.is_staff = root.is_superuser = True
    root.save()
    hook = endpoint(alice, receiver(404).url)
    (delivery_id,) = webhooks.enqueue(completed_review(accept, clock).pk)
    assert run(clock)
    client.force_login(root)

    page = client.get(f"/admin/agent/webhookendpoint/{hook.pk}/change/")

    assert page.status_code == 200
    text = page.content.decode()
    assert f"/admin/jobs/job/{delivery_id}/change/" in text
    assert "document.finished" in text and "dead" in text and "answered 404" in text


def staff_with(make_member, *codenames: str):
    from django.contrib.auth.models import Permission

    member = make_member("ops", f"staff-{'-'.join(codenames)}")
    member.is_staff = True
    member.save()
    member.user_permissions.set(Permission.objects.filter(content_type__app_label="agent", codename__in=codenames))
    return member


ENDPOINT_SECRET = "whsec_" + "S" * 40


@pytest.mark.parametrize("codenames", [("view_webhookendpoint",), ("view_webhookendpoint", "change_webhookendpoint")])
def test_the_admin_shows_a_secrets_prefix_only_whatever_the_permission(client, make_member, alice, codenames):
    hook = endpoint(alice, "https://hooks.example/x", secret=ENDPOINT_SECRET)
    client.force_login(staff_with(make_member, *codenames))

    for url in ("/admin/agent/webhookendpoint/", f"/admin/agent/webhookendpoint/{hook.pk}/change/"):
        page = client.get(url)
        assert page.status_code == 200
        assert "S" * 8 not in page.content.decode()
    assert "whsec_SSSS…" in client.get(f"/admin/agent/webhookendpoint/{hook.pk}/change/").content.decode()


def test_rotating_a_secret_is_an_admin_action_showing_the_new_one_once(client, make_member, alice):
    hook = endpoint(alice, "https://hooks.example/x", secret=ENDPOINT_SECRET)
    rotate = {"action": "rotate_secret", "_selected_action": [hook.pk]}

    client.force_login(staff_with(make_member, "view_webhookendpoint"))
    client.post("/admin/agent/webhookendpoint/", rotate)
    assert WebhookEndpoint.objects.get(pk=hook.pk).secret == ENDPOINT_SECRET  # viewing is not rotating

    client.force_login(staff_with(make_member, "view_webhookendpoint", "change_webhookendpoint"))
    shown = client.post("/admin/agent/webhookendpoint/", rotate)
    new = WebhookEndpoint.objects.get(pk=hook.pk).secret
    assert new != ENDPOINT_SECRET and new.startswith("whsec_")
    assert shown.status_code == 200 and new in shown.content.decode()
    assert new not in client.get(f"/admin/agent/webhookendpoint/{hook.pk}/change/").content.decode()


def test_an_endpoint_added_in_the_admin_gets_a_secret_made_for_it_and_shown_once(client, make_member, alice):
    client.force_login(staff_with(make_member, "view_webhookendpoint", "add_webhookendpoint",
                                  "change_webhookendpoint"))
    answer = client.post("/admin/agent/webhookendpoint/add/", {
        "tenant": alice.tenant_id, "url": "http://127.0.0.1:9/x", "secret": "typed-by-staff",
        "document_finished": "on", "active": "on"})
    made = WebhookEndpoint.objects.get()
    assert made.secret.startswith("whsec_") and made.secret in answer.content.decode()
    assert made.secret not in client.get(f"/admin/agent/webhookendpoint/{made.pk}/change/").content.decode()


def test_catch_up_queues_what_a_worker_dying_after_the_completion_missed_and_nothing_twice(
        accept, clock, alice, bob, receiver):
    endpoint(alice, receiver().url)
    missed, followed, unsubscribed = (completed_review(accept, clock, user=user) for user in (alice, alice, bob))
    Job.objects.filter(pk__in=[missed.pk, followed.pk, unsubscribed.pk]).update(kind="document_review")
    (_already,) = webhooks.enqueue(followed.pk)  # its follow-up ran; missed's worker died before it

    clock.advance(minutes=10)
    assert webhooks.catch_up(since=timedelta(minutes=5), now=clock.now()) == []  # older than the window
    made = webhooks.catch_up(since=timedelta(minutes=60), now=clock.now())

    assert [Job.objects.get(pk=m).payload["job"] for m in made] == [missed.pk]
    assert webhooks.catch_up(since=timedelta(minutes=60), now=clock.now()) == []
    assert sorted(d.payload["job"] for d in deliveries()) == sorted([missed.pk, followed.pk])


def catch_ups(state=queue.QUEUED) -> list[Job]:
    return list(Job.objects.filter(kind=webhooks.CATCHUP, state=state).order_by("available_at"))


def test_the_catch_up_job_run_by_the_worker_queues_missed_deliveries_then_its_next_slot_once(
        accept, clock, alice, receiver, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "CATCHUP_EVERY_MINUTES": 5, "CATCHUP_WINDOW_MINUTES": 60}
    got = receiver()
    endpoint(alice, got.url, document_needs_action=False)
    assert webhooks.schedule_catch_up(now=clock.now()).pk == webhooks.schedule_catch_up(now=clock.now()).pk
    (first,) = catch_ups()  # as the review's start queued it, before its completion
    assert first.available_at == webhooks.next_slot(clock.now()) and first.available_at > clock.now()
    # Completed without the post-commit follow-up: the worker died between the two.
    missed = completed_review(accept, clock)
    Job.objects.filter(pk=missed.pk).update(kind=webhooks.REVIEW_KIND)
    assert deliveries() == []

    clock.advance(minutes=5)
    assert run(clock)  # the catch-up: the only job due
    assert Job.objects.get(pk=first.pk).state == queue.COMPLETED
    assert [(d.payload["job"], d.payload["event"]) for d in deliveries()] == [(missed.pk, webhooks.FINISHED)]
    (second,) = catch_ups()
    assert second.available_at == first.available_at + timedelta(minutes=5)

    clock.advance(minutes=5)
    while run(clock):  # the second catch-up and the delivery
        pass
    assert Job.objects.get(pk=second.pk).state == queue.COMPLETED
    assert len(deliveries()) == 1 and deliveries()[0].state == queue.COMPLETED  # caught up once, never twice
    assert len(got.requests) == 1
    assert [j.available_at for j in catch_ups()] == [second.available_at + timedelta(minutes=5)]
    assert len(catch_ups(queue.COMPLETED)) == 2


def test_no_catch_up_is_queued_while_no_endpoint_is_active(clock, alice):
    endpoint(alice, "https://hooks.example/x", active=False)
    assert webhooks.schedule_catch_up(now=clock.now()) is None
    assert catch_ups() == []


def test_a_review_starting_queues_the_catch_up(accept, clock, alice):
    from jobs.context import JobContext

    endpoint(alice, "https://hooks.example/x")
    job = accept("diagnostic.noop", {})
    claim = queue.claim(now=clock.now(), worker="w0")
    assert claim is not None and claim.job_id == job.pk
    webhooks.review_started(JobContext(claim, clock=clock))
    webhooks.review_started(JobContext(claim, clock=clock))
    assert [j.available_at for j in catch_ups()] == [webhooks.next_slot(clock.now())]
