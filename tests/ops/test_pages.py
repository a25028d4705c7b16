"""The staff pages: refused to anonymous and non-staff users; the lab and planner render their figures."""

from __future__ import annotations

import time

import pytest

from jobs import queue

from .conftest import SECRET

pytestmark = pytest.mark.django_db

PAGES = ["/ops/", "/ops/lab/", "/ops/capacity/"]


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_visitors_are_sent_to_log_in(client_for, url):
    response = client_for().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("url", PAGES)
def test_members_who_are_not_staff_are_refused(client_for, member, url):
    assert client_for(member).get(url).status_code == 403


@pytest.mark.parametrize("url", PAGES)
def test_staff_see_the_pages(client_for, staff, url):
    response = client_for(staff).get(url)
    assert response.status_code == 200
    assert "Operators' instruments" in response.content.decode()


def test_the_lab_page_runs_the_experiment_and_shows_each_step(client_for, staff):
    html = client_for(staff).get("/ops/lab/", {"lease": 10, "crash": "before-effect"}).content.decode()
    assert 'data-final-state="completed"' in html
    for step in ("accept", "claim", "execute", "recover", "complete", "inspect"):
        assert f"<strong>{step}</strong>" in html
    assert "epoch 1 superseded by 2" in html
    assert '<span id="replacement">10 s</span>' in html


def test_the_lab_page_shows_the_unknown_outcome_after_the_marker(client_for, staff):
    html = client_for(staff).get("/ops/lab/", {"lease": 10, "crash": "after-marker"}).content.decode()
    assert 'data-final-state="unknown"' in html
    assert "no new worker attempt authorised automatically" in html


def test_the_lab_page_refuses_a_lease_outside_5_to_30_without_running(client_for, staff):
    html = client_for(staff).get("/ops/lab/", {"lease": 45, "crash": "none"}).content.decode()
    assert "less than or equal to 30" in html
    assert 'id="timeline"' not in html


def test_the_capacity_page_opens_on_the_example_workload(client_for, staff):
    html = client_for(staff).get("/ops/capacity/").content.decode()
    assert '<td id="in-flight">2 jobs</td>' in html
    assert '<td id="capacity">9 jobs/min</td>' in html
    assert "67 %" in html
    assert "Last wave at 80 s: margin 10 s." in html
    assert "0.5 /s" in html and "100 /s" in html
    assert "Thin deadline margin" in html and "Polling dominates" in html


def test_the_capacity_page_answers_htmx_with_the_plan_alone(client_for, staff):
    response = client_for(staff).get("/ops/capacity/", {"rate": "6/min", "service": 20, "workers": 2, "deadline": 90},
                                     headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="plan">')
    assert "100 %" in html and "Thin headroom" in html


def test_blank_optional_fields_on_the_capacity_page_take_the_workloads_defaults(client_for, staff):
    html = client_for(staff).get("/ops/capacity/", {"rate": "6/min", "service": 20, "workers": 3, "deadline": 90,
                                                    "burst": "", "pollers": "", "poll_interval": "",
                                                    "writes_per_job": ""}).content.decode()
    assert '<td id="writes">0.5 /s (5 per job)</td>' in html
    assert '<td id="reads">0 /s (0 client(s) every 1 s)</td>' in html
    assert 'id="waves"' not in html


def test_the_capacity_page_explains_bad_input(client_for, staff):
    html = client_for(staff).get("/ops/capacity/", {"rate": "lots", "service": 20, "workers": 3,
                                                    "deadline": 90}).content.decode()
    assert "not a rate" in html


@pytest.mark.parametrize("given,said", [
    ({"rate": "1e308/s"}, "rates and writes per job are at most"),
    ({"rate": "inf/s"}, "not a rate"),
    ({"rate": "nan"}, "not a rate"),
    ({"service": "1e308"}, "less than or equal to"),
    ({"writes_per_job": "1e308"}, "less than or equal to"),
    ({"observed": "99999999999999d"}, "a duration is at most"),
])
def test_the_capacity_page_refuses_figures_too_large_to_compute_with(client_for, staff, given, said):
    query = {"rate": "6/min", "service": 20, "workers": 3, "deadline": 90, "burst": 12, **given}
    if "observed" in given:
        del query["rate"]
    response = client_for(staff).get("/ops/capacity/", query)
    assert response.status_code == 200
    assert said in response.content.decode()


def test_a_burst_of_a_million_is_planned_without_a_million_waves(client_for, staff):
    started = time.process_time()
    html = client_for(staff).get("/ops/capacity/", {"rate": "6/min", "service": 20, "workers": 1, "deadline": 90,
                                                    "burst": 1_000_000}).content.decode()
    assert time.process_time() - started < 0.5  # it was 7.2 s of CPU and 340 MB
    assert "999991 more waves" in html and "2e+07 s" in html


def test_the_capacity_page_takes_rate_and_service_time_from_the_job_table(client_for, staff, accept, clock,
                                                                           monkeypatch):
    from ops import views

    # Six jobs accepted over the last half hour, each completed 20 s after its claim.
    for _ in range(6):
        accept("opstest.echo", {"text": SECRET}, now=clock.now())
        c = queue.claim(now=clock.now(), worker="w")
        clock.advance(20)
        assert queue.complete(job_id=c.job_id, epoch=c.epoch, result={}, now=clock.now())
        clock.advance(5 * 60)
    monkeypatch.setattr(views.queue_clock, "now", clock.now)
    html = client_for(staff).get("/ops/capacity/", {"observed": "1h", "workers": 1, "deadline": 90}).content.decode()
    assert "6 job(s) accepted, 6 completion(s) measured" in " ".join(html.split())
    assert '<td id="rate">0.1 jobs/min' in html
    assert "<td>20 s</td>" in html  # the measured mean service time
    assert SECRET not in html


def test_the_capacity_page_asks_for_a_service_time_when_the_window_has_no_completion(client_for, staff):
    html = client_for(staff).get("/ops/capacity/", {"observed": "1h", "workers": 1, "deadline": 90}).content.decode()
    assert "give the service time yourself" in html and 'id="figures"' not in html


def test_the_capacity_page_summarises_a_huge_burst_instead_of_listing_every_wave(client_for, staff):
    html = client_for(staff).get("/ops/capacity/", {"rate": "6/min", "service": 20, "workers": 1, "deadline": 90,
                                                    "burst": 100_000}).content.decode()
    assert "99991 more waves" in html and "2e+06 s" in html
    assert len(html) < 50_000
