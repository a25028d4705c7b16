"""The queue's settings: typed, checked with a sentence naming the bad key, rebuilt when changed."""

from datetime import timedelta

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from jobs.conf import DEFAULTS, build, queue_settings
from jobs.worker import Worker


def test_the_settings_are_typed_values(settings):
    settings.JOBS = {**settings.JOBS, "DEFAULT_LEASE_SECONDS": "12.5", "COMPLETION_FLUSH_MS": 40}
    conf = queue_settings()
    assert conf.lease == timedelta(seconds=12.5)
    assert conf.completion_flush_seconds == 0.04
    assert queue_settings() is conf  # built once


def test_a_project_that_sets_nothing_gets_the_defaults(settings):
    """Every key is optional: an empty ``JOBS``, or none at all, is the queue as shipped."""
    settings.JOBS = {}
    conf = queue_settings()
    assert conf == build({key: value for key, value in DEFAULTS.items()})
    assert (conf.max_attempts, conf.lease, conf.deadline, conf.expected_wait) == (
        3, timedelta(seconds=30), timedelta(seconds=300), timedelta(seconds=120))
    assert (conf.retry_base_seconds, conf.retry_max_seconds, conf.diagnostic_kinds, conf.isolate_handlers) == (
        2, 60, False, True)
    assert (conf.handler_nice, conf.fair_claims, conf.scope_max_waiting, conf.scope_full_retry_after) == (
        10, True, 5000, 30)
    assert (conf.prefetch, conf.prefetch_window_seconds, conf.completion_batch) == (32, 0.02, 32)
    assert (conf.completion_flush_seconds, conf.kind_limits, conf.kind_max_running) == (0.02, {}, {})
    del settings.JOBS
    queue_settings.cache_clear()
    assert queue_settings() == conf
    apps.get_app_config("jobs").ready()  # starts


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
    ("PREFETCH", "many", "JOBS['PREFETCH'] holds a value of the wrong type: 'many'"),
    ("KIND_LIMITS", 7, "JOBS['KIND_LIMITS'] holds a value of the wrong type"),
    ("KIND_LIMITS", {"document_review": {"memory": 10}}, "unknown limits ['memory']"),
    ("KIND_LIMITS", {"document_review": {"cpu_seconds": 0}}, "must be a number above 0"),
    ("KIND_MAX_RUNNING", {"webhook.deliver": 0}, "JOBS_KIND_MAX_RUNNING['webhook.deliver'] must be a whole number"),
    ("KIND_MAX_RUNNING", {"webhook.deliver": "2"}, "from 1 to 1000 (or null: no limit), not '2'"),
])
def test_a_bad_setting_is_refused_with_its_name(settings, key, value, words):
    with pytest.raises(ImproperlyConfigured) as refused:
        build({**settings.JOBS, "RETRY_BASE_SECONDS": 2, key: value})
    assert words in str(refused.value)


def test_a_misspelt_key_is_named_not_ignored():
    with pytest.raises(ImproperlyConfigured, match=r"unknown keys \['PREFETCH_WINDOW'\]"):
        build({"PREFETCH_WINDOW": 0.5})


def test_start_up_stops_on_a_bad_setting(settings):
    settings.JOBS = {**settings.JOBS, "DEFAULT_LEASE_SECONDS": 0}
    with pytest.raises(ImproperlyConfigured, match="JOBS_LEASE_SECONDS"):
        apps.get_app_config("jobs").ready()
