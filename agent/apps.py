from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Document review agent"

    def ready(self) -> None:
        from jobs import kinds, queue
        from jobs.admin import kind_triage
        from web import kind_pages

        from . import review_pages
        from .inbox import notifications, webhooks
        from .review_kind import KIND

        kinds.register(KIND)  # the queue learns the kind here; jobs never imports agent
        kind_pages.register(KIND.name, review_pages.PAGES)  # how a review reads on the pages: the product's
        kind_triage.register(KIND.name, review_pages.TRIAGE)  # what staff are shown of it beyond the queue's rows
        kinds.register(notifications.DIGEST_KIND)
        kinds.register(notifications.TRIAGE_KIND)
        queue.needs_human_changed.connect(notifications.needs_human_changed, dispatch_uid="agent.notifications")
        queue.queue_delayed.connect(notifications.queue_delayed, dispatch_uid="agent.notifications")
        queue.batch_finished.connect(notifications.batch_finished, dispatch_uid="agent.notifications")
        kinds.register(webhooks.KIND)
        kinds.register(webhooks.CATCHUP_KIND)
