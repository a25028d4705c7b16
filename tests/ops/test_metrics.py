"""/metrics: staff or a token only; figures from the database; no document text in any label."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from jobs import queue
from ops import metrics, retention

from .conftest import SECRET

pytestmark = pytest.mark.django_db


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of the exposition, parsed by prometheus_client: (name, labels) -> value."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text) for s in family.samples
    }


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample, found by its name and its labels (in whatever order they are written)."""
    key = (name, frozenset(labels.items()))
    found = samples(text)
    if key not in found:
        raise AssertionError(f"no sample {name}{labels} in:\n{text}")
    return found[key]


@pytest.fixture
def scrape(clock):
    def scrape_() -> str:
        return metrics.exposition(metrics.JobsCollector(now=clock.now)).decode()

    return scrape_


def test_anonymous_scrapes_get_401(client_for):
    response = client_for().get("/metrics")
    assert response.status_code == 401
    assert "Bearer" in response["WWW-Authenticate"]
    assert response.content == b"log in as staff or send 'Authorization: Bearer <METRICS_TOKEN>'\n"


def test_members_who_are_not_staff_get_403(client_for, member):
    response = client_for(member).get("/metrics")
    assert response.status_code == 403
    assert response.content == b"staff only\n"


def test_staff_sessions_may_scrape(client_for, staff):
    response = client_for(staff).get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "jobsite_oldest_queued_job_age_seconds" in response.content.decode()


def test_the_configured_token_may_scrape_and_any_other_may_not(monkeypatch):
    monkeypatch.setenv("METRICS_TOKEN", "s3cret-scrape-token")
    assert Client(headers={"Authorization": "Bearer s3cret-scrape-token"}).get("/metrics").status_code == 200
    assert Client(headers={"Authorization": "Bearer wrong"}).get("/metrics").status_code == 401
    assert Client(headers={"Authorization": "Basic s3cret-scrape-token"}).get("/metrics").status_code == 401


def test_no_token_is_accepted_when_none_is_configured(monkeypatch):
    monkeypatch.delenv("METRICS_TOKEN", raising=False)
    assert Client(headers={"Authorization": "Bearer "}).get("/metrics").status_code == 401


def test_a_wrong_token_is_refused_even_beside_a_staff_session(monkeypatch, client_for, staff):
    monkeypatch.setenv("METRICS_TOKEN", "s3cret-scrape-token")
    client = client_for(staff)
    response = client.get("/metrics", headers={"Authorization": "Bearer wrong"})
    assert response.status_code == 401
    assert 'realm="metrics"' in response["WWW-Authenticate"]
    assert client.get("/metrics").status_code == 200


def test_a_token_with_characters_outside_ascii_is_refused_not_an_error(monkeypatch):
    monkeypatch.setenv("METRICS_TOKEN", "s3cret-scrape-token")
    assert Client(headers={"Authorization": "Bearer s3cret-scrapé-token"}).get("/metrics").status_code == 401


def test_jobs_are_counted_by_state_and_kind(in_state, scrape, clock):
    in_state("queued")
    in_state("queued")
    in_state("completed")
    in_state("dead")
    in_state("unknown")
    text = scrape()
    assert sample(text, "jobsite_jobs", state="queued", kind="opstest.echo") == 2
    assert sample(text, "jobsite_jobs", state="completed", kind="opstest.echo") == 1
    assert sample(text, "jobsite_jobs", state="dead", kind="opstest.echo") == 1
    assert sample(text, "jobsite_jobs", state="unknown", kind="opstest.echo") == 1
    assert sample(text, "jobsite_jobs", state="leased", kind="opstest.echo") == 0


def test_transitions_stale_rejections_and_recoveries_come_from_the_events(accept, clock, scrape):
    job = accept("opstest.echo", {"text": SECRET})
    first = queue.claim(now=clock.now(), worker="w1", lease=timedelta(seconds=10))
    clock.advance(11)
    assert queue.recover(now=clock.now()).requeued == [job.pk]
    second = queue.claim(now=clock.now(), worker="w2", lease=timedelta(seconds=10))
    assert not queue.complete(job_id=job.pk, epoch=first.epoch, result={}, now=clock.now())
    assert queue.complete(job_id=job.pk, epoch=second.epoch, result={}, now=clock.now())
    text = scrape()
    assert sample(text, "jobsite_job_transitions_total", **{"from": "none", "to": "queued"}) == 1
    assert sample(text, "jobsite_job_transitions_total", **{"from": "queued", "to": "leased"}) == 2
    assert sample(text, "jobsite_job_transitions_total", **{"from": "leased", "to": "queued"}) == 1
    assert sample(text, "jobsite_job_transitions_total", **{"from": "leased", "to": "completed"}) == 1
    assert sample(text, "jobsite_stale_rejections_total") == 1
    assert sample(text, "jobsite_recoveries_total", to="queued") == 1


def test_durations_and_queue_wait_are_histograms_of_recent_events(accept, clock, scrape):
    accept("opstest.echo", {"text": SECRET})
    clock.advance(4)  # waits 4 s in the queue
    c = queue.claim(now=clock.now(), worker="w1")
    clock.advance(12)  # runs 12 s
    assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
    text = scrape()
    assert sample(text, "jobsite_claim_to_complete_seconds_count") == 1
    assert sample(text, "jobsite_claim_to_complete_seconds_sum") == 12
    assert sample(text, "jobsite_claim_to_complete_seconds_bucket", le="10.0") == 0
    assert sample(text, "jobsite_claim_to_complete_seconds_bucket", le="20.0") == 1
    assert sample(text, "jobsite_queue_wait_seconds_sum") == 4
    assert sample(text, "jobsite_queue_wait_seconds_bucket", le="5.0") == 1
    clock.advance(2 * 3600)  # out of the one-hour window
    assert sample(scrape(), "jobsite_claim_to_complete_seconds_count") == 0


def test_the_oldest_queued_job_age_is_measured_from_acceptance(in_state, clock, scrape):
    assert sample(scrape(), "jobsite_oldest_queued_job_age_seconds") == 0
    in_state("queued")
    clock.advance(90)
    assert sample(scrape(), "jobsite_oldest_queued_job_age_seconds") == pytest.approx(90, abs=0.01)


def test_counters_do_not_go_down_when_retention_deletes_events(in_state, clock, scrape):
    in_state("completed")
    in_state("dead")
    before = scrape()
    report = retention.prune(older_than=timedelta(days=30), now=clock.now() + timedelta(days=31))
    assert report.jobs == 2
    after = scrape()
    for labels in ({"from": "none", "to": "queued"}, {"from": "queued", "to": "leased"},
                   {"from": "leased", "to": "completed"}, {"from": "leased", "to": "dead"}):
        assert sample(after, "jobsite_job_transitions_total", **labels) == \
            sample(before, "jobsite_job_transitions_total", **labels)
    # The gauge, unlike the counters, drops: the kind has no jobs left (so it may not be listed at all).
    completed = ("jobsite_jobs", frozenset({"state": "completed", "kind": "opstest.echo"}.items()))
    assert samples(before)[completed] == 1
    assert samples(after).get(completed, 0) == 0


def test_no_document_text_ids_or_tenants_in_the_exposition(in_state, scrape, accept):
    for state in ("queued", "completed", "dead", "unknown"):
        in_state(state, payload={"text": SECRET})
    text = scrape()
    assert SECRET not in text
    assert "acme" not in text and "alice" not in text
    labels = {name for _, pairs in samples(text) for name, _ in pairs}
    assert labels <= {"state", "kind", "from", "to", "le"}


def test_cancelled_jobs_are_counted_by_state_and_transition(scrape, accept, clock):
    job = accept("diagnostic.noop")
    queue.cancel(job_id=job.pk, actor="user:1", reason="", now=clock.now())
    text = scrape()
    assert sample(text, "jobsite_jobs", state="cancelled", kind="diagnostic.noop") == 1
    assert sample(text, "jobsite_job_transitions_total", **{"from": "queued", "to": "cancelled"}) == 1
