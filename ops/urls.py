from django.urls import path

from . import views

app_name = "ops"
urlpatterns = [
    path("", views.index, name="index"),
    path("lab/", views.lab_page, name="lab"),
    path("capacity/", views.capacity_page, name="capacity"),
]
