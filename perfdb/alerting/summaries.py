"""Alert summaries: the alerts of one culprit build, read together (selectors).

A summary is every alert whose candidate run has the same kernel, the same patch set and
came in the same upload: what one build did to every series it was measured in. It is
computed by grouping, not stored — the key is already on every alert (through its candidate
run), so there is nothing to keep in step and no migration. Cleared alerts (a spike the
next kernel took back) moved nothing and belong to no summary.

Triage of a summary sets the status of its confirmed alerts through ``triage.alerts_bulk_triage``
(the same permission and history as one alert's); pending alerts are the detector's to
confirm or clear, so a summary's triage leaves them.

``report`` turns a summary into the list-ready text (``report.py``): it reads the means and
spreads of the baseline and culprit runs of its metrics in two queries.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_
from typing import Any

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse

from perfdb.alerting import report as list_report
from perfdb.alerting.queries import (
    ROW_PREFETCHED,
    ROW_RELATED,
    alerts_filtered,
    kernel_moves_prefetch,
)
from perfdb.alerting.triage import alerts_bulk_triage
from perfdb.models import Alert, Result, ResultSummary, Run, Upload

OPEN = (Alert.Status.UNTRIAGED, Alert.Status.ACKNOWLEDGED, Alert.Status.INVESTIGATING)
KINDS = ("regressions", "improvements")

# What a summary's alerts show, fetched with them (no N+1).
RELATED = (*ROW_RELATED, "candidate_run__upload")


@dataclass(frozen=True)
class SummaryKey:
    """The culprit build and the upload that brought it; ``upload_id`` 0: runs stored
    without an upload."""

    kernel_id: int
    patch_set_id: int
    upload_id: int

    @property
    def slug(self) -> str:
        return f"{self.kernel_id}-{self.patch_set_id}-{self.upload_id}"

    def alerts_q(self) -> Q:
        upload = (
            Q(candidate_run__upload_id=self.upload_id)
            if self.upload_id
            else Q(candidate_run__upload__isnull=True)
        )
        return (
            Q(candidate_run__kernel_id=self.kernel_id)
            & Q(candidate_run__patch_set_id=self.patch_set_id)
            & upload
        )


def summary_path(key: SummaryKey) -> str:
    """The summary page's path (the email and the pages link to it)."""
    return reverse("alert-summary", args=[key.kernel_id, key.patch_set_id, key.upload_id])


def key_of(alert: Alert) -> SummaryKey:
    run = alert.candidate_run
    return SummaryKey(run.kernel_id, run.patch_set_id, run.upload_id or 0)


def alert_order(alert: Alert) -> tuple[bool, bool, bool, float, float]:
    """Confirmed before pending, regressions before improvements, then the move the data is
    surest of (the smallest p; a single value, which has none, after every tested one), then
    the largest.

    Surest rather than largest: one build's moves mix a throughput or a latency with spreads
    and maxima (sysbench's fairness stddev moves by hundreds of % when its events/s moves by
    40 %), and the noisiest metric would head every summary, subject and report."""
    return (
        alert.status == Alert.Status.PENDING,
        alert.direction != Alert.Direction.REGRESSION,
        alert.p_value is None,
        alert.p_value or 0.0,
        -abs(alert.change_pct),
    )


@dataclass
class Summary:
    """One culprit build's alerts, ordered by ``alert_order``."""

    key: SummaryKey
    alerts: list[Alert]

    @property
    def run(self) -> Run:
        return self.alerts[0].candidate_run

    @property
    def build(self) -> str:
        return self.run.build

    @property
    def upload(self) -> Upload | None:
        return self.run.upload

    @property
    def newest(self) -> datetime:
        return max(a.created_at for a in self.alerts)

    @property
    def confirmed(self) -> list[Alert]:
        return [a for a in self.alerts if a.status != Alert.Status.PENDING]

    @property
    def pending(self) -> list[Alert]:
        return [a for a in self.alerts if a.status == Alert.Status.PENDING]

    @property
    def regressions(self) -> list[Alert]:
        return [a for a in self.confirmed if a.direction == Alert.Direction.REGRESSION]

    @property
    def improvements(self) -> list[Alert]:
        return [a for a in self.confirmed if a.direction == Alert.Direction.IMPROVEMENT]

    @property
    def worst(self) -> Alert:
        """The move that heads the summary, its email and its report (``alert_order``): the
        confirmed regression the data is surest of, else a pending one (a build listed among
        regressions leads with one), else its first move."""
        pending = [a for a in self.pending if a.direction == Alert.Direction.REGRESSION]
        return (self.regressions or pending or self.alerts)[0]

    @property
    def statuses(self) -> str:
        """``2 untriaged, 1 acknowledged``: the statuses of the alerts, most common first."""
        counts = Counter(a.status for a in self.alerts)
        return ", ".join(f"{n} {status}" for status, n in counts.most_common())

    @property
    def setups(self) -> int:
        return len({a.setup_id for a in self.alerts})


def summaries_of(alerts: Iterable[Alert]) -> list[Summary]:
    """Alerts grouped by culprit build, newest summary first (no query: the alerts carry
    their candidate runs)."""
    groups: dict[SummaryKey, list[Alert]] = defaultdict(list)
    for alert in alerts:
        if alert.status != Alert.Status.CLEARED:
            groups[key_of(alert)].append(alert)
    summaries = [Summary(key, sorted(group, key=alert_order)) for key, group in groups.items()]
    summaries.sort(key=lambda s: (s.newest, s.key.slug), reverse=True)
    return summaries


def _summary_alerts() -> QuerySet[Alert]:
    return Alert.objects.exclude(status=Alert.Status.CLEARED)


def summary_keys(*, kind: str = "regressions") -> QuerySet[Alert, dict[str, object]]:
    """The keys of the summaries of ``kind``, newest first: those with a regression
    (confirmed or pending), or with improvements only. Grouped in PostgreSQL, so a page of
    keys is one query (and their count another); ``summaries_of_keys`` reads their alerts."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    keys = (
        _summary_alerts()
        .values(
            key_kernel=F("candidate_run__kernel_id"),
            key_patch_set=F("candidate_run__patch_set_id"),
            key_upload=Coalesce("candidate_run__upload_id", 0),
        )
        .annotate(
            newest=Max("created_at"),
            regressions=Count("pk", filter=Q(direction=Alert.Direction.REGRESSION)),
        )
    )
    keys = keys.filter(regressions__gt=0) if kind == "regressions" else keys.filter(regressions=0)
    return keys.order_by("-newest", "-key_kernel", "-key_patch_set", "-key_upload")


def summaries_of_keys(rows: Iterable[Mapping[str, Any]]) -> list[Summary]:
    """The summaries of rows of ``summary_keys``, in their order: one query (none for no
    rows)."""
    wanted = [SummaryKey(r["key_kernel"], r["key_patch_set"], r["key_upload"]) for r in rows]
    if not wanted:
        return []
    alerts = _summary_alerts().filter(reduce(or_, (k.alerts_q() for k in wanted)))
    by_key = {s.key: s for s in summaries_of(alerts.select_related(*RELATED))}
    return [by_key[k] for k in wanted if k in by_key]


def summaries_page(
    *, kind: str = "regressions", page: int | str | None = 1, per_page: int = 25
) -> tuple[Page[dict[str, object]], list[Summary]]:
    """One page of summaries, newest first (``summary_keys``). Three queries: the count,
    the page's keys, and the page's alerts."""
    found = Paginator(summary_keys(kind=kind), per_page).get_page(page)
    return found, summaries_of_keys(found)


def summary_get(*, key: SummaryKey, with_moves: bool = False) -> Summary | None:
    """The summary with everything its page shows (its alerts' baselines too);
    ``with_moves``: also each alert's re-attributions, which the API lists per alert."""
    alerts = (
        _summary_alerts()
        .filter(key.alerts_q())
        .select_related(*RELATED)
        .prefetch_related(*ROW_PREFETCHED)
    )
    if with_moves:
        alerts = alerts.prefetch_related(kernel_moves_prefetch())
    found = summaries_of(alerts)
    return found[0] if found else None


def summaries_open(*, limit: int = 10, scan: int = 300) -> list[Summary]:
    """What regressed and is not dealt with yet, for the overview: the culprit builds of the
    newest ``scan`` open or pending regressions, those with a confirmed one first. One query
    (alert_status_idx serves the status filter, newest first)."""
    alerts = (
        Alert.objects.filter(
            direction=Alert.Direction.REGRESSION, status__in=[*OPEN, Alert.Status.PENDING]
        )
        .select_related(*RELATED)
        .order_by("-created_at", "-id")[:scan]
    )
    summaries = summaries_of(alerts)
    summaries.sort(key=lambda s: not s.confirmed)  # stable: newest first within each
    return summaries[:limit]


@dataclass(frozen=True)
class UploadOutcome:
    upload: Upload
    regressions: int
    improvements: int
    pending: int

    @property
    def checking(self) -> bool:
        return check_running(self.upload)


def check_running(upload: Upload) -> bool:
    """Stored, the regression check it owes not finished (the check clears its mark): "no
    change" or "nothing moved" would be premature."""
    return upload.status == Upload.Status.DONE and upload.detection_due_at is not None


def uploads_with_outcome(*, limit: int = 10) -> list[UploadOutcome]:
    """The newest uploads with what their checks found, as each upload's page lists it
    (``upload_moves``): confirmed regressions and improvements and pending moves on their
    runs, and the earlier kernels' steps each confirmed. One query: each count a correlated
    subquery over the alerts of the upload (indexed by upload and by the upload that
    confirmed them), only for the ``limit`` uploads shown."""

    def counted(**where: object) -> Coalesce:
        upload = OuterRef("pk")
        alerts = (
            Alert.objects.filter(Q(upload_id=upload) | Q(notify_upload_id=upload), **where)
            .order_by()
            .values(one=Value(1))
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(alerts), 0)

    confirmed = [s for s in Alert.Status.values if s not in ("pending", "cleared")]
    uploads = (
        Upload.objects.select_related("user")
        .annotate(
            n_regressions=counted(direction="regression", status__in=confirmed),
            n_improvements=counted(direction="improvement", status__in=confirmed),
            n_pending=counted(status=Alert.Status.PENDING),
        )
        .order_by("-created_at")[:limit]
    )
    return [UploadOutcome(u, u.n_regressions, u.n_improvements, u.n_pending) for u in uploads]


@dataclass(frozen=True)
class UploadMoves:
    """What an upload's regression check found, as its page, its API answer and the upload
    script report it. ``checking``: the upload is stored but the check it owes has not
    finished, so "nothing moved" would be premature."""

    checking: bool
    regressions: list[Alert]
    improvements: list[Alert]
    pending: list[Alert]  # not emailed until confirmed; each says what will confirm it


def upload_moves(upload: Upload) -> UploadMoves:
    """The moves on the upload's runs, and the earlier kernels' steps its runs confirmed
    (emailed with it: ``notify_upload``), surest first as the email orders them
    (``summaries.alert_order``). A cleared move is not news and is left out. While the
    check runs nothing is read: the page and the script that poll it show only that."""
    if check_running(upload):
        return UploadMoves(checking=True, regressions=[], improvements=[], pending=[])
    alerts = sorted(
        alerts_filtered()
        .filter(Q(upload=upload) | Q(notify_upload=upload))
        .exclude(status=Alert.Status.CLEARED),
        key=alert_order,
    )
    confirmed = [a for a in alerts if a.status != Alert.Status.PENDING]
    return UploadMoves(
        checking=False,
        regressions=[a for a in confirmed if a.direction == Alert.Direction.REGRESSION],
        improvements=[a for a in confirmed if a.direction == Alert.Direction.IMPROVEMENT],
        pending=[a for a in alerts if a.status == Alert.Status.PENDING],
    )


def summary_triage(*, summary: Summary, user: User, status: str) -> int:
    """Set the status of the summary's confirmed alerts (pending ones are the detector's):
    the rules and history of one alert's triage. Returns how many were set."""
    return alerts_bulk_triage(alert_ids=[a.pk for a in summary.confirmed], user=user, status=status)


# --- the list-ready report ---------------------------------------------------------------------


def _side(values: Sequence[float], stated: ResultSummary | None) -> list_report.Side | None:
    """A build's mean and spread from its values; one value's spread only as its report
    stated it (``ResultSummary``), never guessed."""
    if not values:
        return None
    mean = math.fsum(values) / len(values)
    if len(values) > 1:
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
        return list_report.Side(mean, 100 * sd / abs(mean) if mean else None)
    if stated is not None and stated.sd_pct is not None:
        return list_report.Side(mean, stated.sd_pct)
    if stated is not None and stated.sd is not None and mean:
        return list_report.Side(mean, 100 * stated.sd / abs(mean))
    return list_report.Side(mean)


def _metric_label(alert: Alert) -> str:
    unit = f" ({alert.metric.unit})" if alert.metric.unit else ""
    return f"{alert.setup.workload.name}.{alert.metric.name}{unit}"


def _axes(alert: Alert) -> tuple[tuple[str, str], ...]:
    setup = alert.setup
    params = tuple((str(k), str(v)) for k, v in sorted(setup.params.items()))
    return (
        ("workload", str(setup.workload)),
        ("hardware", setup.hardware.name),
        ("mode", setup.mode),
        *params,
    )


def report(*, summary: Summary, site: str, summary_url: str) -> list_report.Report:
    """The summary as ``report.Report``: a section per set-up with its confirmed moves as
    rows (means and spreads of the baseline and culprit runs) and its pending moves apart.
    Two queries: the values of every run and metric involved, and stated spreads."""
    runs = {a.candidate_run_id for a in summary.alerts}
    for alert in summary.alerts:
        runs.update(r.pk for r in alert.baseline_runs.all())
    metrics = {a.metric_id for a in summary.alerts}
    values: dict[tuple[int, int], list[float]] = defaultdict(list)
    rows = Result.objects.filter(run_id__in=runs, metric_id__in=metrics, discarded=False)
    for run_id, metric_id, value in rows.values_list("run_id", "metric_id", "value"):
        values[(run_id, metric_id)].append(value)
    stated = {
        (s.run_id, s.metric_id): s
        for s in ResultSummary.objects.filter(run_id__in=runs, metric_id__in=metrics)
    }
    by_setup: dict[int, list[Alert]] = defaultdict(list)
    for alert in summary.alerts:
        by_setup[alert.setup_id].append(alert)
    sections = []
    for alerts in by_setup.values():
        first = alerts[0]
        bases = sorted(
            {r.pk: r for a in alerts for r in a.baseline_runs.all()}.values(), key=lambda r: r.pk
        )
        rows_out, pending = [], []
        for alert in alerts:
            if alert.status == Alert.Status.PENDING:
                pending.append(
                    list_report.PendingRow(_metric_label(alert), alert.change_pct, alert.state_note)
                )
                continue
            base_runs = list(alert.baseline_runs.all())
            base_values = [v for r in base_runs for v in values[(r.pk, alert.metric_id)]]
            base_stated = (
                stated.get((base_runs[0].pk, alert.metric_id)) if len(base_runs) == 1 else None
            )
            base = _side(base_values, base_stated)
            key = (alert.candidate_run_id, alert.metric_id)
            culprit = _side(values[key], stated.get(key))
            if base is None or culprit is None:  # a run deleted since: nothing to print
                continue
            rows_out.append(
                list_report.Row(
                    _metric_label(alert),
                    base,
                    alert.change_pct,
                    culprit,
                    regression=alert.direction == Alert.Direction.REGRESSION,
                )
            )
        base_ids = ",".join(str(r.pk) for r in bases)
        sections.append(
            list_report.Section(
                axes=_axes(first),
                base=list_report.builds_text(r.build for r in bases) or "(deleted)",
                culprit=first.candidate_run.build,
                rows=tuple(rows_out),
                pending=tuple(pending),
                link=f"{site}/compare/?base={base_ids}&new={first.candidate_run_id}",
            )
        )
    upload = summary.upload
    return list_report.Report(
        culprit=summary.build,
        upload=f"{upload.pk} ({upload.filename})" if upload else "none (stored without an upload)",
        sections=tuple(sections),
        link=summary_url,
    )
