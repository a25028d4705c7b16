"""The project's settings with django-tasks-db as the task backend: ``workerbench``'s comparison.

Same store, same SQLite pragmas and the same ``CONN_MAX_AGE`` handling as the project's own
settings; only the task backend (and the app that holds its table) differs.
"""

from jobsite.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks", "django_tasks_db"]  # noqa: F405
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
