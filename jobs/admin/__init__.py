"""Staff triage: the admin opens on the jobs that need a human and moves them only through the queue.

Job pages are read-only for everyone: state, epoch, lease and result change only through
the triage actions, which call ``jobs.queue`` with the state the staff member saw. Each
action asks for a reason on a confirmation page first (as ``delete_selected`` does), and
each move is recorded twice: a ``JobEvent`` (by the queue, actor ``staff:<username>``) and
an admin ``LogEntry``.

Importing this package registers the app's model admin: jobs (``job_admin``, its page
``job_page`` and its actions ``triage``).
"""

from .display import short_age, utc
from .job_admin import AgeFilter, JobAdmin, StateFilter
from .job_page import TASK_ARGUMENTS_SHOWN, guidance, marker_lines
from .triage import TRIAGES, OutcomeForm, ReasonForm, Triage

__all__ = [
    "TASK_ARGUMENTS_SHOWN",
    "TRIAGES",
    "AgeFilter",
    "JobAdmin",
    "OutcomeForm",
    "ReasonForm",
    "StateFilter",
    "Triage",
    "guidance",
    "marker_lines",
    "short_age",
    "utc",
]
