"""The review's steps as declared: what every part of the bounded workflow agrees on.

The three tools in their order (``SEQUENCE``: each reads the output of the one before), each
with the JSON Schema of its arguments and the time it needs; the step limit, the word that
ends a review (``FINISH``) and the shape of a planner's suggestion (``Proposal``). The policy
checks a proposal against these, the planner offers them to a provider, the provider calls
name their step by them, and ``tools`` binds each to the function that runs it. Declared
here, below all of them, so that none of them has to import another to learn the steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from jobs.kinds import FailureCause

MAX_STEPS = 3
DEADLINE = timedelta(minutes=10)  # a whole review's, every step and retry within it
MAX_INLINE_CHARS = 100_000  # the longest text a submission may send to be reviewed instead of a document
# The review's own failure codes that are our side's doing (the planner, the model provider, their
# settings): staff run the job again once it is fixed; Alice has nothing to do.
FAILURES = {code: FailureCause.SERVICE for code in (
    "planner_error", "planner_timeout", "planner_misconfigured", "model_error", "model_timeout")}
FINISH = "finish"
TONES = ("neutral", "friendly", "formal")


@dataclass(frozen=True)
class Step:
    name: str
    description: str
    parameters: dict[str, Any]
    budget: timedelta  # the time it needs: the policy refuses it with less left
    reads: str | None  # the tool whose output it takes as input


@dataclass(frozen=True)
class Proposal:
    """What the planner suggests: a tool and its arguments, both untrusted."""

    tool: str
    arguments: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments}


def _schema(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"job_id": {"type": "integer", "minimum": 1}, **properties},
        "required": ["job_id"],
        "additionalProperties": False,
    }


STEPS: dict[str, Step] = {
    step.name: step
    for step in (
        Step(
            name="extract",
            description="Read the text and page count of this job's own document or inline text.",
            parameters=_schema(),
            budget=timedelta(seconds=10),
            reads=None,
        ),
        Step(
            name="validate",
            description="Check the required supplier fields in the extracted text.",
            parameters=_schema(country={"type": "string", "pattern": "^[A-Z]{2}$",
                                        "description": "Country for VAT ids printed without a prefix."}),
            budget=timedelta(seconds=5),
            reads="extract",
        ),
        Step(
            name="draft",
            description="Draft a plain-text review note for Alice to send herself.",
            parameters=_schema(tone={"type": "string", "enum": list(TONES)}),
            budget=timedelta(seconds=5),
            reads="validate",
        ),
    )
}
SEQUENCE = tuple(STEPS)  # extract, validate, draft: each reads the one before
