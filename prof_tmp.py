import os, sys
os.environ["DATABASE_URL"] = "sqlite:////tmp/h9prof/p.sqlite3"
os.environ["JOBS_LOG_LEVEL"] = "WARNING"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
import django
django.setup()
import cProfile, pstats, time
from datetime import timedelta
from jobs.worker import Worker
w = Worker(name="p", lease=timedelta(seconds=30), burst=True, prefetch=32, completion_batch=32, listen=False)
t = time.time()
pr = cProfile.Profile()
pr.enable()
stats = w.run()
pr.disable()
print("jobs", stats.completed, "elapsed", time.time() - t)
pstats.Stats(pr).sort_stats("tottime").print_stats(25)
