"""The planner boundary: who proposes the next tool. Whatever it says, ``policy`` decides.

``LocalPlanner`` (the default) proposes the fixed sequence from the checkpoint, with no
outside call. ``ChatCompletionsPlanner`` asks an OpenAI-compatible chat-completions
endpoint (``AGENT_PLANNER=openai``; off by default). Asking it is an external effect, so:

- the external-start marker is committed before the request (a worker killed while it
  waits leaves the job ``unknown``, never silently retried);
- the request carries ``Idempotency-Key: job-<id>-epoch-<epoch>-step-<n>``: the same call
  of the same owner repeats the key, a new epoch or step does not (one key per job and
  epoch alone would make a deduplicating provider replay step 1's answer for step 2);
- the call is recorded with the marker, in its transaction (``provider_calls``: the step, the
  key), and the answer is saved in the checkpoint with the provider's request id, then the
  marker is cleared;
- a 429 (with ``Retry-After``) proves the provider did nothing: the marker is cleared and
  the job deferred without spending an attempt.

The planner is told the job's shape and progress (steps done, field statuses), never the
document's text or field values; nothing here logs the request or the answer.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Protocol

from jobs.context import JobContext
from jobs.kinds import JobDeferred, JobFailed
from providers import budget

from . import outgoing, provider_calls
from .steps import FINISH, MAX_STEPS, SEQUENCE, STEPS, Proposal

log = logging.getLogger("agent.planner")

MAX_RESPONSE_BYTES = 64 * 1024
DEFAULT_RETRY_AFTER = timedelta(seconds=30)
SYSTEM_PROMPT = (
    "You plan a document review for an accounts-payable clerk. Call exactly one function: "
    "the next tool to run, or finish when the review is drafted. The tools are extract "
    "(read the job's document), validate (check supplier fields) and draft (write a note "
    "for the clerk), in that order, at most three steps. Always pass this job's job_id. "
    "Never send email: the clerk sends it herself."
)


@dataclass(frozen=True)
class View:
    """What a planner is told: the job's shape and progress, never its text."""

    job_id: int
    step_index: int
    steps_done: list[str]
    max_steps: int
    remaining_seconds: int
    source: str
    field_status: dict[str, str] = field(default_factory=dict)


Save = Callable[[Proposal], None]


class Planner(Protocol):
    def propose(self, ctx: JobContext, view: View, save: Save) -> Proposal:
        """The next tool and its arguments; ``save`` commits an outside answer before use."""


class LocalPlanner:
    """The deterministic default: the next tool of the sequence, then finish."""

    def propose(self, ctx: JobContext, view: View, save: Save) -> Proposal:
        if view.step_index >= len(SEQUENCE):
            return Proposal(FINISH, {})
        return Proposal(SEQUENCE[view.step_index], {"job_id": view.job_id})


class ChatCompletionsPlanner:
    """An OpenAI-compatible ``/chat/completions`` endpoint, asked through function calling."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 20.0) -> None:
        # A planner is only ever spoken to over HTTP.
        if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
            raise JobFailed("AGENT_PLANNER_URL must be an http:// or https:// URL", retryable=False,
                            code="planner_misconfigured")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def propose(self, ctx: JobContext, view: View, save: Save) -> Proposal:
        timeout = min(self.timeout, ctx.remaining().total_seconds())
        if timeout < 1:
            raise JobFailed("no time left before the deadline to ask the planner", retryable=False, code="no_time_left")
        body = json.dumps(self.request_body(view)).encode()
        key = f"job-{ctx.job_id}-epoch-{ctx.epoch}-step-{view.step_index}"
        with budget.slot(ctx):  # one of the calls all workers on all hosts may have in flight
            return self._ask(ctx, view, save, body=body, key=key, timeout=timeout)

    def _ask(self, ctx: JobContext, view: View, save: Save, *, body: bytes, key: str, timeout: float) -> Proposal:
        ctx.mark_external_start(f"planner call, step {view.step_index + 1}", also=provider_calls.started(
            job_id=ctx.job_id, epoch=ctx.epoch, now=ctx.now(), call="which step comes next (the planner)",
            step=provider_calls.step_words(view.step_index), key=key))
        log.info("job %s: asking the planner for step %d", ctx.job_id, view.step_index + 1)
        try:
            reply = self.post(body, key=key, timeout=timeout)
        except Busy as busy:
            ctx.clear_external_start("planner answered 429")
            until = ctx.now() + busy.retry_after
            budget.hold_off(until=until)  # every worker holds off, not just this one
            raise JobDeferred(until, f"planner busy (429), retry after "
                                     f"{busy.retry_after.total_seconds():.0f} s") from None
        except Settled as settled:  # the provider answered or was never reached: safe to retry
            ctx.clear_external_start(f"planner call failed: {settled.reason}")
            raise JobFailed(f"planner call failed: {settled.reason}", retryable=settled.retryable,
                            code="planner_error") from None
        # Anything else (a timeout, a dropped connection) leaves the marker: the outcome is unknown.
        proposal = parse_answer(reply.answer)
        with ctx.fenced():  # the answer and the provider's id of it, together, before the marker is cleared
            save(proposal)
            provider_calls.answered(job_id=ctx.job_id, key=key, request_id=reply.request_id, now=ctx.now())
        ctx.clear_external_start(f"planner answered, step {view.step_index + 1}")
        return proposal

    def request_body(self, view: View) -> dict[str, Any]:
        functions = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in STEPS.values()
        ]
        functions.append({"type": "function", "function": {
            "name": FINISH, "description": "The review is drafted: stop.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        }})
        return {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": json.dumps(asdict(view), sort_keys=True)},
            ],
            "tools": functions,
            "tool_choice": "required",
        }

    def post(self, body: bytes, *, key: str, timeout: float) -> Reply:
        """POST to the provider within ``timeout`` seconds for the whole request (``agent.review.outgoing``:
        one wall-clock budget, not a timeout per read)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json", "Idempotency-Key": key}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        parts = urllib.parse.urlsplit(self.url)
        host = parts.hostname or ""
        to = outgoing.Target(parts.scheme, host, host, parts.port or (443 if parts.scheme == "https" else 80),
                             parts.path + (f"?{parts.query}" if parts.query else ""))
        try:
            answer = outgoing.post(to, body, headers, total=timeout, max_body=MAX_RESPONSE_BYTES + 1)
        except outgoing.NotSent as exc:  # nothing of it was written: the provider did nothing
            raise Settled(f"the request was not sent ({exc.reason})", retryable=True) from None
        except outgoing.NoAnswer as exc:  # sent, no complete answer: the marker stays, the outcome is unknown
            if exc.timed_out:
                raise JobFailed(f"no answer from the planner within {timeout:.0f} s", code="planner_timeout") from None
            raise JobFailed(f"planner connection failed ({exc.reason})", code="planner_error") from None
        if answer.status == HTTPStatus.TOO_MANY_REQUESTS:
            raise Busy(retry_after(answer.headers.get("Retry-After")))
        if not HTTPStatus.OK <= answer.status < HTTPStatus.MULTIPLE_CHOICES:  # redirects are not followed
            raise Settled(f"HTTP {answer.status}", retryable=answer.status >= HTTPStatus.INTERNAL_SERVER_ERROR)
        raw = answer.body
        request_id = answer.headers.get("x-request-id") or answer.headers.get("request-id") or ""
        if len(raw) > MAX_RESPONSE_BYTES:
            return Reply(None, request_id)
        try:
            return Reply(json.loads(raw), request_id)
        except ValueError:
            return Reply(None, request_id)


@dataclass(frozen=True)
class Reply:
    """A provider's answer (parsed JSON, None if unreadable) and its id for it (``x-request-id``), if any."""

    answer: Any
    request_id: str = ""


class Busy(Exception):
    def __init__(self, retry_after: timedelta) -> None:
        self.retry_after = retry_after


class Settled(Exception):
    def __init__(self, reason: str, *, retryable: bool) -> None:
        self.reason = reason
        self.retryable = retryable


def retry_after(header: str | None, *, now: datetime | None = None) -> timedelta:
    """A Retry-After header (seconds or an HTTP date) as a delay; 30 s if absent or odd."""
    if not header:
        return DEFAULT_RETRY_AFTER
    header = header.strip()
    if header.isdigit():
        return timedelta(seconds=max(int(header), 1))
    try:
        when = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER
    now = now or datetime.now(when.tzinfo)
    return max(when - now, timedelta(seconds=1))


def parse_answer(answer: Any) -> Proposal:
    """The function call in a chat-completions answer; an empty proposal if there is none."""
    try:
        message = answer["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if calls:
            function = calls[0]["function"]
            arguments = function.get("arguments")
            return Proposal(function["name"], json.loads(arguments) if isinstance(arguments, str) else arguments)
        content = json.loads(message.get("content") or "")
        return Proposal(content["tool"], content.get("arguments"))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return Proposal("", None)


def view_of(ctx: JobContext, *, step_index: int, latest_output: dict[str, Any], source: str) -> View:
    statuses = {name: f["status"] for name, f in (latest_output.get("fields") or {}).items()}
    return View(
        job_id=ctx.job_id,
        step_index=step_index,
        steps_done=list(SEQUENCE[:step_index]),
        max_steps=MAX_STEPS,
        remaining_seconds=int(max(ctx.remaining().total_seconds(), 0)),
        source=source,
        field_status=statuses,
    )


def from_env(environ: dict[str, str] | None = None) -> Planner:
    """``AGENT_PLANNER=openai`` selects the provider adapter; anything else the local planner."""
    env = os.environ if environ is None else environ
    if env.get("AGENT_PLANNER", "local").strip().lower() != "openai":
        return LocalPlanner()
    url = env.get("AGENT_PLANNER_URL", "").strip()
    if not url:
        raise JobFailed("AGENT_PLANNER=openai needs AGENT_PLANNER_URL", retryable=False, code="planner_misconfigured")
    return ChatCompletionsPlanner(
        base_url=url,
        model=env.get("AGENT_PLANNER_MODEL", "gpt-4o-mini"),
        api_key=env.get("AGENT_PLANNER_API_KEY", ""),
        timeout=float(env.get("AGENT_PLANNER_TIMEOUT", "20")),
    )
