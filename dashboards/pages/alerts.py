"""Alert pages: the list with its filters and bulk triage, an alert's detail with its history
and triage, and your subscriptions. Their forms are ``dashboards.pages.alert_forms``; what a
triage does to an alert is ``perfdb.alerting.triage``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from dashboards import chart_queries
from dashboards.chart_queries.links import alert_links
from dashboards.chart_queries.profiles import profile_diff_url
from dashboards.figures import across_kernels_figure, alert_figure
from dashboards.figures.reference import reference_figure
from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.attribution import for_builds
from dashboards.pages.alert_forms import SubscriptionForm, TriageForm
from dashboards.pages.summaries import summary_url
from dashboards.pure.selection import choice_param, ids_param, int_param, text_param
from perfdb.alerting import moves, placement, queries, summaries
from perfdb.alerting.report import builds_text
from perfdb.alerting.triage import (
    alert_triage,
    alerts_bulk_triage,
    subscription_delete,
    subscription_save,
)
from perfdb.features.reference import reference_history
from perfdb.models import Alert, OutboxMessage, ReferenceHold, Subscription
from perfdb.operations.accounts import AuthenticatedHttpRequest

STATUS_CHOICES = ["open", *Alert.Status.values]


def alert_filters(params) -> dict[str, str]:
    """The alert filters from a query string (dashboards/pure/selection.py): a bad status is a
    400 naming it (BadParam), not an empty page."""
    found = {
        "status": choice_param(params, "status", STATUS_CHOICES, ""),
        "direction": choice_param(params, "direction", Alert.Direction.values, ""),
    }
    for name in ("workload", "hardware", "kernel", "patch"):
        found[name] = text_param(params, name) or ""
    return {k: v for k, v in found.items() if v}


def baseline_label(alert: Alert) -> str:
    return builds_text(r.build for r in alert.baseline_runs.all())


@kept_for_anonymous("alerts")
def alert_list(request: HttpRequest) -> HttpResponse:
    filters = alert_filters(request.GET)  # BadParam: the escaped 400 page (config/middleware.py)
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied("only staff can triage alerts")
        ids = ids_param(request.POST, "alert", what="alert")
        status = request.POST.get("status", "")
        try:
            count = alerts_bulk_triage(alert_ids=ids, user=request.user, status=status)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"{count} alert(s) set to {status}.")
        return redirect(request.get_full_path())
    page = Paginator(queries.alerts_filtered(**filters), 50).get_page(request.GET.get("page"))
    rows = [(a, baseline_label(a), placement.doubt(a)) for a in page]
    return render(
        request,
        "dashboards/alerts.html",
        {
            "page": page,
            "rows": rows,
            "filters": filters,
            "statuses": STATUS_CHOICES,
            "triage_statuses": Alert.Status.values,
        },
    )


@kept_for_anonymous("alert")
def alert_detail(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = queries.alert_with_history(alert_id=alert_id)
    if alert is None:
        survivor = moves.merged_into(alert_id)
        if survivor is not None:  # merged into a confirmed alert of the same step
            return redirect("alert-detail", alert_id=survivor)
        raise Http404(f"no alert {alert_id}")
    form = TriageForm(
        request.POST or None,
        initial={"status": alert.status, "assignee": alert.assignee, "notes": alert.notes},
    )
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied("only staff can triage alerts")
        if form.is_valid():
            alert_triage(
                alert_id=alert.pk,
                user=request.user,
                status=form.cleaned_data["status"],
                assignee=form.cleaned_data["assignee"],
                notes=form.cleaned_data["notes"],
            )
            messages.success(request, "Alert updated.")
            return redirect("alert-detail", alert_id=alert.pk)
    base_ids = ",".join(str(r.pk) for r in sorted(alert.baseline_runs.all(), key=lambda r: r.pk))
    return render(
        request,
        "dashboards/alert_detail.html",
        {
            "alert": alert,
            "baseline": baseline_label(alert),
            "form": form,
            "compare_url": f"/compare/?base={base_ids}&new={alert.candidate_run_id}",
            "summary_url": summary_url(summaries.key_of(alert)),
            "kernel_moves": moves.kernel_moves(alert),
            "placed": placement.text(alert),
            "drift": placement.drift_text(alert),
            "figure": alert_chart(alert),
            "attribution": alert_attribution(alert),
            "reference": alert_reference(alert),
            "profile_diff_url": profile_diff_url(
                [r.pk for r in alert.baseline_runs.all()], [alert.candidate_run_id], alert.setup_id
            ),
            **alert_links(alert=alert),  # its series chart, the open alerts either side
        },
    )


def alert_reference(alert: Alert) -> dict | None:
    """The reference build's hold on this alert, with the reference's series to show beside
    the alert's own."""
    hold = ReferenceHold.objects.filter(alert=alert).select_related("metric").first()
    if hold is None:
        return None
    points = [
        (r.run_id, r.uploaded.isoformat(timespec="seconds"), r.mean, r.recent)
        for r in reference_history(hold)
    ]
    figure = reference_figure(points, hold.build, hold.metric.name, hold.metric.unit)
    return {"hold": hold, "figure": figure}


def alert_attribution(alert: Alert):
    """On a patched build: which patch of its stack moved the alert's metric."""
    patches = tuple(p for p in alert.candidate_run.patch_set.name.split("+") if p)
    if not patches:
        return None
    return for_builds(
        setup_id=alert.setup_id,
        metric=alert.metric,
        kernel=alert.candidate_run.kernel.version,
        patches=patches,
        direction=alert.direction,
    )


def alert_chart(alert: Alert) -> dict:
    """The alert's series across kernels with its baseline and candidate runs marked."""
    metric = {
        "id": alert.metric_id,
        "name": alert.metric.name,
        "unit": alert.metric.unit,
        "better": alert.metric.better,
    }
    series = chart_queries.series_points(setup_id=alert.setup_id, metric=metric).series
    in_series = {p.run.run_id for p in series.points}
    baseline = next((r.pk for r in alert.baseline_runs.all() if r.pk in in_series), None)
    if baseline is None or alert.candidate_run_id not in in_series:
        return across_kernels_figure(series)  # a marked run was deleted since
    return alert_figure(series, baseline, alert.candidate_run_id)


@login_required
def subscriptions(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Your subscriptions (staff see and manage everyone's)."""
    if request.method == "POST" and request.POST.get("delete"):
        sub = get_object_or_404(Subscription, pk=int_param(request.POST, "delete"))
        subscription_delete(user=request.user, subscription=sub)
        return redirect("subscriptions")
    form = SubscriptionForm(
        request.POST or None, initial={"email": request.user.email}, user=request.user
    )
    if request.method == "POST" and form.is_valid():
        subscription_save(user=request.user, subscription=form.save(commit=False))
        messages.success(request, "Subscription saved.")
        return redirect("subscriptions")
    subs = Subscription.objects.select_related("user").order_by("email")
    if not request.user.is_staff:
        subs = subs.filter(user=request.user)
    outbox = []
    if request.user.is_staff:
        outbox = list(
            OutboxMessage.objects.exclude(status=OutboxMessage.Status.SENT).order_by("-created_at")[
                :50
            ]
        )
    return render(
        request,
        "dashboards/subscriptions.html",
        {"form": form, "subscriptions": list(subs), "outbox": outbox},
    )
