from django.urls import path

from . import views

urlpatterns = [
    path("suppliers", views.supplier_list, name="supplier_list"),
    path("suppliers/import", views.supplier_import, name="supplier_import"),
    path("suppliers/settings", views.register_settings, name="register_settings"),
    path("suppliers/<int:supplier_id>", views.supplier_detail, name="supplier_detail"),
]
