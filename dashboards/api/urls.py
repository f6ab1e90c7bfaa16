"""The API's resources beyond uploads, runs and compare (config/urls.py mounts them at /api/):
the catalog, a run's parts, the chart series, alerts with triage, subscriptions, and the
detector's settings per workload and metric."""

from django.urls import path

from dashboards.api import (
    alerts,
    catalog,
    run_data,
    scope_charts,
    series,
    summaries,
    thresholds,
)
from dashboards.page_cache.kept import kept_while_current

urlpatterns = [
    path("runs/<int:run_id>/trials/", run_data.RunTrials.as_view(), name="api-run-trials"),
    path("runs/<int:run_id>/results/", run_data.RunResults.as_view(), name="api-run-results"),
    path("runs/<int:run_id>/profile/", run_data.RunProfile.as_view(), name="api-run-profile"),
    path(
        "runs/<int:run_id>/timeseries/",
        run_data.RunTimeSeries.as_view(),
        name="api-run-timeseries",
    ),
    path(
        "runs/<int:run_id>/histograms/",
        run_data.RunHistograms.as_view(),
        name="api-run-histograms",
    ),
    path("runs/<int:run_id>/curves/", run_data.RunCurves.as_view(), name="api-run-curves"),
    path("runs/<int:run_id>/files/", run_data.RunFiles.as_view(), name="api-run-files"),
    # an anonymous reader's answer kept whole until runs are added to the setup
    path("series/", kept_while_current(series.SeriesView.as_view()), name="api-series"),
    path("scaling/", series.ScalingView.as_view(), name="api-scaling"),
    path("kernel-time/", scope_charts.KernelTimeView.as_view(), name="api-kernel-time"),
    path("wakeups/", scope_charts.WakeupsView.as_view(), name="api-wakeups"),
    path("kernels/", catalog.KernelList.as_view(), name="api-kernels"),
    path("kernels/<int:pk>/", catalog.KernelDetail.as_view(), name="api-kernel"),
    path("patches/", catalog.PatchList.as_view(), name="api-patches"),
    path("patch-sets/", catalog.PatchSetList.as_view(), name="api-patch-sets"),
    path("hardware/", catalog.HardwareList.as_view(), name="api-hardware-list"),
    path("hardware/<int:pk>/", catalog.HardwareDetail.as_view(), name="api-hardware"),
    path("workloads/", catalog.WorkloadList.as_view(), name="api-workloads"),
    path("metrics/", catalog.MetricList.as_view(), name="api-metrics"),
    path("setups/", catalog.SetupList.as_view(), name="api-setups"),
    path("setups/<int:pk>/", catalog.SetupDetail.as_view(), name="api-setup"),
    path("baselines/", catalog.BaselineList.as_view(), name="api-baselines"),
    path("alerts/", alerts.AlertList.as_view(), name="api-alerts"),
    path("alerts/triage/", alerts.AlertBulkTriage.as_view(), name="api-alerts-triage"),
    path("alerts/<int:alert_id>/", alerts.AlertDetail.as_view(), name="api-alert"),
    path("alert-summaries/", summaries.SummaryList.as_view(), name="api-alert-summaries"),
    path(
        "alert-summaries/<int:kernel>-<int:patch_set>-<int:upload>/",
        summaries.SummaryDetail.as_view(),
        name="api-alert-summary",
    ),
    path("subscriptions/", alerts.SubscriptionList.as_view(), name="api-subscriptions"),
    path(
        "subscriptions/<int:subscription_id>/",
        alerts.SubscriptionDetail.as_view(),
        name="api-subscription",
    ),
    path("thresholds/", thresholds.ThresholdList.as_view(), name="api-thresholds"),
    path(
        "thresholds/<int:threshold_id>/",
        thresholds.ThresholdDetail.as_view(),
        name="api-threshold",
    ),
]
