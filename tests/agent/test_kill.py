"""Real worker processes killed mid-review: resume from the checkpoint, or ``unknown``."""

from __future__ import annotations

import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent import samples
from agent.models import Checkpoint
from documents import acceptance
from documents.store import Upload
from jobs import queue
from jobs.models import Job

from ..conftest import PYTHON, ROOT, child_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WORKER = Path(__file__).with_name("review_worker.py")


def start(settings, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, str(WORKER), *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=child_env(MEDIA_ROOT=str(settings.MEDIA_ROOT), **env),
    )


def read_until(proc: subprocess.Popen, wanted: str, timeout: float = 60) -> list[str]:
    lines: list[str] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith(wanted):
            return lines
    proc.kill()
    raise AssertionError(f"no {wanted!r} from the worker: {lines}; stderr: {proc.stderr.read()[-2000:]}")


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    proc.stderr.close()


def accept_review(alice) -> Job:
    pdf = samples.CLEAN_PDF
    return acceptance.accept(
        scope_id=alice.tenant_id, user_id=alice.pk, kind="document_review", payload={},
        operation_key=f"kill-{time.monotonic_ns()}", now=datetime.now(UTC),
        document=Upload(pdf.read_bytes(), pdf.name, "application/pdf"),
    ).job


def wait_for_lease_to_expire(job: Job) -> None:
    expires = Job.objects.get(pk=job.pk).lease_expires_at
    while datetime.now(UTC) <= expires:
        time.sleep(0.1)


def test_a_worker_killed_between_steps_is_resumed_at_the_saved_step(settings, alice):
    job = accept_review(alice)
    first = start(settings, "--lease", "2", "--block-after-step", "1")
    first_lines = read_until(first, "blocking")
    kill(first)
    assert first_lines[0] == f"claimed {job.pk} 1" and "checkpoint 1 extract" in first_lines

    checkpoint = Checkpoint.objects.get(job_id=job.pk)
    assert (checkpoint.step_index, checkpoint.next_step) == (1, "validate")
    assert Job.objects.get(pk=job.pk).state == "leased"

    wait_for_lease_to_expire(job)
    second = start(settings, "--lease", "30")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    lines = out.split("\n")
    assert lines[0] == f"claimed {job.pk} 2"
    assert [line for line in lines if line.startswith("checkpoint")] == ["checkpoint 2 validate", "checkpoint 3 draft"]
    assert "completed" in lines

    job.refresh_from_db()
    assert job.state == "completed" and job.epoch == 2
    assert [s["tool"] for s in job.result["steps"]] == ["extract", "validate", "draft"]
    assert [s["epoch"] for s in Checkpoint.objects.get(job_id=job.pk).steps] == [1, 2, 2]
    assert list(job.events.values_list("from_state", "to_state", "epoch")) == [
        ("", "queued", 0), ("queued", "leased", 1), ("leased", "queued", 1),
        ("queued", "leased", 2), ("leased", "completed", 2),
    ]


def test_a_worker_killed_during_the_provider_call_leaves_the_job_unknown(settings, alice, provider):
    job = accept_review(alice)
    provider.mode = "hang"
    worker = start(settings, "--lease", "2", AGENT_PLANNER="openai", AGENT_PLANNER_URL=provider.url,
                   AGENT_PLANNER_TIMEOUT="60")
    try:
        assert provider.received.wait(60), "the worker never called the provider"
        assert Job.objects.get(pk=job.pk).external_started_at is not None  # committed before the call
    finally:
        kill(worker)
    key = provider.requests[0]["headers"]["Idempotency-Key"]
    assert key == f"job-{job.pk}-epoch-1-step-0"

    recovered = queue.recover(now=datetime.now(UTC) + timedelta(seconds=3))
    assert recovered.unknown == [job.pk]
    job.refresh_from_db()
    assert job.state == "unknown" and "external-start marker" in job.last_error
    assert queue.claim(now=datetime.now(UTC) + timedelta(seconds=3), worker="w") is None  # no automatic retry
    assert not Checkpoint.objects.filter(job_id=job.pk, step_index__gt=0).exists()
