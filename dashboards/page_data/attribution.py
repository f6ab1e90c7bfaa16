"""Patch-stack attribution on the compare page and the alert page.

When one side is stock kernel K and the other K + a patch stack, in one setup, the compare
page shows what each patch brings (``perfdb.features.attribution``) as a waterfall, for the first
metric with a direction (the headline one, as ``selection.default_metric`` ranks them). A
single patch is shown beside the other patches measured alone on K, so a table of patches
each run alone (002 Tables 8 and 9) reads as one waterfall. An alert on a patched build
names the patch that moved its metric, or the runs that would tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dashboards.chart_queries import attribution as aq
from dashboards.figures.attribution import attribution_figure
from dashboards.pure.compare import CompareLine
from dashboards.web import exports
from perfdb.features.attribution import Attribution, attribute, build_name
from perfdb.models import Metric


@dataclass(frozen=True)
class AttributionView:
    attribution: Attribution
    metric: str
    unit: str
    better: str
    figure: dict[str, Any]

    @property
    def rows(self) -> list[dict[str, object]]:
        a = self.attribution
        return [
            {
                "patch": s.patch,
                "method": s.method,
                "against": build_name(a.kernel, s.base),
                "build": build_name(a.kernel, s.candidate),
                "delta": s.delta,
                "change_pct": s.verdict.change_pct if s.verdict else None,
                "p_value": s.verdict.p_value if s.verdict else None,
                "confidence": s.verdict.confidence if s.verdict else None,
                "significant": s.verdict.significant if s.verdict else None,
                "verdict": (s.verdict.direction if s.verdict.significant else "not significant")
                if s.verdict
                else "not measured",
                "reason": s.verdict.reason if s.verdict else s.needed,
            }
            for s in a.steps
        ]


def _stack_of(kernel: str, patches: tuple[str, ...], builds) -> tuple[str, ...]:
    if len(patches) != 1:
        return patches
    alone = sorted(k[0] for k in builds if len(k) == 1 and k != patches)
    return patches + tuple(alone)


def for_builds(
    *, setup_id: int, metric: Metric, kernel: str, patches: tuple[str, ...], direction=None
) -> AttributionView | None:
    builds = aq.kernel_builds(setup_id=setup_id, metric_id=metric.pk, kernel=kernel)
    if () not in builds or not patches:
        return None
    stack = _stack_of(kernel, patches, builds)
    a = attribute(kernel, stack, builds, metric.better, direction=direction)
    fig = attribution_figure(a, metric.name, metric.unit, metric.better)
    return AttributionView(a, metric.name, metric.unit, metric.better, fig)


def compare_attribution(
    base_ids: list[int], new_ids: list[int], lines: list[CompareLine]
) -> AttributionView | None:
    base, new = aq.one_build(run_ids=base_ids), aq.one_build(run_ids=new_ids)
    if base is None or new is None or base["setup_id"] != new["setup_id"]:
        return None
    if base["patches"] or base["kernel"] != new["kernel"] or not new["patches"]:
        return None
    rank = {"higher": 0, "lower": 1}
    directed = [line for line in lines if line.direction in rank and line.base.n and line.new.n]
    if not directed:
        return None
    line = min(directed, key=lambda x: (rank[x.direction], x.metric))
    metric = Metric.objects.filter(name=line.metric, unit=line.unit).first()
    if metric is None:
        return None
    return for_builds(
        setup_id=base["setup_id"], metric=metric, kernel=base["kernel"], patches=new["patches"]
    )


def attribution_table(view: AttributionView) -> exports.Table:
    rows = view.rows
    columns = tuple(rows[0]) if rows else ("patch",)
    return exports.Table("attribution", columns, tuple(tuple(r.values()) for r in rows))
