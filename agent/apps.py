from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Document review agent"

    def ready(self) -> None:
        from jobs import kinds

        from . import webhooks
        from .workflow import KIND

        kinds.register(KIND)  # the queue learns the kind here; jobs never imports agent
        kinds.register(webhooks.KIND)
