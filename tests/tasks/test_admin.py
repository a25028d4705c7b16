"""Staff see a task job's function and (truncated) arguments, and triage it like any job."""

from __future__ import annotations

from jobs.admin import TASK_ARGUMENTS_SHOWN, JobAdmin
from jobs.models import Job
from tests.admin.conftest import CHANGELIST, confirm, start_action
from tests.tasks.conftest import job_of
from tests.tasks.sample_tasks import add, give_up


def test_a_task_jobs_page_shows_its_function_and_truncated_arguments(backend, client, make_member):
    client.force_login(make_member("ops", "triager", staff=True))
    long_text = "x" * 500
    job = job_of(add.enqueue(2, b=long_text))

    page = client.get(f"{CHANGELIST}{job.pk}/change/").content.decode()

    assert "<code>tests.tasks.sample_tasks.add(2, b=&quot;xxx" in page
    assert long_text not in page and "x" * (TASK_ARGUMENTS_SHOWN - 10) in page  # cut short, then …


def test_other_jobs_show_no_task(accept):
    assert JobAdmin.task_call(None, accept("diagnostic.noop")) == "—"


def test_staff_retry_a_dead_task_job_and_a_worker_runs_it_again(backend, worker, client, make_member, monkeypatch,
                                                                 clock):
    monkeypatch.setattr(JobAdmin, "clock", clock)
    client.force_login(make_member("ops", "triager", staff=True))
    job = job_of(give_up.enqueue("the supplier was closed"))
    worker.run_one()
    job.refresh_from_db()
    assert job.state == "dead"

    page = start_action(client, "retry_dead", job)
    confirm(client, page, reason="supplier open again")

    job.refresh_from_db()
    assert (job.state, job.attempts) == ("queued", 0)
    assert give_up.get_result(str(job.pk)).status == "READY"
    worker.run_one()
    assert Job.objects.get(pk=job.pk).epoch == 2
