from django.apps import AppConfig


class MailinConfig(AppConfig):
    name = "mailin"
    verbose_name = "Inbound e-mail"

    def ready(self) -> None:
        from jobs import kinds

        from .fetch import KIND

        kinds.register(KIND)  # the queue learns the fetch here; jobs never imports mailin
