import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobsite.settings")
os.environ.setdefault("JOBSITE_PROCESS", "web")  # the settings give a web process short database timeouts
application = get_asgi_application()
