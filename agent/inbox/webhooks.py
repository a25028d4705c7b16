"""Tenants' outgoing webhooks: each event's delivery to each endpoint is a job of its own.

When a review completes (``document_review``'s ``Kind.on_completed``, called once the
completion committed), ``enqueue`` accepts one ``webhook.deliver`` job per active endpoint of
the review's tenant subscribed to the event, with an operation key made of the review's id,
the event and the endpoint: accepting it again (a repeated call) returns the same job, so an
event is never queued twice for an endpoint. A worker dying between that commit and the follow-up
leaves them to the ``webhook.catchup`` job, which runs every few minutes and queues its next one.

The delivery's handler POSTs the event, signed, with the external-start marker committed
first, and each event reaches a receiver at most once: a delivery is sent again only when
nothing of its request was written. A refused connection, a connection or TLS handshake that
fails or times out, a 5xx, a 408 or a 429 (the receiver's word that it did not take it) clear
the marker and fail the attempt (retried with the queue's backoff, up to its attempts). Once
the request is written, no answer within the limit (or a dropped connection) leaves the
marker: the receiver may have acted on it, so the delivery is ``unknown`` for staff, never sent
again by the queue, as when a worker dies during the request. Any other answer outside 2xx
fails it for good (a redirect is not followed). ``WEBHOOKS["TIMEOUT_SECONDS"]`` bounds the whole
request (connect, TLS, sending it, the answer's status and headers; its body is not read), not
each read (``agent.review.outgoing``): a receiver dripping its answer holds a worker that long, no more.

SSRF: a tenant chooses the URL, so the worker must not become a way into our own network.
Only http(s) URLs are sent to, and every address the host resolves to must be public
(not loopback, private, link-local such as a cloud's metadata address, reserved or
multicast, nor an IPv6 form carrying such an IPv4 address: mapped, compatible, NAT64, 6to4,
Teredo) unless ``WEBHOOKS["ALLOW_PRIVATE"]``; the request connects to the address that was
checked, so a name that resolves differently a moment later (DNS rebinding) is not followed.
"""

from __future__ import annotations

import hashlib
import hmac
import http
import ipaddress
import json
import logging
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import F
from django.urls import reverse

from agent.models import WebhookEndpoint
from agent.review import outgoing
from agent.review.outgoing import Target
from jobs import queue
from jobs.clock import queue_clock
from jobs.context import JobContext
from jobs.errors import ScopeQueueFull
from jobs.kinds import JobFailed, Kind
from jobs.models import Job

log = logging.getLogger("agent.webhooks")

KIND_NAME = "webhook.deliver"
CATCHUP = "webhook.catchup"
REVIEW_KIND = "document_review"  # whose completions send events (agent.review.workflow)
FINISHED, NEEDS_ACTION = "document.finished", "document.needs_action"
EVENTS = (FINISHED, NEEDS_ACTION)
RETRY_STATUSES = {408, 429}


class UnsafeURL(ValueError):
    """A URL the deliveries may not go to, and why in words."""


# --- Which events, to which endpoints ------------------------------------------------------


def events_of(needs_action: bool) -> list[str]:
    return [FINISHED, NEEDS_ACTION] if needs_action else [FINISHED]


def operation_key(job_id: int, event: str, endpoint_id: int) -> str:
    return f"webhook:{job_id}:{event}:{endpoint_id}"


# The state of a delivery's job, in the tenant admin's words.
DELIVERY_STATES = {queue.QUEUED: "waiting", queue.LEASED: "sending", queue.COMPLETED: "delivered",
                   queue.DEAD: "failed", queue.UNKNOWN: "not known (our staff check it)",
                   queue.CANCELLED: "cancelled"}
DELIVERIES_SHOWN = 20


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """One event's delivery to one endpoint, as the tenant's admin sees it (its job's state)."""

    endpoint_id: int
    event: str
    document_job_id: int  # the review whose event it is
    state: str  # the delivery job's state, in words
    attempts: int
    at: datetime  # when it was last changed
    error: str  # why its last attempt failed, once it failed for good


def latest_deliveries(tenant_id: int, *, limit: int = DELIVERIES_SHOWN) -> list[Delivery]:
    """The tenant's newest deliveries, to any of its endpoints, newest first."""
    jobs = (Job.objects.filter(kind=KIND_NAME, scope_id=tenant_id).order_by("-id")
            .values("state", "payload", "attempts", "updated_at", "last_error")[:limit])
    return [Delivery(endpoint_id=j["payload"].get("endpoint"), event=j["payload"].get("event", ""),
                     document_job_id=j["payload"].get("job"), state=DELIVERY_STATES.get(j["state"], j["state"]),
                     attempts=j["attempts"], at=j["updated_at"],
                     error=j["last_error"] if j["state"] == queue.DEAD else "") for j in jobs]


def on_completed(job_id: int) -> None:
    enqueue(job_id)


def enqueue(job_id: int) -> list[int]:
    """Queue a delivery of each of the completed job's events to each subscribed endpoint of its
    tenant; idempotent (the operation key). Returns the deliveries' job ids."""
    review = Job.objects.filter(pk=job_id, state=queue.COMPLETED).values(
        "scope_id", "submitted_by_id", "needs_action", "finished_at").first()
    if review is None or review["scope_id"] is None or review["submitted_by_id"] is None:
        return []
    # The completion's own time, on the clock that completed it (the database's, in production).
    now = review["finished_at"] or queue_clock.now()
    endpoints = list(WebhookEndpoint.objects.filter(tenant_id=review["scope_id"], active=True))
    if not endpoints:
        return []
    from jobs import tasks_backend

    system = tasks_backend.system_user_id()  # the server's job, nobody's document (filed in the tenant for its share)
    delivered: list[int] = []
    for event in events_of(review["needs_action"]):
        for endpoint in endpoints:
            if not (endpoint.document_finished if event == FINISHED else endpoint.document_needs_action):
                continue
            try:
                acceptance = queue.accept(
                    scope_id=review["scope_id"], user_id=system, kind=KIND_NAME,
                    payload={"job": job_id, "event": event, "endpoint": endpoint.pk},
                    operation_key=operation_key(job_id, event, endpoint.pk), now=now,
                    offered_only=False)
            except ScopeQueueFull:
                log.warning("job %s: webhook %s to endpoint %s not queued: the tenant's queue is full",
                            job_id, event, endpoint.pk)
                continue
            delivered.append(acceptance.job.pk)
    return delivered


def catch_up(*, since: timedelta, now: datetime | None = None) -> list[int]:
    """Queue the deliveries of the reviews completed within ``since`` that have none yet: those
    whose worker died between the completion's commit and its follow-up. Idempotent (the
    operation keys); ``manage.py webhookscatchup``. Returns the new deliveries' job ids."""
    now = now or queue_clock.now()
    tenants = WebhookEndpoint.objects.filter(active=True).values("tenant_id")
    reviews = set(Job.objects.filter(kind=REVIEW_KIND, state=queue.COMPLETED, scope_id__in=tenants,
                                     finished_at__gte=now - since).values_list("pk", flat=True))
    if not reviews:
        return []
    sent = {payload.get("job") for payload in Job.objects.filter(
        kind=KIND_NAME, scope_id__in=tenants, created_at__gte=now - since - timedelta(minutes=5),
    ).values_list("payload", flat=True)}
    made: list[int] = []
    for job_id in sorted(reviews - sent):
        made += enqueue(job_id)
    return made


# --- The catch-up, a job that queues its next one ----------------------------------------------


def _minutes(name: str) -> timedelta:
    return timedelta(minutes=float(cast(Any, settings.WEBHOOKS)[name]))


def next_slot(now: datetime) -> datetime:
    """The first slot of the catch-up's interval strictly after ``now`` (slots from the epoch)."""
    every = _minutes("CATCHUP_EVERY_MINUTES")
    start = datetime(1970, 1, 1, tzinfo=now.tzinfo)
    return start + ((now - start) // every + 1) * every


def schedule_catch_up(*, now: datetime) -> Job | None:
    """Make sure a catch-up is queued for the next slot while any endpoint is active (none
    otherwise). Idempotent: the operation key is the slot, so there is one per slot, never a pile."""
    if not WebhookEndpoint.objects.filter(active=True).exists():
        return None
    from jobs import tasks_backend

    at = next_slot(now)
    return queue.accept(
        scope_id=tasks_backend.scope_id(tasks_backend.SYSTEM_SCOPE), user_id=tasks_backend.system_user_id(),
        kind=CATCHUP, payload={}, operation_key=f"{CATCHUP}:{at.isoformat()}", now=now, offered_only=False,
        available_at=at,
    ).job


def review_started(ctx: JobContext) -> None:
    """A review started: a catch-up is queued before it can complete, so a worker dying between
    its completion and its follow-up leaves its deliveries to that catch-up. Never the review's
    failure."""
    try:
        schedule_catch_up(now=ctx.now())
    except Exception:  # the next review, or the running catch-up, schedules again
        log.warning("job %s: could not schedule the webhook catch-up", ctx.job_id, exc_info=True)


def run_catch_up(ctx: JobContext) -> dict[str, Any]:
    """The handler of ``webhook.catchup``: the next slot's first (a death here is retried by the
    queue and the chain goes on), then the missing deliveries of the window."""
    now = ctx.now()
    schedule_catch_up(now=now)
    made = catch_up(since=_minutes("CATCHUP_WINDOW_MINUTES"), now=now)
    return {"queued": len(made)}


CATCHUP_KIND = Kind(
    name=CATCHUP,
    handler=run_catch_up,
    payload_schema={"type": "object", "additionalProperties": False},
    max_payload_bytes=64,
    deadline=timedelta(hours=1),
    internal=True,
    description="Queue the webhook deliveries a worker's death missed, then the next catch-up.",
)


# --- Where a delivery may go ----------------------------------------------------------------

# IPv6 forms that carry an IPv4 address a gateway or the host's own stack may take it to: each is
# checked by the IPv4 address it reaches (``[::ffff:127.0.0.1]`` is 127.0.0.1).
COMPATIBLE = ipaddress.IPv6Network("::/96")  # IPv4-compatible (deprecated): ::a.b.c.d
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known NAT64 prefix: the last 32 bits
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # local-use NAT64: to whatever the operator chose


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches through a transition mechanism: mapped
    (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16, the relay
    delivers to the embedded address) and Teredo (2001::/32: its server and its client)."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in COMPATIBLE or ip in NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    return []


def non_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a delivery to ``ip`` could reach anything but the public internet: a non-global or
    multicast address, or an IPv6 address whose embedded IPv4 address is one (or local-use NAT64)."""
    if ip.is_multicast or not ip.is_global:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        return ip in NAT64_LOCAL or any(non_public(v4) for v4 in embedded_ipv4(ip))
    return False


def target(url: str, *, allow_private: bool | None = None) -> Target:
    """Resolve ``url`` to the address a delivery connects to, or raise ``UnsafeURL``."""
    allow = settings.WEBHOOKS["ALLOW_PRIVATE"] if allow_private is None else allow_private
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeURL("only http:// and https:// URLs with a host are allowed")
    if parts.username or parts.password:
        raise UnsafeURL("the URL may not carry a user name or password")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (ValueError, OSError) as exc:
        raise UnsafeURL(f"the host cannot be resolved ({type(exc).__name__})") from None
    addresses = [str(info[4][0]) for info in found]
    if not allow:
        for address in addresses:
            if non_public(ipaddress.ip_address(address.split("%", 1)[0])):
                raise UnsafeURL(f"the host resolves to a non-public address ({address}); refused")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, parts.hostname, addresses[0], port, path)


# --- The delivery ---------------------------------------------------------------------------


def _total() -> float:
    """The whole request's limit: connect, TLS, the request and the answer's headers, together."""
    return float(cast(Any, settings.WEBHOOKS)["TIMEOUT_SECONDS"])


def new_secret() -> str:
    """A fresh signing secret: 32 random bytes, URL-safe."""
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=`` and the hex HMAC-SHA256 of ``f"{timestamp}.{body}"`` under the secret."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def body_of(ctx: JobContext, review: Mapping[str, Any], event: str) -> bytes:
    """The event as JSON: ids, the outcome and the document's name, never its text."""
    status_url = str(cast(Any, settings.WEBHOOKS)["SITE_URL"]) + reverse("job_detail", args=[review["id"]])
    created = review["finished_at"] or ctx.now()
    return json.dumps({
        "event": event,
        "id": f"evt_{ctx.job_id}",  # the delivery's job: the same on every attempt, for receivers to dedupe
        "created": created.isoformat(),
        "data": {
            "job_id": review["id"],
            "status_url": status_url,
            "outcome": review["outcome"],
            "outcome_text": review["outcome_text"],
            "needs_action": review["needs_action"],
            "document_name": review["document_name"],
        },
    }, separators=(",", ":")).encode()


def deliver(ctx: JobContext) -> dict[str, Any]:
    """The handler of ``webhook.deliver``: POST one event to one endpoint of the job's tenant."""
    tenant_id = ctx.job()["scope_id"]
    event = ctx.payload["event"]
    endpoint = WebhookEndpoint.objects.filter(pk=ctx.payload["endpoint"], tenant_id=tenant_id).first()
    review = Job.objects.filter(pk=ctx.payload["job"], scope_id=tenant_id).values(
        "id", "finished_at", "outcome", "outcome_text", "needs_action",
        document_name=F("document__original_name")).first()
    if endpoint is None or not endpoint.active or review is None:
        return {"event": event, "sent": False, "why": "the endpoint or the document is gone, or switched off"}
    try:
        to = target(endpoint.url)
    except UnsafeURL as exc:
        raise JobFailed(f"webhook URL refused: {exc}", retryable=False, code="webhook_url_refused") from None
    body = body_of(ctx, review, event)
    timestamp = str(int(ctx.now().timestamp()))
    headers = {"Content-Type": "application/json", "User-Agent": "Docket-Webhooks/1",
               "X-Docket-Event": event, "X-Docket-Timestamp": timestamp,
               "X-Docket-Signature": sign(endpoint.secret, timestamp, body)}
    what = f"webhook {event} POST to endpoint {endpoint.pk}"
    ctx.mark_external_start(what)  # from here a worker's death leaves it unknown: never sent twice
    total = _total()
    try:
        answer = outgoing.post(to, body, headers, total=total)  # the status only: its body is not read
    except outgoing.NotSent as exc:
        ctx.clear_external_start(what)  # nothing of the request was written: sending it again sends it once
        raise JobFailed(f"webhook endpoint {endpoint.pk} unreachable: {exc.reason}",
                        code="webhook_unreachable") from None
    except outgoing.NoAnswer as exc:
        # Sent, and no answer within the limit: the receiver may have acted on it. The marker stays,
        # so the delivery is unknown (for staff to settle), never sent a second time by the queue.
        raise JobFailed(f"webhook endpoint {endpoint.pk} gave no answer within {total:g} s after the request "
                        f"was sent ({exc.reason}); whether it was received is not known",
                        code="webhook_no_answer") from None
    status = answer.status
    # A 2xx: the marker stays until the completion, so dying now is unknown, not resent.
    if http.HTTPStatus.OK <= status < http.HTTPStatus.MULTIPLE_CHOICES:
        return {"event": event, "endpoint": endpoint.pk, "sent": True, "status": status, "epoch": ctx.epoch,
                "ms": round(answer.seconds * 1000)}
    # Any other answer is the receiver's word that it did not take the event: safe to send again.
    ctx.clear_external_start(what)
    if status >= http.HTTPStatus.INTERNAL_SERVER_ERROR or status in RETRY_STATUSES:
        raise JobFailed(f"webhook endpoint {endpoint.pk} answered {status}", code="webhook_retry")
    raise JobFailed(f"webhook endpoint {endpoint.pk} answered {status}; not retried", retryable=False,
                    code="webhook_refused")


KIND = Kind(
    name=KIND_NAME,
    handler=deliver,
    payload_schema={
        "type": "object",
        "properties": {"job": {"type": "integer"}, "event": {"enum": list(EVENTS)},
                       "endpoint": {"type": "integer"}},
        "required": ["job", "event", "endpoint"],
        "additionalProperties": False,
    },
    max_payload_bytes=512,
    deadline=timedelta(hours=1),  # room for the queue's retries with backoff
    internal=True,  # queued by the server only, never offered to users
    max_running=1,  # a slow receiver holds one worker, never all of them (JOBS_KIND_MAX_RUNNING)
    description="Deliver one review event to one of the tenant's webhook endpoints.",
)
