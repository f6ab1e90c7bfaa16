"""An alert email's subject, text and HTML, from the alerts it lists (``notify`` fills the
outbox with them); and a plain fallback that needs no template and no names from bundles.

The body is grouped by culprit build (``summaries``: kernel, patch set and the upload that
brought it): one section per build with its alerts, a link to its summary page and the
report for the mailing list (``report.py``), so a reader can forward it as it is."""

from __future__ import annotations

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse

from perfdb.alerting import placement, summaries
from perfdb.alerting.report import builds_text, report_text
from perfdb.models import Alert
from perfdb.operations.headers import header_text


def alert_rows(alerts: list[Alert]) -> list[dict[str, object]]:
    site = settings.SITE_URL
    rows = []
    for alert in alerts:
        baselines = list(alert.baseline_runs.all())
        base_ids = ",".join(str(r.pk) for r in baselines)
        rows.append(
            {
                "alert": alert,
                "workload": str(alert.setup.workload),
                "hardware": alert.setup.hardware.name,
                "mode": alert.setup.mode,
                "metric": f"{alert.metric.name} ({alert.metric.unit})",
                "change": f"{alert.change_pct:+.1f}%",  # the robot's way: a sign, no space
                "kernel": alert.candidate_run.kernel.display,  # a commit with its subject
                "patches": alert.candidate_run.patch_set.name or "stock",
                "baseline": builds_text(r.build for r in baselines),
                "confidence": "single value"
                if alert.p_value is None
                else f"p = {alert.p_value:.3g}",
                "placed": placement.text(alert),
                "drift": placement.drift_text(alert),
                "alert_url": site + reverse("alert-detail", args=[alert.pk]),
                "compare_url": f"{site}/compare/?base={base_ids}&new={alert.candidate_run_id}",
            }
        )
    return rows


def summary_sections(alerts: list[Alert]) -> list[dict[str, object]]:
    """The alerts by culprit build, each with its summary's address and list-ready report."""
    site = settings.SITE_URL
    sections = []
    for summary in summaries.summaries_of(alerts):
        url = site + summaries.summary_path(summary.key)
        found = summaries.report(summary=summary, site=site, summary_url=url)
        sections.append(
            {
                "summary": summary,
                "url": url,
                "rows": alert_rows(summary.alerts),
                "report": report_text(found),
            }
        )
    return sections


def headline(alerts: list[Alert]) -> Alert:
    """The alert a subject line names: the first in ``summaries.alert_order`` (a regression
    the data is surest of, then the largest), the same move that heads its summary page and
    its report for the list."""
    return min(alerts, key=summaries.alert_order)


def render(alerts: list[Alert], *, heading: str) -> tuple[str, str, str]:
    lead = headline(alerts)
    builds = {a.candidate_run.build for a in alerts}
    others = f" (and {len(builds) - 1} other build{'s' if len(builds) > 2 else ''})"
    # Names come from uploaded bundles: a CR/LF would make the send fail (BadHeaderError).
    subject = header_text(
        f"[perfdb] {len(alerts)} regression{'s' if len(alerts) > 1 else ''}: "
        f"{lead.setup.workload.name} {lead.candidate_run.build} "
        f"{lead.change_pct:+.1f}% {lead.metric.name}{others if len(builds) > 1 else ''}",
        300,
    )
    context = {
        "sections": summary_sections(alerts),
        "heading": heading,
        "site": settings.SITE_URL,
    }
    text = render_to_string("email/alerts.txt", context)
    html = render_to_string("email/alerts.html", context)
    return subject, text, html


def render_fallback(alerts: list[Alert], *, heading: str) -> tuple[str, str, str]:
    """A plain message that needs no template and no names from bundles: ids and links."""
    site = settings.SITE_URL
    lines = [heading, ""] + [
        f"- alert {a.pk}: {a.change_pct:+.1f}% {site}{reverse('alert-detail', args=[a.pk])}"
        for a in alerts
    ]
    subject = f"[perfdb] {len(alerts)} regression{'s' if len(alerts) > 1 else ''}"
    return subject, "\n".join(lines) + "\n", ""
