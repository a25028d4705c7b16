from django.apps import AppConfig


class MailinConfig(AppConfig):
    name = "mailin"
    verbose_name = "Inbound e-mail"

    def ready(self) -> None:
        from jobs import kinds
        from jobs.admin import kind_triage

        from .conf import mailin_settings
        from .fetch import KIND, FetchTriage

        mailin_settings()  # a wrong MAILIN_* setting stops start-up, naming it
        kinds.register(KIND)  # the queue learns the fetch here; jobs never imports mailin
        kind_triage.register(KIND.name, FetchTriage())  # staff's line for a mailbox it could not read
