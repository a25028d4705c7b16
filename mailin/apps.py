from django.apps import AppConfig


class MailinConfig(AppConfig):
    name = "mailin"
    verbose_name = "Inbound e-mail"

    def ready(self) -> None:
        from jobs import kinds

        from .conf import mailin_settings
        from .fetch import KIND

        mailin_settings()  # a wrong MAILIN_* setting stops start-up, naming it
        kinds.register(KIND)  # the queue learns the fetch here; jobs never imports mailin
