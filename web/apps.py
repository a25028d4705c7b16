from django.apps import AppConfig


class WebConfig(AppConfig):
    """The product's web app: the pages and the JSON API over the queue; its one model is a member's
    saved filters of the list (``web.models.SavedFilter``)."""

    name = "web"
    verbose_name = "Web"

    def ready(self) -> None:
        # The queue's staff job page shows the document beside the result as its tenant sees it,
        # and links the job's page for its submitters.
        from jobs.admin import kind_triage

        from .admin_document import AdminDocumentPane, submitter_page

        kind_triage.register_document_pane(AdminDocumentPane())
        kind_triage.register_submitter_page(submitter_page)
