"""``manage.py capacity --rate 6/min --service 20 --workers 3 ...``: the capacity planner's arithmetic."""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from jobs.clock import queue_clock
from jobs.conf import queue_settings
from ops import capacity, measures, units


class Command(BaseCommand):
    help = ("In-flight work (Little's law), capacity, utilisation, burst waves against the deadline, state "
            "writes and polling reads, from given numbers or from the job table (--observed 1h).")

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rate", help="arrival rate: 6/min, 0.1/s, 360/h")
        parser.add_argument("--service", type=float, help="seconds per job (claim to completion)")
        parser.add_argument("--observed", metavar="WINDOW",
                            help="take the rate (and service time) from the job table over this window: 1h, 30min, 7d")
        parser.add_argument("--workers", type=int, default=1)
        parser.add_argument("--deadline", type=float, default=None,
                            help="a job's deadline in seconds (default: JOBS_DEADLINE_SECONDS)")
        # Left unset, these take capacity.Workload's defaults (no burst, no pollers, 1 s, 5 writes).
        parser.add_argument("--burst", type=int, help="jobs arriving at once")
        parser.add_argument("--pollers", type=int, help="clients polling job status")
        parser.add_argument("--poll-interval", type=float, help="seconds between one client's polls")
        parser.add_argument("--writes-per-job", type=float, help="state writes per job")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args: Any, **o: Any) -> None:
        given = dict(workers=o["workers"], deadline=o["deadline"] or queue_settings().deadline.total_seconds(),
                     burst=o["burst"], pollers=o["pollers"], poll_interval=o["poll_interval"],
                     writes_per_job=o["writes_per_job"])
        seen = None
        try:
            if o["observed"]:
                workload, seen = measures.observed_workload(window=units.parse_duration(o["observed"]),
                                                            now=queue_clock.now(), service=o["service"], **given)
            elif o["rate"] is None or o["service"] is None:
                raise CommandError("give --rate and --service, or --observed WINDOW")
            else:
                workload = capacity.workload(rate=units.parse_rate(o["rate"]), service=o["service"], **given)
            plan = capacity.plan(workload)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if o["as_json"]:
            body = plan.as_dict()
            if seen is not None:
                body["observed"] = {"window_seconds": seen.window.total_seconds(), "arrivals": seen.arrivals,
                                    "completions": seen.completions}
            self.stdout.write(json.dumps(body, indent=2))
            return
        self.stdout.write(as_text(plan, seen))


def as_text(plan: capacity.Plan, seen: measures.Observed | None) -> str:
    w = plan.workload
    lines = []
    if seen is not None:
        lines.append(f"Observed over {seen.window}: {seen.arrivals} accepted, "
                     f"{seen.completions} completion(s) measured")
    lines += [
        f"Arrivals        {plan.rate_per_minute:g}/min ({w.rate:.4g}/s), {w.service:g} s each",
        f"In flight       λW = {plan.in_flight:.3g} jobs (Little's law)",
        f"Capacity        {w.workers} worker(s): {plan.capacity_per_minute:g}/min",
        f"Utilisation     {plan.utilisation:.0%} (headroom {plan.headroom:.0%}); "
        f"{plan.workers_needed} worker(s) cover the average with nothing to spare",
    ]
    if plan.waves:
        finish = ", ".join("…" if v is None else f"{v.finishes_at:g}" for v in plan.waves_shown)
        lines.append(f"Burst of {w.burst}    {len(plan.waves)} wave(s) finishing at {finish} s; "
                     f"deadline {w.deadline:g} s, margin {plan.burst_margin:g} s")
    lines += [
        f"State writes    {plan.writes_per_second:.3g}/s ({w.writes_per_job:g} per job)",
        f"Polling reads   {plan.reads_per_second:.3g}/s ({w.pollers} client(s) every {w.poll_interval:g} s)",
    ]
    lines += [""] + [f"WARNING: {text}" for text in plan.warnings] if plan.warnings else ["", "Nothing looks thin."]
    return "\n".join(lines)
