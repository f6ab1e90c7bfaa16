"""Top-level URL map: pages, the API under /api/, admin, health."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
]
