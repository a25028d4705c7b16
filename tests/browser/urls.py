"""The site's URLs plus one that renders the product's 500 page, for the browser tests."""

from django.urls import include, path
from django.views.defaults import server_error

urlpatterns = [
    path("__500", server_error),
    path("", include("jobsite.urls")),
]
