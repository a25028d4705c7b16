from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Document review agent"

    def ready(self) -> None:
        from jobs import kinds, queue

        from . import notifications, webhooks
        from .workflow import KIND

        kinds.register(KIND)  # the queue learns the kind here; jobs never imports agent
        kinds.register(notifications.DIGEST_KIND)
        kinds.register(notifications.TRIAGE_KIND)
        queue.needs_human_changed.connect(notifications.needs_human_changed, dispatch_uid="agent.notifications")
        queue.queue_delayed.connect(notifications.queue_delayed, dispatch_uid="agent.notifications")
        queue.batch_finished.connect(notifications.batch_finished, dispatch_uid="agent.notifications")
        kinds.register(webhooks.KIND)
        kinds.register(webhooks.CATCHUP_KIND)
