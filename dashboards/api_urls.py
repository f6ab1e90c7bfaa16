"""The API's resources beyond uploads, runs and compare (config/urls.py mounts them at /api/):
the catalog, a run's parts, the chart series, alerts with triage, subscriptions, and the
detector's settings per workload and metric."""

from django.urls import path

from dashboards import (
    api_alerts,
    api_catalog,
    api_run_data,
    api_scope_charts,
    api_series,
    api_summaries,
    api_thresholds,
)
from dashboards.page_cache import kept_while_current

urlpatterns = [
    path("runs/<int:run_id>/trials/", api_run_data.RunTrials.as_view(), name="api-run-trials"),
    path("runs/<int:run_id>/results/", api_run_data.RunResults.as_view(), name="api-run-results"),
    path("runs/<int:run_id>/profile/", api_run_data.RunProfile.as_view(), name="api-run-profile"),
    path(
        "runs/<int:run_id>/timeseries/",
        api_run_data.RunTimeSeries.as_view(),
        name="api-run-timeseries",
    ),
    path(
        "runs/<int:run_id>/histograms/",
        api_run_data.RunHistograms.as_view(),
        name="api-run-histograms",
    ),
    path("runs/<int:run_id>/curves/", api_run_data.RunCurves.as_view(), name="api-run-curves"),
    path("runs/<int:run_id>/files/", api_run_data.RunFiles.as_view(), name="api-run-files"),
    # an anonymous reader's answer kept whole until runs are added to the setup
    path("series/", kept_while_current(api_series.SeriesView.as_view()), name="api-series"),
    path("scaling/", api_series.ScalingView.as_view(), name="api-scaling"),
    path("kernel-time/", api_scope_charts.KernelTimeView.as_view(), name="api-kernel-time"),
    path("wakeups/", api_scope_charts.WakeupsView.as_view(), name="api-wakeups"),
    path("kernels/", api_catalog.KernelList.as_view(), name="api-kernels"),
    path("kernels/<int:pk>/", api_catalog.KernelDetail.as_view(), name="api-kernel"),
    path("patches/", api_catalog.PatchList.as_view(), name="api-patches"),
    path("patch-sets/", api_catalog.PatchSetList.as_view(), name="api-patch-sets"),
    path("hardware/", api_catalog.HardwareList.as_view(), name="api-hardware-list"),
    path("hardware/<int:pk>/", api_catalog.HardwareDetail.as_view(), name="api-hardware"),
    path("workloads/", api_catalog.WorkloadList.as_view(), name="api-workloads"),
    path("metrics/", api_catalog.MetricList.as_view(), name="api-metrics"),
    path("setups/", api_catalog.SetupList.as_view(), name="api-setups"),
    path("setups/<int:pk>/", api_catalog.SetupDetail.as_view(), name="api-setup"),
    path("baselines/", api_catalog.BaselineList.as_view(), name="api-baselines"),
    path("alerts/", api_alerts.AlertList.as_view(), name="api-alerts"),
    path("alerts/triage/", api_alerts.AlertBulkTriage.as_view(), name="api-alerts-triage"),
    path("alerts/<int:alert_id>/", api_alerts.AlertDetail.as_view(), name="api-alert"),
    path("alert-summaries/", api_summaries.SummaryList.as_view(), name="api-alert-summaries"),
    path(
        "alert-summaries/<int:kernel>-<int:patch_set>-<int:upload>/",
        api_summaries.SummaryDetail.as_view(),
        name="api-alert-summary",
    ),
    path("subscriptions/", api_alerts.SubscriptionList.as_view(), name="api-subscriptions"),
    path(
        "subscriptions/<int:subscription_id>/",
        api_alerts.SubscriptionDetail.as_view(),
        name="api-subscription",
    ),
    path("thresholds/", api_thresholds.ThresholdList.as_view(), name="api-thresholds"),
    path(
        "thresholds/<int:threshold_id>/",
        api_thresholds.ThresholdDetail.as_view(),
        name="api-threshold",
    ),
]
