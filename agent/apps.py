from __future__ import annotations

from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from jobs.admin.kind_triage import KindTriage
    from web.kind_pages import KindPages


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Document review agent"

    def ready(self) -> None:
        from documents import rules
        from jobs import kinds, queue
        from jobs.admin import kind_triage
        from web import kind_pages

        from .inbox import notifications, webhooks
        from .review_kind import DOCUMENTS, KIND

        kinds.register(KIND)  # the queue learns the kind here; jobs never imports agent
        rules.register(KIND.name, DOCUMENTS)  # and the documents it takes
        # How a review reads on the pages (the product's), and what staff are shown of it beyond the
        # queue's rows: loaded with the reader by the first page that asks, not at every start.
        kind_pages.register_later(KIND.name, _review_pages)
        kind_triage.register_later(KIND.name, _review_triage)
        kinds.register(notifications.DIGEST_KIND)
        kinds.register(notifications.TRIAGE_KIND)
        queue.needs_human_changed.connect(notifications.needs_human_changed, dispatch_uid="agent.notifications")
        queue.queue_delayed.connect(notifications.queue_delayed, dispatch_uid="agent.notifications")
        queue.batch_finished.connect(notifications.batch_finished, dispatch_uid="agent.notifications")
        kinds.register(webhooks.KIND)
        kinds.register(webhooks.CATCHUP_KIND)


def _review_pages() -> KindPages:
    from .review_pages import PAGES

    return PAGES


def _review_triage() -> KindTriage:
    from .review_pages import TRIAGE

    return TRIAGE
