from django.urls import path

from . import views

urlpatterns = [
    path("jobs/work", views.jobs_work, name="jobs_work"),
    path("jobs/<int:job_id>/work", views.job_work, name="job_work"),
    path("jobs/<int:job_id>/approve", views.job_approve, name="job_approve"),
    path("jobs/<int:job_id>/findings/accept", views.job_accept, name="job_accept"),
    path("account/webhooks", views.webhook_settings, name="webhook_settings"),
    path("account/webhooks/<int:endpoint_id>", views.webhook_change, name="webhook_change"),
    path("account/notifications", views.notification_settings, name="notification_settings"),
]
