"""The profile diff's data, for its page, its CSV/JSON download and ``GET /api/profile-diff/``.

Two ways to name the sides, both permalinks:

* ``?base=12,13&new=15``: runs (several on a side are pooled, trials and all);
* ``?setup=4&base_build=2.4.20&new_build=2.5.59``: every profiled run of two builds of one
  setup, pooled. With only ``setup`` (or nothing) the first and last profiled builds of the
  setup (or of the busiest profiled setup) are compared.

The rows come from ``perfdb.features.profile_diff`` (pure); the page draws them with
``dashboards.figures.profile_diff``. The idle loop is listed apart (its own line and table),
so the busy functions are ranked among themselves by their share of busy ticks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dashboards.chart_queries import profiles as pq
from dashboards.pure.selection import BadParam, choice_param, ids_param, int_param
from dashboards.web import exports
from perfdb.features.profile_diff import DiffRow, ProfileSide, profile_diff

COLUMNS = (
    "function",
    "status",
    "idle",
    "base_ticks",
    "new_ticks",
    "base_share_pct",
    "new_share_pct",
    "delta_share_pp",
    "base_ticks_per_work",
    "new_ticks_per_work",
)


@dataclass(frozen=True)
class Diff:
    base: ProfileSide
    new: ProfileSide
    base_ids: tuple[int, ...]
    new_ids: tuple[int, ...]
    rows: list[DiffRow]
    work: dict[str, Any] | None
    selection: dict[str, object]
    setup_id: int | None
    builds: list[str]


def _side(ids: list[int], runs: dict[int, dict[str, Any]], label: str) -> ProfileSide:
    kernel = runs[ids[0]]["kernel"]
    return pq.profile_side(run_ids=ids, label=label, kernel=kernel)


def _runs_label(ids: list[int], runs: dict[int, dict[str, Any]]) -> str:
    builds = list(dict.fromkeys(runs[i]["build"] for i in ids))
    return " / ".join(builds) + f" (run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))})"


def diff_from_query(q) -> Diff | None:
    """The diff the query names; None when nothing stored has a profile."""
    base_ids, new_ids = ids_param(q, "base"), ids_param(q, "new")
    if base_ids or new_ids:
        return _diff_of_runs(base_ids, new_ids)
    setup_id = int_param(q, "setup")
    if setup_id is None:
        setups = pq.profiled_setups()
        if not setups:
            return None
        setup_id = setups[0]["id"]
    builds = pq.profile_builds(setup_id=setup_id)
    if not builds:
        raise BadParam("setup", f"setup {setup_id} has no run with a kernel profile")
    base_build = choice_param(q, "base_build", builds, builds[0])
    new_build = choice_param(q, "new_build", builds, builds[-1])
    if base_build == new_build and len(builds) > 1 and not q.get("new_build"):
        new_build = builds[-1] if base_build != builds[-1] else builds[0]
    base_ids = pq.build_runs(setup_id=setup_id, build=base_build)
    new_ids = pq.build_runs(setup_id=setup_id, build=new_build)
    runs = pq.profiled_runs(run_ids=base_ids + new_ids)
    base = _side(base_ids, runs, base_build)
    new = _side(new_ids, runs, new_build)
    selection = {"setup": setup_id, "base_build": base_build, "new_build": new_build}
    return _finish(base, new, base_ids, new_ids, selection, setup_id, builds)


def _diff_of_runs(base_ids: list[int], new_ids: list[int]) -> Diff:
    if not base_ids:
        raise BadParam("base", "give the baseline run ids, e.g. base=12,13")
    if not new_ids:
        raise BadParam("new", "give the candidate run ids, e.g. new=15,16")
    both = set(base_ids) & set(new_ids)
    if both:
        raise BadParam("new", f"run {min(both)} is on both sides")
    runs = pq.profiled_runs(run_ids=base_ids + new_ids)
    for name, ids in (("base", base_ids), ("new", new_ids)):
        missing = [i for i in ids if i not in runs]
        if missing:
            raise BadParam(name, f"run {', '.join(map(str, missing))}: no such run with a profile")
    base = _side(base_ids, runs, _runs_label(base_ids, runs))
    new = _side(new_ids, runs, _runs_label(new_ids, runs))
    selection = {"base": ",".join(map(str, base_ids)), "new": ",".join(map(str, new_ids))}
    setups = {runs[i]["setup_id"] for i in base_ids + new_ids}
    setup_id = setups.pop() if len(setups) == 1 else None
    return _finish(base, new, base_ids, new_ids, selection, setup_id, [])


def _finish(base, new, base_ids, new_ids, selection, setup_id, builds) -> Diff:
    work = pq.work_metric(base_ids=base_ids, new_ids=new_ids)
    if work is not None:
        base_work = pq.work_of(run_ids=base_ids, metric_id=work["id"])
        new_work = pq.work_of(run_ids=new_ids, metric_id=work["id"])
        if base_work and new_work:
            base = ProfileSide(base.label, base.kernel, base.ticks, base_work)
            new = ProfileSide(new.label, new.kernel, new.ticks, new_work)
        else:
            work = None
    rows = profile_diff(base, new)
    return Diff(base, new, tuple(base_ids), tuple(new_ids), rows, work, selection, setup_id, builds)


def diff_table(diff: Diff) -> exports.Table:
    return exports.Table(
        "profile-diff", COLUMNS, tuple(tuple(row_json(r).values()) for r in diff.rows)
    )


def row_json(row: DiffRow) -> dict[str, object]:
    return {
        "function": row.function,
        "status": row.status,
        "idle": row.idle,
        "base_ticks": row.base_ticks,
        "new_ticks": row.new_ticks,
        "base_share_pct": round(row.base_share_pct, 4),
        "new_share_pct": round(row.new_share_pct, 4),
        "delta_share_pp": round(row.delta_share_pp, 4),
        "base_ticks_per_work": row.base_ticks_per_work,
        "new_ticks_per_work": row.new_ticks_per_work,
    }
