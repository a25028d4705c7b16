"""The jobs' documents: the store they are kept in (files or an S3-compatible object store), each
job's ``Document`` row, and which kinds take one. The queue (``jobs``) names none of it: acceptance
attaches a document through the queue's generic seam (``documents.acceptance``), and the queue's
admin shows it through a registered hook (``documents.triage``)."""
