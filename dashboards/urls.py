"""URLs of the comparison dashboards and of the compare API."""

from django.urls import path

from dashboards import (
    claims_views,
    compare_api,
    kernel_time_page,
    kernels_page,
    pages,
    profile_diff_views,
    reference_api,
    run_pages,
    summaries,
    wakeups_page,
)

urlpatterns = [
    path("alerts/summaries/", summaries.summary_list, name="alert-summaries"),
    path(
        "alerts/summaries/<int:kernel>-<int:patch_set>-<int:upload>/",
        summaries.summary_detail,
        name="alert-summary",
    ),
    path(
        "alerts/summaries/<int:kernel>-<int:patch_set>-<int:upload>/report.txt",
        summaries.summary_report,
        name="alert-summary-report",
    ),
    path("kernels/", kernels_page.kernels, name="dashboards-kernels"),
    path("kernels/figure/", kernels_page.kernels_figure, name="dashboards-kernels-figure"),
    path("kernels/alerts/", kernels_page.kernels_alerts, name="dashboards-kernels-alerts"),
    path("scaling/", pages.scaling, name="dashboards-scaling"),
    path("kernel-time/", kernel_time_page.kernel_time, name="dashboards-kernel-time"),
    path("wakeups/", wakeups_page.wakeups, name="dashboards-wakeups"),
    path("activity/", run_pages.activity, name="dashboards-activity"),
    path("compare/", run_pages.compare, name="dashboards-compare"),
    path("api/compare/", compare_api.CompareView.as_view(), name="api-compare"),
    path("profile-diff/", profile_diff_views.profile_diff_page, name="dashboards-profile-diff"),
    path(
        "api/profile-diff/",
        profile_diff_views.ProfileDiffView.as_view(),
        name="api-profile-diff",
    ),
    path("claims/", claims_views.claims_page, name="dashboards-claims"),
    path("api/claims/", claims_views.ClaimListView.as_view(), name="api-claims"),
    path("api/references/", reference_api.ReferenceListView.as_view(), name="api-references"),
    path(
        "api/alerts/<int:alert_id>/reference/",
        reference_api.AlertReferenceView.as_view(),
        name="api-alert-reference",
    ),
]
