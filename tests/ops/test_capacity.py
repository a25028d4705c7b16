"""The example workload's numbers (6/min at 20 s, 90 s deadline), from the pure functions."""

from __future__ import annotations

import math

import pytest

from ops import capacity, units
from ops.capacity import Workload, plan

EXAMPLE = dict(rate=units.parse_rate("6/min"), service=20, deadline=90)


def test_six_a_minute_is_a_tenth_of_a_job_per_second():
    assert units.parse_rate("6/min") == pytest.approx(0.1)
    assert units.parse_rate("360/h") == pytest.approx(0.1)
    assert units.parse_rate("0.1") == pytest.approx(0.1)


def test_littles_law_gives_two_jobs_in_flight_at_six_a_minute_and_20_seconds():
    assert capacity.in_flight(0.1, 20) == pytest.approx(2)
    assert plan(Workload(workers=3, **EXAMPLE)).in_flight == pytest.approx(2)


def test_two_workers_supply_exactly_six_a_minute_with_no_headroom():
    p = plan(Workload(workers=2, **EXAMPLE))
    assert p.capacity_per_minute == pytest.approx(6)
    assert p.utilisation == pytest.approx(1.0)
    assert p.headroom == pytest.approx(0.0)
    assert p.workers_needed == 2
    assert any("Thin headroom" in w and "nothing to spare" in w for w in p.warnings)


def test_three_workers_give_nine_a_minute_at_about_67_percent():
    p = plan(Workload(workers=3, **EXAMPLE))
    assert p.capacity_per_minute == pytest.approx(9)
    assert p.utilisation == pytest.approx(2 / 3)
    assert p.utilisation_percent == pytest.approx(66.7)
    assert not any("headroom" in w.lower() for w in p.warnings)


def test_twelve_at_once_on_three_workers_finish_in_waves_at_20_40_60_80_with_10_seconds_margin():
    p = plan(Workload(workers=3, burst=12, **EXAMPLE))
    assert [w.finishes_at for w in p.waves] == [20, 40, 60, 80]
    assert [w.jobs for w in p.waves] == [3, 3, 3, 3]
    assert p.burst_finish == 80 and p.burst_margin == 10
    assert any("Thin deadline margin" in w and "only 10 s" in w for w in p.warnings)


def test_four_workers_finish_the_burst_in_three_waves_with_room_to_spare():
    p = plan(Workload(workers=4, burst=12, **EXAMPLE))
    assert [w.finishes_at for w in p.waves] == [20, 40, 60]
    assert p.burst_margin == 30
    assert not any("deadline" in w for w in p.warnings)


def test_a_burst_that_misses_the_deadline_says_so():
    p = plan(Workload(workers=2, burst=12, **EXAMPLE))
    assert p.burst_finish == 120 and p.burst_margin == -30
    assert any("misses the deadline" in w for w in p.warnings)


def test_five_writes_a_job_at_six_a_minute_are_half_a_write_per_second():
    assert plan(Workload(workers=3, writes_per_job=5, **EXAMPLE)).writes_per_second == pytest.approx(0.5)


def test_a_hundred_clients_polling_every_second_are_a_hundred_reads_per_second_and_dominate():
    p = plan(Workload(workers=3, pollers=100, poll_interval=1, **EXAMPLE))
    assert p.reads_per_second == pytest.approx(100)
    assert any("Polling dominates" in w and "More workers do not fix" in w for w in p.warnings)


def test_overload_is_called_out_with_the_minimum_worker_count():
    p = plan(Workload(rate=units.parse_rate("12/min"), service=20, workers=3, deadline=90))
    assert p.utilisation == pytest.approx(4 / 3)
    assert p.workers_needed == 4
    assert any(w.startswith("Overloaded") for w in p.warnings)


@pytest.mark.parametrize("bad", [dict(workers=0), dict(service=0), dict(deadline=-1), dict(poll_interval=0)])
def test_impossible_workloads_are_refused_with_a_reason(bad):
    values = dict(workers=3, **EXAMPLE) | bad
    with pytest.raises(ValueError):
        Workload(**values)


@pytest.mark.parametrize("text", ["6/fortnight", "six/min", "-1/s"])
def test_unreadable_rates_are_refused(text):
    with pytest.raises(ValueError):
        units.parse_rate(text)


def test_durations_read_as_operators_write_them():
    assert units.parse_duration("30d").days == 30
    assert units.parse_duration("1h").total_seconds() == 3600
    assert units.parse_duration("90").total_seconds() == 90
    assert units.parse_duration("30", default_unit="d").days == 30
    with pytest.raises(ValueError):
        units.parse_duration("0s")


def test_a_long_burst_is_shown_as_its_first_waves_and_its_last():
    p = plan(Workload(workers=1, burst=1000, **EXAMPLE))
    assert len(p.waves) == 1000
    shown = p.waves_shown
    assert [w.finishes_at for w in shown[:-2]] == [20 * n for n in range(1, capacity.WAVES_SHOWN + 1)]
    assert shown[-2] is None and shown[-1].finishes_at == 20_000
    assert p.waves_hidden == 1000 - capacity.WAVES_SHOWN - 1
    planned = plan(Workload(workers=3, burst=12, **EXAMPLE))
    assert planned.waves_shown == planned.waves


def test_a_burst_of_a_million_waves_is_computed_wave_by_wave_as_read():
    p = plan(Workload(workers=1, burst=1_000_000, **EXAMPLE))
    assert len(p.waves) == 1_000_000 and p.waves_hidden == 1_000_000 - capacity.WAVES_SHOWN - 1
    assert p.waves[-1] == capacity.Wave(1_000_000, 1, 20_000_000, 90 - 20_000_000)
    assert p.burst_finish == 20_000_000
    body = p.as_dict()
    assert len(body["waves"]) == capacity.WAVES_SHOWN + 1 and body["wave_count"] == 1_000_000


@pytest.mark.parametrize("figures", [{"rate": 1e308}, {"rate": math.inf}, {"rate": math.nan},
                                     {"service": 1e308}, {"deadline": math.inf}, {"burst": 10**12}])
def test_figures_too_large_to_compute_with_are_refused(figures):
    with pytest.raises(ValueError):
        Workload(**{"workers": 3, **EXAMPLE, **figures})


def test_a_value_left_out_takes_the_workloads_default_and_a_given_one_is_kept():
    left_out = capacity.workload(workers=3, burst=None, pollers=None, poll_interval=None, writes_per_job=None,
                                 **EXAMPLE)
    assert left_out == Workload(workers=3, **EXAMPLE)
    given = capacity.workload(workers=3, burst=0, pollers=7, poll_interval=2, writes_per_job=0, **EXAMPLE)
    assert (given.burst, given.pollers, given.poll_interval, given.writes_per_job) == (0, 7, 2, 0)
