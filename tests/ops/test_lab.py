"""The lease lab: its four cases come out as ``lab.CASES`` expects, on a throwaway database."""

from __future__ import annotations

import json
import subprocess
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from jobs.models import Job
from ops import lab
from tests.conftest import PYTHON, ROOT


def leaselab(lease: int, crash: str) -> dict:
    out = StringIO()
    call_command("leaselab", "--lease", str(lease), "--crash", crash, "--json", stdout=out)
    return json.loads(out.getvalue())


def steps(timeline: dict, name: str) -> list[dict]:
    return [s for s in timeline["steps"] if s["step"] == name]


def test_healthy_10s_completes_with_no_replacement():
    tl = leaselab(10, "none")
    assert tl["final_state"] == "completed"
    assert tl["earliest_replacement"] is None
    assert tl["claims"] == 1 and not tl["automatic_new_attempt"]
    assert [s["step"] for s in tl["steps"]] == ["accept", "claim", "execute", "complete", "recover", "inspect"]
    assert tl["verdict"] == "Completed; no replacement attempt."


def test_crash_before_the_effect_at_10s_replaces_at_10s_redelivers_and_rejects_the_stale_completion():
    tl = leaselab(10, "before-effect")
    assert tl["earliest_replacement"] == 10
    assert tl["final_state"] == "completed"
    assert tl["stale_completion_rejected"] is True
    claims = steps(tl, "claim")
    assert [(c["t"], c["epoch"]) for c in claims] == [(0, 1), (10, 2)]
    stale, fresh = steps(tl, "complete")
    assert stale["applied"] is False and "epoch 1 superseded by 2" in stale["output"]
    assert fresh["applied"] is True and fresh["epoch"] == 2
    assert ("leased", "queued", "recovery") in {(e["from"], e["to"], e["actor"]) for e in tl["events"]}
    assert any(e["to"] == "rejected" and "stale completion" in e["reason"] for e in tl["events"])


def test_crash_before_the_effect_at_30s_replaces_only_at_30s():
    tl = leaselab(30, "before-effect")
    assert tl["earliest_replacement"] == 30
    assert tl["case"] == "Longer lease"
    assert tl["final_state"] == "completed" and tl["stale_completion_rejected"] is True


def test_crash_after_the_external_start_marker_is_unknown_and_never_attempted_again():
    tl = leaselab(10, "after-marker")
    assert tl["final_state"] == "unknown"
    assert tl["earliest_replacement"] is None
    assert tl["claims"] == 1 and tl["automatic_new_attempt"] is False
    assert any("external start" in e["reason"] for e in tl["events"])
    assert ("leased", "unknown", "recovery") in {(e["from"], e["to"], e["actor"]) for e in tl["events"]}
    assert tl["verdict"] == "Unknown; no new worker attempt authorised automatically."


def test_the_command_prints_the_same_timeline_as_text():
    result = subprocess.run([PYTHON, str(ROOT / "manage.py"), "leaselab", "--lease", "10", "--crash", "before-effect"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for word in ("ACCEPT", "CLAIM", "EXECUTE", "RECOVER", "COMPLETE", "INSPECT", "owner:", "input:", "output:",
                 "failure:", "earliest replacement: 10 s"):
        assert word in result.stdout


@pytest.mark.parametrize("lease", [4, 31, 0])
def test_a_lease_outside_5_to_30_seconds_is_refused_clearly(lease):
    with pytest.raises(CommandError, match="from 5 to 30"):
        call_command("leaselab", "--lease", str(lease), "--crash", "none")


def test_the_experiment_refuses_any_database_but_its_own_new_file(monkeypatch):
    monkeypatch.delenv(lab.THROWAWAY_ENV, raising=False)
    with pytest.raises(lab.LabError, match="throwaway"):
        lab.experiment(lease=10, crash="none")
    with pytest.raises(CommandError, match="throwaway"):
        call_command("leaselab", "--lease", "10", "--crash", "none", "--in-throwaway-database")


@pytest.mark.django_db
def test_running_the_lab_leaves_the_sites_own_database_alone(accept):
    accept("opstest.echo", {"text": "x"})
    before = list(Job.objects.values_list("id", "state", "epoch"))
    leaselab(10, "before-effect")
    assert list(Job.objects.values_list("id", "state", "epoch")) == before
