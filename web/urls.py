from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("jobs", views.jobs, name="jobs"),
    path("jobs/new", views.job_new, name="job_new"),
    path("jobs/export.csv", views.jobs_export, name="jobs_export"),
    path("jobs/export.xlsx", views.jobs_export, {"extension": "xlsx"}, name="jobs_export_xlsx"),
    path("jobs/filters", views.jobs_filters, name="jobs_filters"),
    path("jobs/filters/<int:filter_id>/delete", views.jobs_filter_delete, name="jobs_filter_delete"),
    path("jobs/<int:job_id>", views.job_detail, name="job_detail"),
    path("jobs/<int:job_id>/result.json", views.job_result, name="job_result"),
    path("jobs/<int:job_id>/note.txt", views.job_note, name="job_note"),
    path("jobs/<int:job_id>/pages/<int:number>.png", views.job_page_image, name="job_page_image"),
    path("jobs/<int:job_id>/document", views.job_document, name="job_document"),
    path("jobs/<int:job_id>/again", views.job_again, name="job_again"),
    path("jobs/<int:job_id>/cancel", views.job_cancel, name="job_cancel"),
    path("jobs/<int:job_id>/fields/<slug:field>", views.job_field, name="job_field"),
    path("batches/<slug:batch>", views.batch_detail, name="batch_detail"),
    path("batches/<slug:batch>/export.csv", views.batch_export, name="batch_export"),
    path("batches/<slug:batch>/export.xlsx", views.batch_export, {"extension": "xlsx"}, name="batch_export_xlsx"),
    path("batches/<slug:batch>/cancel", views.batch_cancel, name="batch_cancel"),
    path("openapi.json", views.openapi_json, name="openapi"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
