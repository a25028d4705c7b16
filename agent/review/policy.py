"""Trusted checks of every proposal, before anything runs.

The planner (a model, behind the planner boundary) only suggests. This module decides:
the allowlist (``extract``, ``validate``, ``draft``; ``send_email`` and anything else are
refused), the arguments against the tool's schema, tenant scope (a tool names this job and
reads only its own document), the time left before the deadline, at most three tool steps,
and the order (each tool reads the output of the one before; nothing finished repeats).

Messages name the rule and the tool, never argument values: they end up in the job's
``last_error`` and its event timeline, which carry no document text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from .steps import FINISH, MAX_STEPS, SEQUENCE, STEPS, Proposal


@dataclass(frozen=True)
class Rejection:
    code: str
    message: str


def safe_name(tool: Any) -> str:
    """A proposed tool name fit for a log line or an event: short and plain, or a placeholder."""
    if isinstance(tool, str) and re.fullmatch(r"[A-Za-z0-9_.\-]{1,40}", tool):
        return tool
    return "(unprintable name)"


def check(proposal: Proposal, *, job_id: int, step_index: int, remaining: timedelta) -> Rejection | None:
    """None if the proposal may run now; otherwise the first rule it breaks."""
    name = safe_name(proposal.tool)
    if proposal.tool == FINISH:
        if step_index < len(SEQUENCE):
            return Rejection("finished_early", f"the planner proposed to finish after {step_index} of "
                                               f"{len(SEQUENCE)} steps; the review is incomplete")
        return None
    tool = STEPS.get(proposal.tool) if isinstance(proposal.tool, str) else None
    if tool is None:
        hint = ": nothing in this product sends email; Alice sends it herself" if proposal.tool == "send_email" else ""
        return Rejection("tool_not_allowed", f"tool {name!r} is not allowed (only {', '.join(SEQUENCE)}){hint}")
    problem = schema_problem(tool.parameters, proposal.arguments)
    if problem:
        return Rejection("bad_arguments", f"arguments for {name} do not fit its schema: {problem}")
    if proposal.arguments["job_id"] != job_id:
        return Rejection("out_of_scope", f"{name} may read only this job's own document, "
                                         f"not that of job {proposal.arguments['job_id']}")
    if remaining < tool.budget:
        left = max(remaining.total_seconds(), 0)
        return Rejection("no_time_left", f"{name} needs {tool.budget.total_seconds():.0f} s and only "
                                         f"{left:.0f} s are left before the deadline")
    if step_index >= MAX_STEPS:
        return Rejection("step_limit",
                         f"{name} would be step {step_index + 1}; at most {MAX_STEPS} tool steps are allowed")
    expected = SEQUENCE[step_index] if step_index < len(SEQUENCE) else None
    if proposal.tool != expected:
        done = "already done" if proposal.tool in SEQUENCE[:step_index] else f"needs {tool.reads} first"
        return Rejection("out_of_order", f"{name} is out of order ({done}); the next step is {expected}")
    return None


def schema_problem(schema: dict[str, Any], arguments: Any) -> str:
    """Where and which schema rule the arguments break, without echoing their values."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return ""
    where = "arguments" + "".join(f".{p}" if isinstance(p, str) and safe_name(p) == p else "[…]"
                                  for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return f"{where} has a property the tool does not take"
    if error.validator == "required":
        return f"{where} lacks a required property"
    return f"{where} fails the {error.validator!r} rule"
