"""``manage.py capacity``: the example workload, and rates observed in the job table."""

from __future__ import annotations

import dataclasses
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from jobs import queue
from ops.capacity import Workload

from .conftest import SECRET

EXAMPLE_ARGS = ["--rate", "6/min", "--service", "20", "--workers", "3", "--deadline", "90", "--burst", "12",
             "--pollers", "100", "--poll-interval", "1"]


def run(*args: str) -> str:
    out = StringIO()
    call_command("capacity", *args, stdout=out)
    return out.getvalue()


def test_the_command_prints_the_example_numbers():
    text = run(*EXAMPLE_ARGS)
    assert "λW = 2 jobs" in text
    assert "3 worker(s): 9/min" in text
    assert "Utilisation     67%" in text
    assert "4 wave(s) finishing at 20, 40, 60, 80 s; deadline 90 s, margin 10 s" in text
    assert "State writes    0.5/s" in text
    assert "Polling reads   100/s" in text
    assert "WARNING: Thin deadline margin" in text


def test_the_command_speaks_json_for_scripts():
    body = json.loads(run(*EXAMPLE_ARGS, "--json"))
    assert body["in_flight"] == pytest.approx(2)
    assert [w["finishes_at"] for w in body["waves"]] == [20, 40, 60, 80]
    assert body["burst_margin"] == 10


def test_options_left_out_take_the_workloads_own_defaults():
    body = json.loads(run("--rate", "6/min", "--service", "20", "--deadline", "90", "--json"))
    defaults = {f.name: f.default for f in dataclasses.fields(Workload) if f.default is not dataclasses.MISSING}
    assert {name: body["workload"][name] for name in defaults} == defaults
    assert body["waves"] == [] and body["reads_per_second"] == 0


def test_the_command_needs_a_rate_and_service_time_or_a_window():
    with pytest.raises(CommandError, match="--rate and --service"):
        run("--workers", "3")
    with pytest.raises(CommandError, match="not a rate"):
        run("--rate", "lots", "--service", "20")


@pytest.mark.django_db
def test_observed_takes_the_rate_from_acceptances_and_service_time_from_claim_to_complete(clock, accept, monkeypatch):
    from ops.management.commands import capacity as command

    # Six jobs accepted over the last hour, each completed 20 s after its claim.
    for _ in range(6):
        job = accept("opstest.echo", {"text": SECRET}, now=clock.now())
        c = queue.claim(now=clock.now(), worker="w")
        assert c.job_id == job.pk
        clock.advance(20)
        assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
        clock.advance(5 * 60)
    monkeypatch.setattr(command.queue_clock, "now", clock.now)
    body = json.loads(run("--observed", "1h", "--workers", "3", "--deadline", "90", "--json"))
    assert body["observed"] == {"window_seconds": 3600, "arrivals": 6, "completions": 6}
    assert body["workload"]["rate"] == pytest.approx(6 / 3600)
    assert body["workload"]["service"] == pytest.approx(20)
    assert SECRET not in json.dumps(body)


@pytest.mark.django_db
def test_observed_without_completions_asks_for_the_service_time():
    with pytest.raises(CommandError, match="give the service time"):
        run("--observed", "1h")
    assert "λW = 0 jobs" in run("--observed", "1h", "--service", "20")
