from django.contrib import admin
from django.urls import include, path

from ops.views import metrics_view

# The product's name in the staff pages, instead of "Django administration".
admin.site.site_header = "Docket staff"
admin.site.site_title = "Docket staff"
admin.site.index_title = "Triage and administration"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("ops/", include("ops.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("", include("agent.urls")),  # the members' work on documents (agent.views)
    path("", include("mailin.urls")),  # the team's inbound address (mailin.views)
    path("", include("suppliers.urls")),  # the tenant's supplier register
    path("", include("web.urls")),
]
