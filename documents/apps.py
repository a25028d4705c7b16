from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    """The jobs' documents: the store they are kept in, each job's document row, and which kinds
    take one (``documents.rules``)."""

    name = "documents"
    verbose_name = "Documents"

    def ready(self) -> None:
        from jobs import kinds
        from jobs.admin import kind_triage

        from . import diagnostic, rules
        from .store import check_settings
        from .triage import STORED_DOCUMENTS

        check_settings()  # where documents are kept (DOCUMENTS_STORE): checked, not contacted
        kinds.register(diagnostic.KIND)  # a diagnostic kind that reads its document
        rules.register(diagnostic.KIND.name, diagnostic.RULES)
        kind_triage.register_job_input(STORED_DOCUMENTS)  # the queue's admin shows and finds jobs by their document
