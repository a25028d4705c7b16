"""The agent's durable memory of a job: one checkpoint row, written after every step.

A restarted worker reads this row, not a model's conversation, to know where to resume.
It is written only inside ``JobContext.fenced()``, the transaction that holds while the
worker's epoch still owns the job, so a stale worker cannot write one.
"""

from __future__ import annotations

from django.db import models


class Checkpoint(models.Model):
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, primary_key=True, related_name="checkpoint")
    step_index = models.PositiveSmallIntegerField(default=0, help_text="Tool steps finished.")
    next_step = models.CharField(max_length=32, blank=True, help_text="The tool the workflow expects next.")
    latest_output = models.JSONField(default=dict, blank=True, help_text="The last step's checked output.")
    steps = models.JSONField(default=list, blank=True, help_text="Finished steps: tool, time, epoch.")
    proposal = models.JSONField(null=True, blank=True, help_text="A provider's saved proposal not yet run.")
    rejected = models.JSONField(null=True, blank=True, help_text="The proposal the policy refused, and why.")
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"checkpoint of job {self.job_id}: step {self.step_index}, next {self.next_step or '-'}"
