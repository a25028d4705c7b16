import contextlib
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
os.environ.setdefault("JOBSITE_PROCESS", "web")  # the settings give a web process short database timeouts
application = get_wsgi_application()

# The queue's clock takes its first reading of the database's time as the process starts, so
# no user's first request waits for it (with the database away, that request would wait for
# this connection's timeout and then its own: twice the time before its 503). With the database
# away it has no time to give (``ClockUnavailable``): requests that write answer 503 until it does.
from jobs.clock import ClockUnavailable, queue_clock  # noqa: E402

with contextlib.suppress(ClockUnavailable):
    queue_clock.now()

# A web process serves every page and checks every upload: what they need (every view's module,
# every kind's readers: ``jobs.kinds.warmed``) is loaded as it starts, not by its first user's
# request. Other processes (workers, commands) load a kind's modules only when they meet it.
from django.urls import get_resolver  # noqa: E402

from jobs import kinds  # noqa: E402

get_resolver().url_patterns  # noqa: B018  imports the URLconf and with it every view
kinds.warm_all()
