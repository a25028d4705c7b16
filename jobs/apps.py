from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs"

    def ready(self) -> None:
        # The queue's settings are checked now: a bad one stops start-up with its name.
        from .conf import queue_settings

        queue_settings()
        # Importing them registers their kinds: the diagnostic kinds, and the kind Django's
        # Tasks framework enqueues.
        from . import diagnostic  # noqa: F401
        from .tasks_backend import kind  # noqa: F401
