"""The reader's time zone, by IANA name, for the list's day filters and the export's times."""

from __future__ import annotations

from datetime import UTC
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def zone_of(name: str) -> ZoneInfo | dt_timezone:
    """An IANA zone by name; UTC for an empty or unknown one."""
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def zone_name(name: str) -> str:
    """The zone's name as a header says it: an IANA name, else "UTC" (for an empty or unknown one)."""
    zone = zone_of(name)
    return zone.key if isinstance(zone, ZoneInfo) else "UTC"
