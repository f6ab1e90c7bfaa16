"""The wakeups page's figures (dashboards/figures/wakeups.py), drawn from 001's Tables 1 and
2: bars of each value per nice pair, a trace per preemption threshold, and a heatmap per
threshold with each value at its nice pair and a pair not run left empty. No database."""

from __future__ import annotations

import pytest

from dashboards.figures import wakeups_figures
from dashboards.pure.chartdata import WakeupRow
from tests.dashboards.figures.literals import run

# (server nice, client nice, msg/s, try_to_wake_up calls, % priority preemptions)
TABLE_1 = (
    (0, 0, 13183, 3.49e6, 28.4),
    (0, -19, 13881, 4.42e6, 86.6),
    (0, 19, 10553, 5.52e6, 10.5),
    (19, 0, 13508, 4.06e6, 82.9),
)
TABLE_2 = (
    (0, 0, 13605, 3.22e6, 0.0),
    (0, -19, 18740, 1.67e6, 0.0),
    (0, 19, 10716, 5.35e6, 0.0),
    (19, 0, 16548, 2.01e6, 0.0),
)


def wakeup_rows() -> tuple[WakeupRow, ...]:
    rows = []
    for threshold, table in ((0, TABLE_1), (40, TABLE_2)):
        for i, (s, c, tput, calls, pct) in enumerate(table):
            info = run(100 + threshold + i, "2.5.25", ("pri_preempt",))
            rows.append(WakeupRow(info, s, c, threshold, tput, calls, pct))
    return tuple(rows)


def test_wakeup_bars_one_trace_per_threshold_per_value():
    figs = wakeups_figures(wakeup_rows())
    assert sorted(figs) == ["bars", "heatmap_0", "heatmap_40"]
    bars = figs["bars"]["data"]
    assert len(bars) == 6  # 3 values x 2 thresholds
    assert [t["name"] for t in bars[:2]] == ["preemption threshold 0", "preemption threshold 40"]
    assert bars[0]["x"] == ["0 / 0", "0 / -19", "0 / +19", "+19 / 0"]
    assert bars[0]["y"] == [row[2] for row in TABLE_1]
    assert bars[3]["y"] == [row[3] for row in TABLE_2]
    assert bars[5]["y"] == [row[4] for row in TABLE_2]
    assert [t["showlegend"] for t in bars] == [True, True, False, False, False, False]


def test_wakeup_heatmap_places_each_value_at_its_nice_pair():
    fig = wakeups_figures(wakeup_rows())["heatmap_40"]
    heat = fig["data"][0]
    assert heat["x"] == ["-19", "0", "+19"]  # client nice
    assert heat["y"] == ["0", "+19"]  # server nice
    for s, c, tput, _, _ in TABLE_2:
        cell = heat["z"][heat["y"].index("0" if s == 0 else f"{s:+d}")]
        assert cell[heat["x"].index("0" if c == 0 else f"{c:+d}")] == tput
    assert heat["z"][1][0] is None  # +19 / -19 is not in this subset: empty, not zero
    all_tput = [row[2] for row in TABLE_1 + TABLE_2]
    assert (heat["zmin"], heat["zmax"]) == (min(all_tput), max(all_tput))


def test_wakeup_heatmap_value_must_be_known():
    with pytest.raises(ValueError):
        wakeups_figures(wakeup_rows(), heatmap_value="msg")
