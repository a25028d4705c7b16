"""Fixtures for the web tests: API and browser clients for members, jobs in each state."""

from __future__ import annotations

import itertools

import pytest
from django.test import Client

from jobs import kinds, queue, tokens

_keys = itertools.count(1)


def _echo(ctx):
    return {"echo": ctx.payload}


# A diagnostic kind that takes text and small documents, so the web tests do not depend on
# the agent app's document_review kind.
ECHO = kinds.get("webtest.echo") or kinds.register(kinds.Kind(
    name="webtest.echo",
    handler=_echo,
    payload_schema={"type": "object", "properties": {"text": {"type": "string", "maxLength": 4000}},
                    "additionalProperties": False},
    max_payload_bytes=8 * 1024,
    accepts_document=True,
    max_document_bytes=4 * 1024,
    diagnostic=True,
    description="Echoes its payload; for the web tests.",
))


@pytest.fixture(autouse=True)
def _web_settings(settings):
    settings.JOBS = {**settings.JOBS, "DIAGNOSTIC_KINDS": True}


@pytest.fixture
def api_client():
    """A client that speaks as API clients do: a bearer token, no CSRF token, no session."""

    def make(user) -> Client:
        return Client(headers={"Authorization": f"Bearer {tokens.issue(user)}"}, enforce_csrf_checks=True)

    return make


@pytest.fixture
def browser_client():
    """A logged-in browser: session cookie, HTML Accept header, CSRF enforced."""

    def make(user) -> Client:
        client = Client(headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, enforce_csrf_checks=True)
        client.force_login(user)
        return client

    return make


@pytest.fixture
def completed_job(accept, clock):
    """Accept a job as alice, then claim and complete it with ``result``."""

    def make(result: dict, **kwargs):
        job = accept(**kwargs)
        claim = queue.claim(now=clock.now(), worker="test")
        assert claim is not None and claim.job_id == job.pk
        assert queue.complete(job_id=job.pk, epoch=claim.epoch, result=result, now=clock.now())
        job.refresh_from_db()
        return job

    return make


def key() -> str:
    return f"key-{next(_keys)}"
