"""Alert summary pages: the culprit builds (list), one build's moves with its triage and the
list-ready report (page and text/plain download). Selectors in perfdb/alerting/summaries.py."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.pure.selection import choice_param
from perfdb.alerting import placement, summaries
from perfdb.alerting.report import report_text
from perfdb.alerting.summaries import Summary, SummaryKey
from perfdb.models import Alert
from perfdb.operations.headers import attachment_header

TRIAGE_STATUSES = [s for s in Alert.Status.values if s not in ("pending", "cleared")]


summary_url = summaries.summary_path


@kept_for_anonymous("alert-summaries")
def summary_list(request: HttpRequest) -> HttpResponse:
    """Culprit builds newest first: those with a regression, or (``kind=improvements``)
    those that only made things better, apart."""
    kind = choice_param(request.GET, "kind", summaries.KINDS, "regressions")
    page, found = summaries.summaries_page(kind=kind, page=request.GET.get("page"))
    rows = [(s, summary_url(s.key)) for s in found]
    return render(
        request,
        "dashboards/alert_summaries.html",
        {"kind": kind, "kinds": summaries.KINDS, "page": page, "rows": rows},
    )


def _summary(kernel: int, patch_set: int, upload: int) -> Summary:
    summary = summaries.summary_get(key=SummaryKey(kernel, patch_set, upload))
    if summary is None:
        raise Http404("no alerts for this build and upload")
    return summary


def report_of(summary: Summary) -> str:
    """The list-ready report, its links absolute (the text is pasted into a mail)."""
    url = settings.SITE_URL + summary_url(summary.key)
    found = summaries.report(summary=summary, site=settings.SITE_URL, summary_url=url)
    return report_text(found)


@kept_for_anonymous("alert-summary")
def summary_detail(request: HttpRequest, kernel: int, patch_set: int, upload: int) -> HttpResponse:
    """Every metric the build moved, its report for the list, and (staff) the status of all
    its confirmed alerts at once."""
    summary = _summary(kernel, patch_set, upload)
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied("only staff can triage alerts")
        status = request.POST.get("status", "")
        try:
            count = summaries.summary_triage(summary=summary, user=request.user, status=status)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"{count} alert(s) set to {status}.")
        return redirect(summary_url(summary.key))
    rows = [(a, placement.doubt(a)) for a in summary.alerts]
    return render(
        request,
        "dashboards/alert_summary.html",
        {
            "summary": summary,
            "rows": rows,
            "report": report_of(summary),
            "report_url": reverse("alert-summary-report", args=[kernel, patch_set, upload]),
            "triage_statuses": TRIAGE_STATUSES,
        },
    )


def summary_report(request: HttpRequest, kernel: int, patch_set: int, upload: int) -> HttpResponse:
    """The report as a text/plain download, to attach or paste as it is."""
    summary = _summary(kernel, patch_set, upload)
    response = HttpResponse(report_of(summary), content_type="text/plain; charset=utf-8")
    name = f"perfdb-{summary.build}-upload-{upload}.txt"
    response["Content-Disposition"] = attachment_header(name, "perfdb-report.txt")
    return response
