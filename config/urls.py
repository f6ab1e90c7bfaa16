"""Top-level URL map: pages, the API under /api/, admin, health."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from dashboards.api.runs import RunDetailView, RunListView
from dashboards.pages import account, health, overview, run_detail, status
from dashboards.pages import alerts as alerts_views
from ingest import api as ingest_api
from ingest import recovery_views
from ingest import views as ingest_views

urlpatterns = [
    path("", overview.home, name="home"),
    path("runs/<int:run_id>/", run_detail.run_detail, name="run-detail"),
    path("runs/<int:run_id>/files/<int:file_id>/", run_detail.raw_file, name="raw-file"),
    path("uploads/new/", ingest_views.upload_new, name="upload-new"),
    path("uploads/<int:upload_id>/", ingest_views.upload_detail, name="upload-detail"),
    path("uploads/<int:upload_id>/retry/", recovery_views.upload_retry_page, name="upload-retry"),
    path(
        "uploads/<int:upload_id>/reingest/",
        recovery_views.upload_reingest_page,
        name="upload-reingest",
    ),
    path(
        "uploads/<int:upload_id>/delete/", recovery_views.upload_delete_page, name="upload-delete"
    ),
    path("status/", status.status_page, name="status"),
    path("account/", account.account, name="account"),
    path("alerts/", alerts_views.alert_list, name="alert-list"),
    path("alerts/<int:alert_id>/", alerts_views.alert_detail, name="alert-detail"),
    path("subscriptions/", alerts_views.subscriptions, name="subscriptions"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", health.healthz, name="healthz"),
    path("healthz/detail", health.healthz_detail, name="healthz-detail"),
    path("", include("dashboards.urls")),  # comparison pages and /api/compare/
    # API
    path("api/uploads/", ingest_api.UploadCreateView.as_view(), name="api-uploads"),
    path("api/uploads/preview/", ingest_api.UploadPreviewView.as_view(), name="api-upload-preview"),
    path(
        "api/uploads/<int:upload_id>/",
        recovery_views.UploadDetailDeleteView.as_view(),
        name="api-upload",
    ),
    path(
        "api/uploads/<int:upload_id>/retry/",
        recovery_views.UploadRetryView.as_view(),
        name="api-upload-retry",
    ),
    path(
        "api/uploads/<int:upload_id>/reingest/",
        recovery_views.UploadReingestView.as_view(),
        name="api-upload-reingest",
    ),
    path("api/runs/", RunListView.as_view(), name="api-runs"),
    path("api/runs/<int:run_id>/", RunDetailView.as_view(), name="api-run"),
    path("api/", include("dashboards.api.urls")),  # catalog, run parts, series, alerts
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Split: the page's script is a separate static-like request, so the CSP needs no inline.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/", admin.site.urls),
]

handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
