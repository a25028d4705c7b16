"""Capacity arithmetic for the job queue, as pure functions: Little's law, utilisation, waves, load.

These are workload calculations, not measurements: they ignore claim/commit overhead,
provider quotas and runtime variance, which is why the warnings ask for headroom.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, overload

ROUNDING = 1e-9  # float error: headroom within it of a bound counts as on it
THIN_HEADROOM = 0.20  # below this share of capacity left over, variance alone builds a queue
POLLING_DOMINATES = 10  # polling reads per state write at which reads are the load to fix
WAVES_SHOWN = 8  # a longer burst is shown as its first waves, a gap, and its last wave
# What a workload may say, so that every figure stays a finite number: rates per second,
# times in seconds (about three years), counts of jobs, workers and clients.
MAX_RATE = 1_000_000
MAX_SECONDS = 100_000_000
MAX_COUNT = 10_000_000


@dataclass(frozen=True)
class Workload:
    """What arrives and what serves it. Rates are per second, times in seconds."""

    rate: float
    service: float
    workers: int
    deadline: float
    burst: int = 0
    pollers: int = 0
    poll_interval: float = 1.0
    writes_per_job: float = 5.0

    def __post_init__(self) -> None:
        problems = []
        if self.rate < 0:
            problems.append("the arrival rate cannot be negative")
        if self.service <= 0:
            problems.append("the service time must be positive")
        if self.workers < 1:
            problems.append("at least one worker is needed")
        if self.deadline <= 0:
            problems.append("the deadline must be positive")
        if self.burst < 0 or self.pollers < 0 or self.writes_per_job < 0:
            problems.append("burst, pollers and writes per job cannot be negative")
        if self.poll_interval <= 0:
            problems.append("the poll interval must be positive")
        numbers = (self.rate, self.service, self.deadline, self.poll_interval, self.writes_per_job)
        if not all(math.isfinite(number) for number in numbers):
            problems.append("every figure must be a finite number")
        elif self.rate > MAX_RATE or self.writes_per_job > MAX_RATE:
            problems.append(f"rates and writes per job are at most {MAX_RATE:g}")
        elif max(self.service, self.deadline, self.poll_interval) > MAX_SECONDS:
            problems.append(f"times are at most {MAX_SECONDS:g} s")
        if max(self.workers, self.burst, self.pollers) > MAX_COUNT:
            problems.append(f"workers, burst and pollers are at most {MAX_COUNT:g}")
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class Wave:
    number: int
    jobs: int
    finishes_at: float
    margin: float | None = None  # seconds left before the deadline when the wave finishes


class Waves(Sequence[Wave]):
    """A burst's waves, each computed when it is read: a burst of a million on one worker is a
    million waves, and the page shows nine of them."""

    def __init__(self, *, burst: int, workers: int, service: float, deadline: float | None = None) -> None:
        self.burst, self.workers, self.service, self.deadline = burst, workers, service, deadline
        self.total = math.ceil(burst / workers)

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> Wave: ...

    @overload
    def __getitem__(self, index: slice) -> list[Wave]: ...

    def __getitem__(self, index: int | slice) -> Wave | list[Wave]:
        if isinstance(index, slice):
            return [self.wave(n) for n in range(*index.indices(self.total))]
        n = index + self.total if index < 0 else index
        if not 0 <= n < self.total:
            raise IndexError("no such wave")
        return self.wave(n)

    def __iter__(self) -> Iterator[Wave]:
        return (self.wave(n) for n in range(self.total))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == self.total and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # unhashable, like the list it equals

    def __repr__(self) -> str:
        return f"Waves(burst={self.burst}, workers={self.workers}, service={self.service})"

    def wave(self, n: int) -> Wave:
        finishes_at = (n + 1) * self.service
        margin = None if self.deadline is None else self.deadline - finishes_at
        return Wave(n + 1, min(self.workers, self.burst - n * self.workers), finishes_at, margin)


@dataclass(frozen=True)
class Plan:
    workload: Workload
    in_flight: float  # Little's law: L = λW
    capacity: float  # jobs per second the workers can finish
    utilisation: float
    headroom: float
    workers_needed: int  # the fewest workers whose capacity is not below the arrival rate
    waves: Waves
    burst_finish: float | None
    burst_margin: float | None
    writes_per_second: float
    reads_per_second: float
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON: the waves shown (all of a short burst) and how many there are."""
        body = asdict(replace(self, waves=Waves(burst=0, workers=1, service=1)))
        body["waves"] = [asdict(wave) for wave in self.waves_shown if wave is not None]
        body["wave_count"] = len(self.waves)
        return body

    @property
    def waves_shown(self) -> list[Wave | None]:
        """All waves of a short burst; of a long one the first few, ``None`` for the gap, the last.

        A burst of a million on one worker is a million waves: the page and the command show
        the shape, not a 100 MB table.
        """
        if len(self.waves) <= WAVES_SHOWN + 1:
            return list(self.waves)
        return [*self.waves[:WAVES_SHOWN], None, self.waves[-1]]

    @property
    def waves_hidden(self) -> int:
        return max(len(self.waves) - WAVES_SHOWN - 1, 0)

    @property
    def rate_per_minute(self) -> float:
        return per_minute(self.workload.rate)

    @property
    def capacity_per_minute(self) -> float:
        return per_minute(self.capacity)

    @property
    def utilisation_percent(self) -> float:
        return round(self.utilisation * 100, 1)

    @property
    def headroom_percent(self) -> float:
        return round(self.headroom * 100, 1)


def workload(**given: Any) -> Workload:
    """A ``Workload`` from what the operator gave: a value left out (``None``) takes the field's default.

    The page's blank fields and the command's unset options both arrive as ``None``, so the
    defaults are written once, on ``Workload``.
    """
    return Workload(**{name: value for name, value in given.items() if value is not None})


def in_flight(rate: float, service: float) -> float:
    """Little's law: average jobs in the system = arrival rate × time each spends in it."""
    return rate * service


def capacity(workers: int, service: float) -> float:
    """Jobs per second that ``workers`` finish when each takes ``service`` seconds."""
    return workers / service


def utilisation(rate: float, service: float, workers: int) -> float:
    return rate / capacity(workers, service)


def waves(burst: int, workers: int, service: float) -> Waves:
    """``burst`` jobs arriving together on independent workers finish in waves."""
    return Waves(burst=burst, workers=workers, service=service)


def writes_per_second(rate: float, writes_per_job: float) -> float:
    return rate * writes_per_job


def reads_per_second(pollers: int, poll_interval: float) -> float:
    """Every polling client is a read each interval, however few jobs there are."""
    return pollers / poll_interval


def plan(workload: Workload) -> Plan:
    w = workload
    load = in_flight(w.rate, w.service)
    util = utilisation(w.rate, w.service, w.workers)
    burst_waves = Waves(burst=w.burst, workers=w.workers, service=w.service, deadline=w.deadline)
    finish = burst_waves[-1].finishes_at if burst_waves else None
    margin = w.deadline - finish if finish is not None else None
    writes = writes_per_second(w.rate, w.writes_per_job)
    reads = reads_per_second(w.pollers, w.poll_interval)
    result = Plan(
        workload=w, in_flight=load, capacity=capacity(w.workers, w.service), utilisation=util,
        headroom=1 - util, workers_needed=max(1, math.ceil(round(load, 9))), waves=burst_waves,
        burst_finish=finish, burst_margin=margin, writes_per_second=writes, reads_per_second=reads,
    )
    result.warnings.extend(warnings(result))
    return result


def warnings(p: Plan) -> list[str]:
    """Plain-language warnings for what the numbers say is fragile."""
    w = p.workload
    said = []
    if w.service >= w.deadline:
        said.append(f"A job takes {w.service:g} s but its deadline is {w.deadline:g} s: every job would die.")
    if p.utilisation > 1 + 1e-9:
        said.append(
            f"Overloaded: jobs arrive faster ({per_minute(w.rate):g}/min) than {w.workers} worker(s) finish them "
            f"({per_minute(p.capacity):g}/min). The queue grows without bound; {p.workers_needed} workers are "
            "the bare minimum."
        )
    elif p.headroom < THIN_HEADROOM - ROUNDING:
        said.append(
            f"Thin headroom: the workers are busy {p.utilisation:.0%} of the time"
            + (" with nothing to spare" if p.headroom < ROUNDING else "")
            + ". Any variance in service time, a retry or a slow provider builds a queue; add a worker."
        )
    if p.burst_margin is not None:
        if p.burst_margin < 0:
            said.append(
                f"A burst of {w.burst} misses the deadline: the last wave finishes at {p.burst_finish:g} s, "
                f"{-p.burst_margin:g} s after the {w.deadline:g} s deadline. Add workers or lengthen the deadline."
            )
        elif p.burst_margin < w.service:
            said.append(
                f"Thin deadline margin: a burst of {w.burst} finishes at {p.burst_finish:g} s, only "
                f"{p.burst_margin:g} s before the {w.deadline:g} s deadline (less than one job's "
                f"{w.service:g} s). Claim overhead or one slow job is enough to miss it."
            )
    if p.reads_per_second > 0 and p.reads_per_second >= POLLING_DOMINATES * max(p.writes_per_second, 1e-9):
        said.append(
            f"Polling dominates: {p.reads_per_second:g} status reads/s against {p.writes_per_second:g} state "
            "writes/s. More workers do not fix this; poll with backoff or less often."
        )
    return said


def per_minute(per_second: float) -> float:
    return round(per_second * 60, 6)
