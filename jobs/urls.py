from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("jobs", views.jobs, name="jobs"),
    path("jobs/new", views.job_new, name="job_new"),
    path("jobs/<int:job_id>", views.job_detail, name="job_detail"),
    path("openapi.json", views.openapi_json, name="openapi"),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
