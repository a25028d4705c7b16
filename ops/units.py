"""Operator-typed quantities: ``6/min``, ``90``, ``30d``. One parser, clear errors."""

from __future__ import annotations

import math
import re
from datetime import timedelta

_SECONDS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}
# Longer than anything an operator means (a century), and far from what a datetime holds.
MAX_DURATION = timedelta(days=36_525)
_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$")


def parse_duration(text: str | float | int, *, default_unit: str = "s") -> timedelta:
    """``90`` (seconds), ``20s``, ``15min``, ``1h``, ``30d`` -> a positive timedelta."""
    match = _AMOUNT.match(str(text).lower())
    unit = (match.group(2) or default_unit) if match else ""
    if not match or unit not in _SECONDS:
        raise ValueError(f"{text!r} is not a duration: write e.g. 90, 20s, 15min, 1h or 30d")
    seconds = float(match.group(1)) * _SECONDS[unit]
    if seconds <= 0:
        raise ValueError(f"{text!r}: a duration must be positive")
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"{text!r}: a duration is at most {MAX_DURATION.days} days")
    return timedelta(seconds=seconds)


def parse_rate(text: str | float | int) -> float:
    """``6/min``, ``0.1/s``, ``360/h`` or a bare number (per second) -> jobs per second."""
    raw = str(text).strip().lower()
    count, _, per = raw.partition("/")
    try:
        amount = float(count)
    except ValueError:
        raise ValueError(f"{text!r} is not a rate: write e.g. 6/min, 0.1/s or 360/h") from None
    if not math.isfinite(amount):
        raise ValueError(f"{text!r} is not a rate: write e.g. 6/min, 0.1/s or 360/h")
    if amount < 0:
        raise ValueError(f"{text!r}: a rate cannot be negative")
    try:
        period = parse_duration(f"1{per}" if per and not per[0].isdigit() else (per or "1")).total_seconds()
    except ValueError:
        raise ValueError(f"{text!r}: unknown period {per!r}; write /s, /min, /h or /d") from None
    return amount / period
