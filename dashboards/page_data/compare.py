"""What the compare page and ``GET /api/compare/`` show of two sets of runs: the sides read
from the URL (run ids, or builds of a set-up: ``compare_selection``), the lines of every
metric judged by the detector's rule with the series' noise and the alerts on those runs
(``compare_data``), what the page's pickers offer (``compare_picker``), the figure's rows
(``compare_rows``) and a line's alert note cut into text and linked alerts (``note_parts``).
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.safestring import SafeString

from dashboards import chart_queries as cq
from dashboards.chart_queries import compare as compare_queries
from dashboards.chart_queries.links import run_compare_baseline
from dashboards.page_data.compare_series import compare_contexts
from dashboards.page_data.scopes import scope_index
from dashboards.page_data.setup_picker import setup_choices, setup_options
from dashboards.pure.chartdata import CompareRow
from dashboards.pure.chartdata import Metric as MetricData
from dashboards.pure.compare import CompareLine, compare_lines, table_order
from dashboards.pure.selection import BadParam, build_param, ids_param, scope_param
from dashboards.web.page_tools import setup_id_param


def compare_selection(q) -> tuple[list[int], list[int]]:
    """The two sides from ``base`` and ``new`` (run ids), and from ``base_build`` and
    ``new_build`` (``2.5.25+pri_preempt``: every run of that build) in the set-up ``setup``
    (an id or ``VolanoMark/P8/UP``); both sides are needed, a run only on one side, except
    that one candidate run alone is compared with the baseline its run page names."""
    base, new = ids_param(q, "base"), ids_param(q, "new")
    if q.get("base_build") or q.get("new_build"):
        setup_id = setup_id_param(q)
        if setup_id is None:
            raise BadParam("setup", "give the set-up of the builds, e.g. setup=VolanoMark/P8/UP")
        builds = compare_queries.setup_builds(setup_id=setup_id, limit=NAMED_BUILDS)
        base = list(dict.fromkeys(base + build_param(q, "base_build", builds)))
        new = list(dict.fromkeys(new + build_param(q, "new_build", builds)))
    if base and not new:
        raise BadParam("new", "give the candidate run ids, e.g. new=15,16")
    if len(new) == 1 and not base:  # one run: against the baseline its run page names
        base = run_compare_baseline(run_id=new[0])
        if not base:
            raise BadParam(
                "base",
                f"run {new[0]} has no baseline: no earlier kernel of its series, and no "
                "stock run of its kernel; give the baseline run ids, e.g. base=12,13",
            )
    if new and not base:
        raise BadParam("base", "give the baseline run ids, e.g. base=12,13")
    both = set(base) & set(new)
    if both:
        raise BadParam("new", f"run {min(both)} is on both sides")
    return base, new


# A build named in the URL is looked up among this many of the set-up's newest builds.
NAMED_BUILDS = 100_000


def compare_data(base: list[int], new: list[int]) -> tuple[list[CompareLine], dict]:
    """Lines in the page's order (``compare.table_order``: the headline metric first) and
    run infos; unknown run ids are a BadParam naming their side."""
    infos = cq.run_infos(run_ids=base + new)
    for name, ids in (("base", base), ("new", new)):
        unknown = [i for i in ids if i not in infos]
        if unknown:
            raise BadParam(name, f"no run {', '.join(map(str, unknown))}")
    # judged by the detector's rule, with the series' noise and the alerts on these runs
    contexts = compare_contexts(base_ids=base, new_ids=new)
    lines = compare_lines(cq.compare_values(base_ids=base, new_ids=new), contexts)
    return table_order(lines), infos


RECENT_SHOWN = 20


def compare_picker(q, base: list[int], new: list[int]) -> dict[str, Any]:
    """What the page's pickers offer: the scopes (workload/hardware/mode), the chosen
    scope's set-ups, the chosen set-up's builds with their run ids, and the recent runs;
    each build and run marked when it is on a side. The set-up is ``setup`` (id or name),
    else the baseline's, else the busiest of ``scope``; none chosen, only the scopes.
    Two queries when a set-up is shown (its builds, recent runs), three when it is found
    from the baseline run, and its scope's set-ups and their options (``setup_picker``)
    once per scope version."""
    index = scope_index()
    setup_id = setup_id_param(q)
    scope = scope_param(q, index.scopes) if q.get("scope") else None
    if setup_id is None and scope is None and base:
        setup_id = compare_queries.run_setup_id(run_id=base[0])
    setups: list[dict[str, Any]] = []
    if setup_id is not None and scope is None:
        setups = cq.setup_choices(setup_id=setup_id)
        if not setups:
            raise BadParam("setup", f"no set-up {setup_id} with runs")
        key = f"{setups[0]['workload_id']}-{setups[0]['hardware_id']}-{setups[0]['mode']}"
        scope = next((s for s in index.scopes if s.key == key), None)
    options = SafeString("")
    if scope is not None:
        setups = setup_choices({scope.key: scope.ids})[scope.key]
        if setup_id not in {s["id"] for s in setups}:  # another scope chosen since
            setup_id = max(setups, key=lambda s: s["run_count"])["id"] if setups else None
        options = setup_options(scope.key, setups, setup_id)
    sides = set(base), set(new)
    builds = (
        []
        if setup_id is None
        else _build_rows(compare_queries.setup_builds(setup_id=setup_id), sides)
    )
    recent = [
        {**r, "in_base": r["id"] in sides[0], "in_new": r["id"] in sides[1]}
        for r in cq.run_choices(limit=RECENT_SHOWN)
    ]
    return {
        "scopes": index.scopes,
        "scope": scope,
        "setup_options": options,
        "setup_id": setup_id,
        "builds": builds,
        "builds_capped": len(builds) >= compare_queries.BUILDS_SHOWN,
        "recent": recent,
    }


def _build_rows(
    builds: dict[str, list[int]], sides: tuple[set[int], set[int]]
) -> list[dict[str, Any]]:
    """A build is ticked on a side when all its runs are there."""
    return [
        {
            "build": build,
            "ids": ",".join(map(str, ids)),
            "n": len(ids),
            "in_base": set(ids) <= sides[0],
            "in_new": set(ids) <= sides[1],
        }
        for build, ids in builds.items()
    ]


_ALERT_NAMED = re.compile(r"\balert (\d+)\b")


def note_parts(note: str) -> list[tuple[str, int | None]]:
    """A row's alert note as (text, alert id) parts, an id where the note names ``alert N``:
    the template writes the text and links each alert to its page."""
    parts = _ALERT_NAMED.split(note)  # text, id, text, id, ..., text
    found: list[tuple[str, int | None]] = [(parts[0], None)]
    for i in range(1, len(parts), 2):
        found += [(f"alert {parts[i]}", int(parts[i])), (parts[i + 1], None)]
    return [(text, alert) for text, alert in found if text]


def compare_rows(lines: list[CompareLine], base_run, new_run) -> list[CompareRow]:
    """Figure rows for lines with a value on both sides, significant as the table says (the
    detector's rule). A metric without a direction is never significant: drawn grey."""
    return [
        CompareRow(
            metric=MetricData(line.metric, line.unit, line.direction != "lower"),
            baseline=base_run,
            candidate=new_run,
            baseline_value=line.base.mean,
            candidate_value=line.new.mean,
            p_value=line.p_value if line.direction != "none" else None,
            threshold_pct=line.threshold_pct,
            significant=line.significant,
            reason="; ".join(r for r in (line.reason, line.alert_note) if r),
        )
        for line in lines
        if line.base.mean is not None and line.new.mean is not None
    ]
