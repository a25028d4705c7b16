"""Template filters for job pages."""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON for results of unknown shape; autoescaped like any other text."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
