from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs"

    def ready(self) -> None:
        from . import diagnostic  # noqa: F401  registers the diagnostic kinds
        from . import task_kind  # noqa: F401  registers the kind Django's Tasks framework enqueues
