"""What retention deleted, still counted: the metrics' counters must never go down.

``/metrics`` counts transitions from ``JobEvent`` at scrape time. Pruning deletes events,
so it first adds what it deletes here, in the same transaction; a counter is then this
table's value plus the live count, read in one statement.
"""

from __future__ import annotations

from django.db import models


class RetiredCount(models.Model):
    class Metric(models.TextChoices):
        TRANSITIONS = "transitions"
        STALE_REJECTIONS = "stale_rejections"
        RECOVERIES = "recoveries"

    metric = models.CharField(max_length=32, choices=Metric.choices)
    from_state = models.CharField(max_length=16, blank=True)
    to_state = models.CharField(max_length=16, blank=True)
    value = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["metric", "from_state", "to_state"], name="retiredcount_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.from_state or '-'}->{self.to_state or '-'}: {self.value}"
