"""The ``task`` job kind: a function of Django's Tasks framework, run by ``runworkers``.

``jobs.tasks_backend`` turns ``my_task.enqueue(...)`` into a queued job of this kind whose
payload names the function by its module path and holds its arguments as JSON. A worker runs
it like any other job: leased, its lease renewed while it runs, its outcome fenced by the
epoch, retried with backoff, ``dead`` or ``unknown`` for staff. This module is what both sides
share: the payload, how an error is written into ``last_error`` (its code in ``failure_code``)
and read back, and how a job row reads as a ``TaskResult``.

Task arguments are the caller's data: they stay in the payload. Nothing here logs them, and an
error is written as the exception's class and the frames it passed through (file, line,
function, source line), never the exception's message, which may quote them.
"""

from __future__ import annotations

import functools
import importlib.machinery
import inspect
import math
import sys
import sysconfig
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.db import connection
from django.utils.module_loading import import_string

from .. import kinds
from ..conf import queue_settings
from ..context import JobContext
from ..kinds import JobDeferred, JobFailed, Kind
from ..models import Job, JobEvent
from ..queue import StaleEpoch
from ..queue.transitions import FAIL
from .framework import (
    DEFAULT_TASK_QUEUE_NAME,
    TASK_REFRESH_ATTRS,
    Task,
    TaskContext,
    TaskError,
    TaskResult,
    TaskResultStatus,
    task_finished,
    task_started,
)

if TYPE_CHECKING:
    AnyTaskResult = TaskResult[Any]
else:  # the framework's classes need not take type parameters at run time
    AnyTaskResult = TaskResult

KIND = "task"
KEY_SHOWN = 40  # characters of a payload key quoted in an error about it
# Arguments travel in the job row: an id to look the data up by, not the data, is the norm.
MAX_PAYLOAD_BYTES = 64 * 1024
ERROR_CODE = "task_error"  # last_error: "task_error: <class path>\n<trimmed traceback>"
ERROR_LIMIT = 980  # the queue keeps 1,000 characters of last_error; the code takes the rest
QUEUED, LEASED, COMPLETED, DEAD, UNKNOWN = (
    Job.State.QUEUED.value, Job.State.LEASED.value, Job.State.COMPLETED.value, Job.State.DEAD.value,
    Job.State.UNKNOWN.value,
)
CANCELLED = "cancelled"  # a terminal state once jobs can be cancelled
STATUS = {
    QUEUED: TaskResultStatus.READY,
    LEASED: TaskResultStatus.RUNNING,
    COMPLETED: TaskResultStatus.SUCCESSFUL,
    DEAD: TaskResultStatus.FAILED,
    UNKNOWN: TaskResultStatus.FAILED,
    CANCELLED: TaskResultStatus.FAILED,
}


# --- What a TaskResult's errors name ---------------------------------------------------------


class TaskNotFound(ImportError):
    """The job names a function this worker cannot import, or that is not a task."""


class ReturnValueNotJSON(TypeError):
    """The function returned something JSON cannot hold; it ran, so it is not run again."""


class TaskInterrupted(Exception):
    """The queue ended the task without an error of its own: its lease or its deadline ran out
    (a killed worker, a function that ran too long), or staff gave up on it."""


class OutcomeUnknown(Exception):
    """The task may have had its outside effects before its worker was lost: staff decide."""


class TaskCancelled(Exception):
    """The job was cancelled before the task finished."""


class NotJSON(TypeError):
    """A value JSON cannot hold, and where in the arguments or the return value it is."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where} is {what}")
        self.where = where
        self.what = what


def class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def json_value(value: Any, where: str) -> Any:
    """``value`` as JSON stores it (tuples as lists, UTF-8 bytes as text), or ``NotJSON``.

    Stricter than ``json.dumps``: no NaN or infinity (PostgreSQL's jsonb refuses them) and no
    keys but strings (``{1: ...}`` would come back as ``{"1": ...}``).
    """
    if isinstance(value, str):
        return _storable_text(value, where)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise NotJSON(where, f"{value!r} (JSON has no NaN or infinity)")
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotJSON(where, f"an object with a key of type {type(key).__name__} (JSON keys are strings)")
            _storable_text(key, f"{where} key {_short(key)}")
            out[key] = json_value(item, f"{where}[{_short(key)}]")
        return out
    if isinstance(value, (list, tuple)):
        return [json_value(item, f"{where}[{n}]") for n, item in enumerate(value)]
    if isinstance(value, bytes):
        try:
            return _storable_text(value.decode("utf-8"), where)
        except UnicodeDecodeError:
            raise NotJSON(where, "bytes that are not UTF-8 text") from None
    raise NotJSON(where, f"a {class_path(type(value))}, which JSON cannot hold")


def _storable_text(text: str, where: str) -> str:
    """Text both stores keep: no lone surrogate (not UTF-8, so not JSON text) and no NUL
    (PostgreSQL's jsonb refuses it, so the job would fail to commit with a bare error)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotJSON(where, "text with a lone surrogate, which is not UTF-8") from None
    if "\x00" in text:
        raise NotJSON(where, "text with a NUL character, which the database does not store")
    return text


def _short(key: str) -> str:
    return repr(key if len(key) <= KEY_SHOWN else key[:KEY_SHOWN] + "…")


# --- The payload ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskCall:
    """What a task job's payload holds: the function, its arguments, how to call it."""

    function: str  # the module path the worker imports it by
    args: list[Any]
    kwargs: dict[str, Any]
    backend: str = "default"
    queue_name: str = DEFAULT_TASK_QUEUE_NAME
    priority: int = 0
    takes_context: bool = False
    outside_effects: bool = False

    def payload(self) -> dict[str, Any]:
        return {
            "function": self.function, "args": self.args, "kwargs": self.kwargs, "backend": self.backend,
            "queue_name": self.queue_name, "priority": self.priority, "takes_context": self.takes_context,
            "outside_effects": self.outside_effects,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> TaskCall:
        return cls(**{name: payload[name] for name in PAYLOAD_FIELDS if name in payload})

    def resolve(self) -> Task[..., Any]:
        """The task as this process has it; ``TaskNotFound`` (with the reason) if it cannot."""
        return _resolve(self.function, self.backend, self.queue_name, self.priority, self.takes_context)


PAYLOAD_FIELDS = ("function", "args", "kwargs", "backend", "queue_name", "priority", "takes_context",
                  "outside_effects")
PAYLOAD_SCHEMA = {
    "type": "object",
    "properties": {
        "function": {"type": "string", "minLength": 3, "maxLength": 300},
        "args": {"type": "array"},
        "kwargs": {"type": "object"},
        "backend": {"type": "string", "maxLength": 100},
        "queue_name": {"type": "string", "maxLength": 100},
        "priority": {"type": "integer", "minimum": -100, "maximum": 100},
        "takes_context": {"type": "boolean"},
        "outside_effects": {"type": "boolean"},
    },
    "required": ["function", "args", "kwargs"],
    "additionalProperties": False,
}


@functools.lru_cache(maxsize=1024)
def _resolve(function: str, backend: str, queue_name: str, priority: int,
             takes_context: bool) -> Task[..., Any]:
    # Cached per process: a worker runs the same few functions thousands of times, and a task
    # is an immutable value. Failures are not cached (lru_cache keeps only results).
    if function not in _registered:
        refused = import_refused(function.rpartition(".")[0])
        if refused:
            raise TaskNotFound(f"{function!r} is not a registered task: {refused}")
    try:
        target = import_string(function)
    except ImportError as exc:
        raise TaskNotFound(f"cannot import the task function {function!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001  importing its module failed: say how, not the details
        raise TaskNotFound(f"importing the module of {function!r} failed with {class_path(type(exc))}") from None
    if isinstance(target, Task):
        task = target
    elif inspect.isfunction(target) and is_registered(target):  # a @task's function, bound to its name undecorated
        task = _as_task(target, backend)
    else:
        # Any other importable callable (subprocess.getoutput, say) is not a task, whoever wrote the row.
        raise TaskNotFound(f"{function!r} is not a registered task: only functions declared with @task run")
    changes: dict[str, Any] = {"backend": backend, "queue_name": queue_name, "priority": priority}
    if any(getattr(task, name) != value for name, value in changes.items()) or task.takes_context != takes_context:
        try:
            task = replace(task, takes_context=takes_context, **changes)
        except Exception as exc:  # noqa: BLE001  this process's TASKS no longer accept it
            raise TaskNotFound(f"{function!r} cannot run here: {exc}") from None
    return task


def import_refused(module: str) -> str:
    """Why the module a job names may not be imported to look for its task; "" when it may.

    Asked before any import, for a function the registry does not know yet: importing a module
    runs it, so a row's name is imported only where the project's own code is (an installed
    app, or a package in the project's folder outside the virtualenv), or where it is imported
    already. The top package is located without running anything; the standard library and
    installed packages are never imported on a row's word (``this`` prints the Zen of Python).
    """
    if not module or module in sys.modules or apps.get_containing_app_config(module) is not None:
        return ""
    top = module.partition(".")[0]
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return ""  # nothing to import: import_string says so in its own words
    where = spec.submodule_search_locations[0] if spec.submodule_search_locations else spec.origin
    if where and _in_the_project(Path(where)):
        return ""
    return f"its module {top!r} is not the project's, and this worker runs only the project's registered tasks"


def _in_the_project(path: Path) -> bool:
    base = getattr(settings, "BASE_DIR", None)  # a project without one: its installed apps only
    if base is None:
        return False
    resolved = path.resolve()
    outside = {Path(sys.prefix), Path(sys.base_prefix), *(Path(p) for p in sysconfig.get_paths().values())}
    return resolved.is_relative_to(Path(base).resolve()) and not any(
        resolved.is_relative_to(place.resolve()) for place in outside)


# The functions this process has made tasks of (``@task`` with the queue's backend, by way of
# ``QueueBackend.validate_task``), by module path: what a job may name besides a Task itself.
# Looked at before any import: a name it does not hold is imported only where ``import_refused``
# allows, and the module's tasks are in it after that.
_registered: dict[str, Any] = {}


def register(func: Any) -> None:
    _registered[f"{func.__module__}.{func.__qualname__}"] = func


def is_registered(func: Any) -> bool:
    return _registered.get(f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', '')}") is func


def _as_task(func: Any, backend: str) -> Task[..., Any]:
    from .framework import task_backends

    try:
        return task_backends[backend].task_class(func=func, backend=backend, priority=0,
                                                 queue_name=DEFAULT_TASK_QUEUE_NAME, run_after=None)
    except Exception as exc:  # noqa: BLE001
        raise TaskNotFound(f"{class_path(func)} cannot run here: {exc}") from None


def missing_function(*args: Any, **kwargs: Any) -> None:
    """Stands in for a task function that can no longer be imported, in a read result."""
    raise TaskNotFound("the task function of this result can no longer be imported")


# --- Errors in last_error ---------------------------------------------------------------------


def describe(exc: BaseException, *, func: Any = None, message: str = "") -> str:
    """The class path, then a traceback of the innermost frames that fit; no exception message.

    ``message`` (a ``JobFailed``'s, written by the task's author for staff) ends the last line
    when given. Frames before the task function (the worker's own) are left out.
    """
    path = class_path(type(exc))
    frames: list[traceback.FrameSummary] = traceback.extract_tb(exc.__traceback__)
    code = getattr(func, "__code__", None)
    if code is not None:
        starts = [n for n, f in enumerate(frames) if f.filename == code.co_filename and f.name == code.co_name]
        if starts:
            frames = frames[starts[0]:]
    lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}\n' + (f"    {f.line.strip()}\n" if f.line else "")
             for f in frames]
    last = path + (f": {message[:200]}" if message else "")
    head = "Traceback (most recent call last):\n"
    budget = ERROR_LIMIT - len(path) - len(head) - len(last) - 50
    kept: list[str] = []
    for line in reversed(lines):
        if len(line) > budget:
            break
        kept.append(line)
        budget -= len(line)
    left_out = len(lines) - len(kept)
    note = f"  ... {left_out} outer frame(s) left out\n" if left_out else ""
    return f"{path}\n{head}{note}{''.join(reversed(kept))}{last}"


def errors_of(state: str, last_error: str, code: str) -> list[TaskError]:
    """A job's ``last_error`` and ``failure_code`` as the framework's errors: what the task
    raised, or what the queue says ended it (a class of this module, chosen by the code, with
    the queue's words as the traceback)."""
    if code == ERROR_CODE:
        path, _, trace = last_error.removeprefix(f"{ERROR_CODE}: ").partition("\n")
        return [TaskError(exception_class_path=path, traceback=trace)]
    if not last_error and state not in (DEAD, UNKNOWN, CANCELLED):
        return []
    if code == "task_not_found":
        cls: type = TaskNotFound
    elif code == "task_result_not_json":
        cls = ReturnValueNotJSON
    elif state == UNKNOWN:
        cls = OutcomeUnknown
    elif state == CANCELLED:
        cls = TaskCancelled
    else:
        cls = TaskInterrupted
    return [TaskError(exception_class_path=class_path(cls), traceback=last_error or f"the job is {state}")]


# --- A job row as a TaskResult -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueTaskResult(AnyTaskResult):
    """The framework's result, plus the job's own state in the queue.

    ``status`` is FAILED for ``dead``, ``unknown`` and ``cancelled`` alike; ``state`` tells them
    apart: ``outcome_unknown`` means the task may have had its outside effects (staff decide in
    the admin), ``cancelled`` that it was cancelled.
    """

    state: str = ""
    function: str = ""  # the module path the job names (also when it can no longer be imported)

    @property
    def outcome_unknown(self) -> bool:
        return self.state == UNKNOWN

    @property
    def cancelled(self) -> bool:
        return self.state == CANCELLED

    def refresh(self) -> None:
        fresh = self.task.get_backend().get_result(self.id)
        for attr in (*TASK_REFRESH_ATTRS, "state"):
            object.__setattr__(self, attr, getattr(fresh, attr))

    async def arefresh(self) -> None:
        fresh = await self.task.get_backend().aget_result(self.id)
        for attr in (*TASK_REFRESH_ATTRS, "state"):
            object.__setattr__(self, attr, getattr(fresh, attr))


HISTORY_SQL = (
    f"SELECT to_state, actor, at FROM {JobEvent._meta.db_table} WHERE job_id = %s AND "  # noqa: S608  our model's table; the id is bound
    "((from_state = '' AND to_state = 'queued') OR (from_state = 'queued' AND to_state = 'leased')) ORDER BY id"
)


def history(job_id: int) -> list[tuple[str, str, datetime]]:
    """The acceptance and every claim of a job, oldest first: (to_state, actor, at).

    One plain statement on the events' (job, id) index: the worker reads it for every task
    it runs, where building the same query through the ORM would cost more than the claim.
    """
    with connection.cursor() as cursor:
        cursor.execute(HISTORY_SQL, [job_id])
        rows = cursor.fetchall()
    return [(to_state, actor, _aware(at)) for to_state, actor, at in rows]


def _aware(value: str | datetime) -> datetime:
    """A timestamp as the driver returns it (text on SQLite), as an aware UTC datetime."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def build_result(*, job_id: int, task: Task[..., Any], call: TaskCall, state: str,
                 events: list[tuple[str, str, datetime]],
                 enqueued_at: datetime | None = None, finished_at: datetime | None = None,
                 last_error: str = "", failure_code: str = "", result: Any = None) -> QueueTaskResult:
    claims = [(actor, at) for to_state, actor, at in events if to_state == LEASED]
    accepted = next((at for to_state, _, at in events if to_state == QUEUED), None)
    value = QueueTaskResult(
        task=task,
        id=str(job_id),
        status=STATUS.get(state, TaskResultStatus.FAILED),
        enqueued_at=enqueued_at or accepted,
        started_at=claims[0][1] if claims else None,
        last_attempted_at=claims[-1][1] if claims else None,
        finished_at=finished_at if state not in (QUEUED, LEASED) else None,
        args=call.args,
        kwargs=call.kwargs,
        backend=call.backend,
        errors=errors_of(state, last_error, failure_code),
        worker_ids=[actor.removeprefix("worker:") for actor, _ in claims],
        state=state,
        function=call.function,
    )
    if state == COMPLETED and isinstance(result, dict):
        object.__setattr__(value, "_return_value", result.get("return_value"))
    return value


# --- Running one in the worker ------------------------------------------------------------------


def run(ctx: JobContext) -> dict[str, Any]:
    """The ``task`` kind's handler: import the function, call it, return its value as JSON.

    What the function raises is a retryable failure (backoff, then ``dead``); a ``JobFailed``
    it raises keeps its own ``retryable``. A task with outside effects commits the
    external-start marker first, so a worker lost while it runs leaves it ``unknown``.
    ``task_started`` is sent before the call; ``task_finished`` once the call has settled the
    task (its value, or a failure that ends it), just before the worker writes that outcome.
    """
    call = TaskCall.from_payload(ctx.payload)
    try:
        task = call.resolve()
    except TaskNotFound as exc:
        raise JobFailed(str(exc), retryable=False, code="task_not_found") from None
    result = build_result(job_id=ctx.job_id, task=task, call=call, state=LEASED, events=history(ctx.job_id))
    sender = type(task.get_backend())
    if call.outside_effects:
        ctx.mark_external_start(f"task {call.function}")
    task_started.send_robust(sender=sender, task_result=result)
    error, retryable, code = "", True, ERROR_CODE
    try:
        if call.takes_context:
            value = task.call(TaskContext(task_result=result), *result.args, **result.kwargs)
        else:
            value = task.call(*result.args, **result.kwargs)
    except (JobDeferred, StaleEpoch):
        raise
    except JobFailed as exc:
        error, retryable = describe(exc, func=task.func, message=exc.message), exc.retryable
    except Exception as exc:  # noqa: BLE001  the task's own failure: recorded without its message
        error = describe(exc, func=task.func)
    if not error:
        try:
            return_value = json_value(value, "the return value")
        except NotJSON as exc:
            error, retryable, code = f"{exc}; the task ran, so it is not run again", False, "task_result_not_json"
    # Signals go out here, outside any ``except``: a receiver that logs with exc_info (the
    # framework's own does) must not log the exception's message, which may quote the arguments.
    # Sent robustly: a receiver's error is logged, and never fails a task that has run.
    if not error:
        finished = replace(result, status=TaskResultStatus.SUCCESSFUL, finished_at=ctx.now())
        object.__setattr__(finished, "_return_value", return_value)
        task_finished.send_robust(sender=sender, task_result=finished)
        return {"return_value": return_value}
    if _ends_the_task(ctx, retryable):
        errors = errors_of(DEAD, f"{code}: {error}", code)
        task_finished.send_robust(sender=sender, task_result=replace(
            result, status=TaskResultStatus.FAILED, finished_at=ctx.now(), errors=errors))
    raise JobFailed(error, retryable=retryable, code=code)


def _ends_the_task(ctx: JobContext, retryable: bool) -> bool:
    """Whether this failure leaves the job for good (``queue.fail``'s rule, ``transitions.FAIL``,
    on the row): not retryable, attempts spent, or past the external-start marker. A retry the
    deadline leaves no room for is also final, but only the queue's jittered backoff decides
    that: here the next try's time is unknown (NULL), and that way is passed over."""
    if not retryable:
        return True
    row = Job.objects.filter(pk=ctx.job_id).values("attempts", "max_attempts", "deadline",
                                                   "external_started_at").first()
    return row is None or FAIL.way(row, {"retryable": retryable, "retry_at": None}).to != QUEUED


kinds.register(Kind(
    name=KIND,
    handler=run,
    payload_schema=PAYLOAD_SCHEMA,
    max_payload_bytes=MAX_PAYLOAD_BYTES,
    deadline=queue_settings().deadline,
    internal=True,
    description="A function of Django's Tasks framework, enqueued through jobs.tasks_backend.",
))
