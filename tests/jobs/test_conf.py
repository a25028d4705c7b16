"""The queue's settings: typed, checked with a sentence naming the bad key, rebuilt when changed."""

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from jobs.conf import build, queue_settings
from jobs.worker import Worker


def test_the_settings_are_typed_values(settings):
    conf = queue_settings()
    assert conf.lease == timedelta(seconds=settings.JOBS["DEFAULT_LEASE_SECONDS"])
    assert conf.completion_flush_seconds == settings.JOBS["COMPLETION_FLUSH_MS"] / 1000
    assert queue_settings() is conf  # built once


def test_a_changed_setting_is_seen_by_the_next_worker(settings):
    settings.JOBS = {**settings.JOBS, "DEFAULT_LEASE_SECONDS": 7, "PREFETCH_WINDOW_SECONDS": 0.5}
    assert queue_settings().lease == timedelta(seconds=7)
    worker = Worker(name="w", listen=False)
    try:
        assert worker.lease == timedelta(seconds=7) and worker.prefetch_window == 0.5
    finally:
        worker.close()


@pytest.mark.parametrize(("key", "value", "words"), [
    ("DEFAULT_LEASE_SECONDS", 0, "DEFAULT_LEASE_SECONDS (JOBS_LEASE_SECONDS) must be above 0"),
    ("DEFAULT_DEADLINE_SECONDS", -5, "DEFAULT_DEADLINE_SECONDS (JOBS_DEADLINE_SECONDS) must be above 0"),
    ("PREFETCH", 0, "PREFETCH (JOBS_PREFETCH) must be above 0"),
    ("HANDLER_NICE", 20, "HANDLER_NICE (JOBS_HANDLER_NICE) must be from 0 to 19, not 20"),
    ("HANDLER_NICE", -1, "HANDLER_NICE (JOBS_HANDLER_NICE) must be from 0 to 19, not -1"),
    ("COMPLETION_FLUSH_MS", -1, "COMPLETION_FLUSH_MS (JOBS_COMPLETION_FLUSH_MS) must not be negative"),
    ("RETRY_MAX_SECONDS", 1, "RETRY_MAX_SECONDS must be at least RETRY_BASE_SECONDS"),
    ("PROVIDER_SLOTS", "four", "wrong type"),
    ("KIND_LIMITS", {"document_review": {"memory": 10}}, "unknown limits ['memory']"),
    ("KIND_LIMITS", {"document_review": {"cpu_seconds": 0}}, "must be a number above 0"),
    ("KIND_MAX_RUNNING", {"webhook.deliver": 0}, "JOBS_KIND_MAX_RUNNING['webhook.deliver'] must be a whole number"),
    ("KIND_MAX_RUNNING", {"webhook.deliver": "2"}, "from 1 to 1000 (or null: no limit), not '2'"),
])
def test_a_bad_setting_is_refused_with_its_name(settings, key, value, words):
    with pytest.raises(ImproperlyConfigured) as refused:
        build({**settings.JOBS, "RETRY_BASE_SECONDS": 2, key: value})
    assert words in str(refused.value)


def test_a_missing_setting_is_named(settings):
    jobs = dict(settings.JOBS)
    del jobs["MAX_ATTEMPTS"]
    with pytest.raises(ImproperlyConfigured, match="MAX_ATTEMPTS"):
        build(jobs)


def test_start_up_stops_on_a_bad_setting(settings):
    from django.apps import apps

    settings.JOBS = {**settings.JOBS, "DEFAULT_LEASE_SECONDS": 0}
    with pytest.raises(ImproperlyConfigured, match="JOBS_LEASE_SECONDS"):
        apps.get_app_config("jobs").ready()
