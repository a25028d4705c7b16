from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs"

    def ready(self) -> None:
        # Importing them registers their kinds: the diagnostic kinds, and the kind Django's
        # Tasks framework enqueues.
        from . import diagnostic, task_kind  # noqa: F401
