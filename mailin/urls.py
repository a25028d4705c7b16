from django.urls import path

from . import views

urlpatterns = [
    path("account/email-in", views.inbound_settings, name="inbound_settings"),
]
