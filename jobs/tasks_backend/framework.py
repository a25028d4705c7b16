"""Django's Tasks framework, from wherever this Django has it.

Django 6 has it built in (``django.tasks``); on Django 5.2 the ``django-tasks`` package brings
the same API (``django_tasks``). The queue's backend imports the framework from here only, so
moving to Django 6 changes nothing in it. Applications import ``task`` from the framework
itself, as its documentation shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

FRAMEWORK = "django_tasks"
# Django 6's own, if this Django has it. Not for the type checker, which reads the package
# below: django-stubs 5.2 has no django.tasks.
if not TYPE_CHECKING:
    try:
        from django.tasks import task_backends
        from django.tasks.backends.base import BaseTaskBackend
        from django.tasks.base import (
            DEFAULT_TASK_QUEUE_NAME,
            TASK_REFRESH_ATTRS,
            Task,
            TaskContext,
            TaskError,
            TaskResult,
            TaskResultStatus,
            task,
        )
        from django.tasks.exceptions import InvalidTask, TaskResultDoesNotExist
        from django.tasks.signals import task_enqueued, task_finished, task_started

        FRAMEWORK = "django.tasks"
    except ImportError:
        pass
if FRAMEWORK == "django_tasks":  # Django 5.2: the django-tasks package
    from django_tasks import task_backends
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import (
        DEFAULT_TASK_QUEUE_NAME,
        TASK_REFRESH_ATTRS,
        Task,
        TaskContext,
        TaskError,
        TaskResult,
        TaskResultStatus,
        task,
    )
    from django_tasks.exceptions import InvalidTaskError as InvalidTask
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.signals import task_enqueued, task_finished, task_started

__all__ = [
    "DEFAULT_TASK_QUEUE_NAME",
    "FRAMEWORK",
    "TASK_REFRESH_ATTRS",
    "BaseTaskBackend",
    "InvalidTask",
    "Task",
    "TaskContext",
    "TaskError",
    "TaskResult",
    "TaskResultDoesNotExist",
    "TaskResultStatus",
    "task",
    "task_backends",
    "task_enqueued",
    "task_finished",
    "task_started",
]
