"""What a regression check asks of one series for an upload's runs: ``check``.

The series as stored goes in, the changes worth an alert come out: ``detection.detect`` for
the upload's runs, each against its pinned or declared baseline, and the stock series'
confirmed steps (``detection.change_points``) and its drift on the newest kernel
(``drift.drift_changes``) when one of them is a stock run. The series is
cleaned, sorted and analysed once for all of these (``analysed_once``). Pure, no Django: the
service (``perfdb.alerting``) asks it through the package's face, ``perfdb.detector.check``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from perfdb.detector.detection import change_points, detect
from perfdb.detector.drift import drift_changes
from perfdb.detector.long_series import analyse, analyse_of, kept
from perfdb.detector.order_stats import Floats
from perfdb.detector.points import Change, Columns, Ordered, Point, ordered
from perfdb.detector.policy import Settings

UNCACHED_FROM = 200  # points: a series this long is analysed without analyse's cache


def check(
    points: Sequence[Point],
    *,
    better: str,
    settings: Settings,
    candidates: Collection[int],
    pinned_run_id: int | None = None,
    declared: Mapping[int, int] | None = None,
    usable: Ordered | None = None,
    columns: tuple[Columns, Floats] | None = None,
) -> list[Change]:
    """What a regression check asks of one series for an upload's runs (``candidates``): the
    series as stored in, the changes worth an alert out.

    ``detect`` for the candidates, each against its pinned baseline (``pinned_run_id``, if
    still in the series) or the one its bundle names (``declared``: run -> baseline run),
    and every confirmed step of the stock series when a candidate is a stock run: a step
    that the upload's kernel confirms lands on an earlier upload's run and is still raised
    (or updated); and a drift of the stock series (``drift.drift_changes``, method "drift")
    when the newest stock kernel is a candidate. ``usable``: the points as ``ordered``
    gives them, when the caller read them so; ``columns``: their ``points.columns`` and
    single trials, likewise. The series is analysed once for every call
    (``analysed_once``)."""
    declared = declared or {}
    asked = {r: declared[r] for r in sorted(candidates) if r in declared}
    in_series = {p.run_id for p in points} if pinned_run_id is not None or asked else set()
    pinned = pinned_run_id if pinned_run_id in in_series else None
    usable = analysed_once(ordered(points) if usable is None else usable, settings, columns)
    changes = detect(
        usable,
        better=better,
        settings=settings,
        pinned_run_id=pinned,
        candidates=set(candidates) - asked.keys(),
    )
    for run_id, baseline_id in asked.items():
        changes += detect(
            usable,
            better=better,
            settings=settings,
            pinned_run_id=baseline_id if baseline_id in in_series else pinned,
            candidates={run_id},
        )
    # ``detect`` already returns the stock series' confirmed steps when a stock run is among
    # the candidates, but not with a pinned baseline
    wanted = set(candidates)
    stock_candidate = any(not p.patches for p in points if p.run_id in wanted)
    steps = change_points(usable, better=better, settings=settings)
    seen = {(c.candidate_run_id, c.method) for c in changes}
    changes += [
        s
        for s in steps
        if (s.candidate_run_id in wanted or stock_candidate)
        and (s.candidate_run_id, s.method) not in seen
    ]
    if stock_candidate:
        changes += drift_changes(usable, better, settings, wanted)
    return changes


def analysed_once(
    usable: Ordered, settings: Settings, columns: tuple[Columns, Floats] | None = None
) -> Ordered:
    """``usable`` with its analysis under ``settings`` where ``detect`` and ``change_points``
    look first (``long_series.kept``). A long series' is computed without ``long_series.analyse``'s
    own cache, whose key hashes every point (5 % of a one-run check onto 60 series of 1,000
    kernels) and which holds fewer series than such a check reads (``columns``: the points'
    columns and single trials, when the caller has them); a shorter series' goes through
    it, as a check run again finds it there. The same function, so the same analysis."""
    analyses = kept(usable)
    if settings not in analyses:
        if len(usable) < UNCACHED_FROM:
            analyses[settings] = analyse(usable, settings)
        else:
            analyses[settings] = analyse_of(usable, settings, *(columns or ()))
    return usable
