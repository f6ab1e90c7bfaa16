"""URLs of the comparison dashboards and of the compare API."""

from django.urls import path

from dashboards.api.claims import ClaimListView
from dashboards.api.compare import CompareView
from dashboards.api.profile_diff import ProfileDiffView
from dashboards.api.reference import AlertReferenceView, ReferenceListView
from dashboards.pages import (
    activity,
    claims,
    compare,
    kernel_time,
    kernels,
    profile_diff,
    scaling,
    summaries,
    wakeups,
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
    path("kernels/", kernels.kernels, name="dashboards-kernels"),
    path("kernels/figure/", kernels.kernels_figure, name="dashboards-kernels-figure"),
    path("scaling/", scaling.scaling, name="dashboards-scaling"),
    path("kernel-time/", kernel_time.kernel_time, name="dashboards-kernel-time"),
    path("wakeups/", wakeups.wakeups, name="dashboards-wakeups"),
    path("activity/", activity.activity, name="dashboards-activity"),
    path("compare/", compare.compare, name="dashboards-compare"),
    path("api/compare/", CompareView.as_view(), name="api-compare"),
    path("profile-diff/", profile_diff.profile_diff_page, name="dashboards-profile-diff"),
    path(
        "api/profile-diff/",
        ProfileDiffView.as_view(),
        name="api-profile-diff",
    ),
    path("claims/", claims.claims_page, name="dashboards-claims"),
    path("api/claims/", ClaimListView.as_view(), name="api-claims"),
    path("api/references/", ReferenceListView.as_view(), name="api-references"),
    path(
        "api/alerts/<int:alert_id>/reference/",
        AlertReferenceView.as_view(),
        name="api-alert-reference",
    ),
]
