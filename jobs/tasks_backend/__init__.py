"""The queue as a backend for Django's Tasks framework: any Django app's ``@task`` runs here.

    TASKS = {"default": {"BACKEND": "jobs.tasks_backend.QueueBackend", "QUEUES": ["default"]}}

``my_task.enqueue(*args, **kwargs)`` checks the task (the framework's rules, and that a
worker can import its function by its module path) and its arguments (JSON, nothing else),
then commits a ``queued`` job of kind ``task`` through ``jobs.queue.accept``, which the
``runworkers`` processes run like any other job (``jobs.tasks_backend.kind``). Called inside
``transaction.atomic()`` it joins that transaction: a rollback leaves no job, and
``task_enqueued`` is sent only once the job is committed. ``get_result(id)`` reads the job
row and its events.

Options, in ``OPTIONS`` for every task of the alias, and per task with ``@queue_options``:
``MAX_ATTEMPTS`` / ``max_attempts`` (attempts before ``dead``), ``DEADLINE`` / ``deadline``
(seconds from the time it may start until the queue gives up on it), ``OUTSIDE_EFFECTS`` /
``outside_effects`` (the function reaches outside the database: a worker lost while it runs
leaves the job ``unknown`` for staff instead of running it again). ``SCOPE`` names the
scope whose tasks these are when the caller names none with ``for_scope()``; by default a
system scope, made at first use, that staff see in the admin.

Nothing here imports a model at import time: the framework builds a backend when the first
``@task`` is declared, which may be while apps are still loading.
"""

from __future__ import annotations

import contextvars
import functools
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils.module_loading import import_string

from ..clock import Clock, queue_clock
from .framework import BaseTaskBackend, InvalidTask, Task, TaskResultDoesNotExist, task_enqueued

if TYPE_CHECKING:
    from ..models import Scope
    from .kind import QueueTaskResult

SYSTEM_SCOPE = "system"  # tasks nobody gave a scope belong to it; made at first use
SYSTEM_USER = "system.tasks"  # submits every task job; inactive, no usable password
MAX_ATTEMPTS = 1000  # the most tries a task may ask for
OPTION_NAMES = {"SCOPE", "MAX_ATTEMPTS", "DEADLINE", "OUTSIDE_EFFECTS"}


class InvalidTaskArguments(InvalidTask, TypeError):
    """A task's arguments cannot travel in its job (not JSON, or too large): nothing was written."""


# --- Options -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueOptions:
    """How the queue runs a task; None: the alias's OPTIONS, then the queue's defaults."""

    max_attempts: int | None = None
    deadline: timedelta | None = None
    outside_effects: bool | None = None

    def __post_init__(self) -> None:
        if self.max_attempts is not None and (
            isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int)
            or not 1 <= self.max_attempts <= MAX_ATTEMPTS
        ):
            raise ValueError(f"max_attempts must be a whole number from 1 to {MAX_ATTEMPTS}, not {self.max_attempts!r}")
        if self.deadline is not None:
            deadline = self.deadline
            if isinstance(deadline, (int, float)) and not isinstance(deadline, bool):
                deadline = timedelta(seconds=deadline)
            if not isinstance(deadline, timedelta) or deadline <= timedelta(0):
                raise ValueError(f"deadline must be a positive timedelta or number of seconds, not {self.deadline!r}")
            object.__setattr__(self, "deadline", deadline)
        if self.outside_effects is not None and not isinstance(self.outside_effects, bool):
            raise ValueError(f"outside_effects must be True or False, not {self.outside_effects!r}")

    def over(self, defaults: QueueOptions) -> QueueOptions:
        return QueueOptions(**{f.name: getattr(self, f.name) if getattr(self, f.name) is not None
                               else getattr(defaults, f.name) for f in fields(self)})


def queue_options(*, max_attempts: int | None = None, deadline: timedelta | float | None = None,
                  outside_effects: bool | None = None) -> Callable[[Any], Any]:
    """Per-task options, kept on the function, so they work whatever ``@task`` accepts::

        @task
        @queue_options(max_attempts=5, outside_effects=True)
        def charge(order_id): ...
    """
    # A number of seconds is accepted: QueueOptions makes it a timedelta when it is created.
    options = QueueOptions(max_attempts=max_attempts, deadline=cast("timedelta | None", deadline),
                           outside_effects=outside_effects)

    def apply(target: Any) -> Any:
        func: Any = target.func if isinstance(target, Task) else target  # any function takes an attribute
        func._queue_options = options
        return target

    return apply


_scope: contextvars.ContextVar[Any] = contextvars.ContextVar("jobs_task_scope", default=None)


@contextmanager
def for_scope(scope: Scope | str) -> Iterator[None]:
    """Tasks enqueued inside the block belong to ``scope`` (a scope, or an existing scope's slug), so
    its fair share and its limits apply to them."""
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)


# --- The backend ---------------------------------------------------------------------------------


class QueueBackend(BaseTaskBackend):
    """Tasks as jobs of kind ``task``: leases, heartbeats, fenced completion, retries, triage.

    ``supports_priority``: the priority is checked (-100 to 100) and stored on the job; claims
    take higher priority first within the queue's fairness rule across scopes.
    """

    supports_defer = True  # run_after: the job's available time (its deadline counts from then)
    supports_async_task = True  # coroutine functions run to completion in the worker
    supports_get_result = True
    supports_priority = True

    clock: Clock = queue_clock  # tests swap in a logical clock

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        unknown = set(self.options) - OPTION_NAMES
        if unknown:
            raise ImproperlyConfigured(
                f"TASKS[{alias!r}]['OPTIONS'] has unknown option(s) {sorted(unknown)}; known: {sorted(OPTION_NAMES)}"
            )
        try:
            self.defaults = QueueOptions(
                max_attempts=self.options.get("MAX_ATTEMPTS"), deadline=self.options.get("DEADLINE"),
                outside_effects=self.options.get("OUTSIDE_EFFECTS"),
            )
        except ValueError as exc:
            raise ImproperlyConfigured(f"TASKS[{alias!r}]['OPTIONS']: {exc}") from None
        self.scope = self.options.get("SCOPE") or SYSTEM_SCOPE

    def validate_task(self, task: Task[..., Any]) -> None:
        """The framework's rules; then the function is one a worker may run (``kind.register``).

        Every Task checks itself here as it is made, so every ``@task`` of this backend is registered
        in whichever process imports it."""
        from .kind import register

        super().validate_task(task)
        register(task.func)

    def enqueue(self, task: Task[..., Any], args: Any, kwargs: Any) -> QueueTaskResult:
        from .. import queue
        from ..errors import InvalidPayload, PayloadTooLarge
        from .kind import KIND, QUEUED, NotJSON, TaskCall, build_result, json_value

        self.validate_task(task)
        _check_importable(task)
        try:
            call_args, call_kwargs = json_value(list(args), "args"), json_value(dict(kwargs), "kwargs")
        except NotJSON as exc:
            raise InvalidTaskArguments(f"task arguments must be JSON-serialisable: {exc}") from None
        except RecursionError:
            raise InvalidTaskArguments("task arguments nest too deeply to be stored as JSON") from None
        options = getattr(task.func, "_queue_options", QueueOptions()).over(self.defaults)
        call = TaskCall(function=task.module_path, args=call_args, kwargs=call_kwargs, backend=task.backend,
                        queue_name=task.queue_name, priority=task.priority, takes_context=task.takes_context,
                        outside_effects=bool(options.outside_effects))
        try:
            job = queue.accept(
                scope_id=scope_id(_scope.get() or self.scope), user_id=system_user_id(), kind=KIND,
                payload=call.payload(), operation_key=f"task:{uuid.uuid4().hex}", now=self.clock.now(),
                offered_only=False, available_at=task.run_after, max_attempts=options.max_attempts,
                deadline=options.deadline, priority=task.priority,
            ).job
        except PayloadTooLarge as exc:
            raise InvalidTaskArguments(
                f"task arguments are too large to travel in a job ({exc.message}): pass an id and look the data up "
                "in the task"
            ) from None
        except InvalidPayload as exc:
            raise InvalidTask(f"this task cannot be stored as a job: {exc.message}") from None
        result = build_result(job_id=job.pk, task=task, call=call, state=QUEUED, events=[],
                              enqueued_at=job.created_at)
        # Sent once the job is committed: at once outside a transaction, never after a rollback.
        transaction.on_commit(functools.partial(task_enqueued.send, type(self), task_result=result))
        return result

    def get_result(self, result_id: str) -> QueueTaskResult:
        from ..models import Job
        from .kind import KIND, TaskCall, TaskNotFound, build_result, history

        try:
            job_id = int(str(result_id).strip())
        except ValueError:
            raise TaskResultDoesNotExist(result_id) from None
        job = None
        if 0 < job_id < 2**63:
            job = Job.objects.filter(pk=job_id, kind=KIND).values(
                "state", "payload", "created_at", "finished_at", "last_error", "failure_code", "result").first()
        if job is None:
            raise TaskResultDoesNotExist(result_id)
        call = TaskCall.from_payload(job["payload"])
        try:
            task = call.resolve()
        except TaskNotFound:
            task = self._stand_in(call)
        return build_result(job_id=job_id, task=task, call=call, state=job["state"], events=history(job_id),
                            enqueued_at=job["created_at"], finished_at=job["finished_at"],
                            last_error=job["last_error"], failure_code=job["failure_code"], result=job["result"])

    def _stand_in(self, call: Any) -> Task[..., Any]:
        """A task for a result whose function is gone (its ``function`` still names it)."""
        from .kind import missing_function

        queue_name = call.queue_name if call.queue_name in self.queues else next(iter(self.queues))
        return self.task_class(func=missing_function, backend=self.alias, priority=call.priority,
                               queue_name=queue_name, run_after=None)


def _check_importable(task: Task[..., Any]) -> None:
    """A worker finds the function by its module path: it must lead back to this function."""
    path = task.module_path
    if task.func.__module__ == "__main__":
        raise InvalidTask(f"{path!r} is defined in __main__, which a worker process cannot import")
    try:
        target = import_string(path)
    except ImportError:
        target = None
    if target is not task.func and getattr(target, "func", None) is not task.func:
        raise InvalidTask(
            f"a worker imports task functions by their module path, and {path!r} does not lead to this task's "
            "function: declare tasks at module level under their own name"
        )


# --- Whose tasks ---------------------------------------------------------------------------------


def scope_id(scope: Scope | str) -> int:
    """The scope's id: the system scope is made at first use; any other must exist."""
    from ..models import Scope

    if isinstance(scope, Scope):
        return scope.pk
    pk = Scope.objects.filter(slug=scope).values_list("pk", flat=True).first()
    if pk is not None:
        return pk
    if scope != SYSTEM_SCOPE:
        raise InvalidTask(f"there is no scope {scope!r}: a task may name only an existing scope")
    made, _ = Scope.objects.get_or_create(slug=SYSTEM_SCOPE, defaults={"name": "System (tasks)"})
    return made.pk


def system_user_id() -> int:
    """The user every task job is submitted by: inactive, with no usable password, so nobody
    logs in as it. Made at first use; it belongs to no scope (its jobs name theirs)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    User = get_user_model()
    pk = User.objects.filter(username=SYSTEM_USER).values_list("pk", flat=True).first()
    if pk is not None:
        return pk
    user, _ = User.objects.get_or_create(username=SYSTEM_USER, defaults={
        "is_active": False, "password": make_password(None),
    })
    return user.pk
