from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operators' instruments: the lease lab, the capacity planner, metrics and retention.

    It reads the queue's tables and calls ``jobs.queue``; it never imports ``agent``.
    """

    name = "ops"
    verbose_name = "Operators' instruments"
    default_auto_field = "django.db.models.BigAutoField"
