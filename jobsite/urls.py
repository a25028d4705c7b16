from django.contrib import admin
from django.urls import include, path

from ops.views import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("ops/", include("ops.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("", include("jobs.urls")),
]
