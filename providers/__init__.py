"""The model provider's budget: how many calls to it are in flight at once across all hosts
(``PROVIDER_SLOTS``), and the hold every worker keeps when it says "not now" (its 429).

A handler calls the provider inside ``providers.budget.slot(ctx)``, and after a 429 holds every
worker off with ``providers.budget.hold_off``. The queue (``jobs``) knows nothing of it: the
slots are bound to a job's epoch and lease, which this app reads from the queue's rows.
"""
