"""The top kernel functions (dashboards/figures/profile.py): idle never leads them, each
era's idle functions are idle, the busy bars are shares of the busy ticks with idle in a
panel of its own, and a wholly idle profile draws no busy bar. Drawn from 002's Tables 5
and 6. No database."""

from __future__ import annotations

import pytest

from dashboards.figures import top_functions_figure
from dashboards.figures.profile import IDLE, OTHER, idle_share, shares, top_functions
from dashboards.pure.chartdata import KernelProfile
from tests.dashboards.figures.literals import TABLE_5, TABLE_6, TOTAL_5, TOTAL_6, room_run


def tables() -> tuple[KernelProfile, ...]:
    return (
        KernelProfile(room_run(50, "2.4-distro"), TABLE_5, TOTAL_5),
        KernelProfile(room_run(51, "2.5.59"), TABLE_6, TOTAL_6),
    )


def test_idle_never_leads_the_top_functions_and_busy_ones_rank_among_themselves():
    data = tables()
    assert top_functions(data, 3) == ["schedule", "csum_partial_copy...", "send_sig_info"]
    fig = top_functions_figure(data, top_n=3)
    names = [t["name"] for t in fig["data"]]
    assert names == ["schedule", "csum_partial_copy...", "send_sig_info", OTHER, IDLE]
    assert "default_idle" not in names


def test_busy_bars_are_shares_of_busy_ticks_and_idle_is_its_own_panel():
    data = tables()
    fig = top_functions_figure(data, top_n=3)
    schedule, csum, sig, other, idle = fig["data"]
    # 2.5.59: 397 of 60332 - 54048 = 6284 busy ticks, not 0.66 % of all of them.
    assert schedule["y"] == pytest.approx([2388 / (TOTAL_5 - 7071) * 100, 397 / 6284 * 100])
    for i in range(2):
        assert schedule["y"][i] + csum["y"][i] + sig["y"][i] + other["y"][i] == pytest.approx(100)
    assert idle["y"] == pytest.approx([7071 / TOTAL_5 * 100, 54048 / TOTAL_6 * 100])
    assert idle["yaxis"] == "y2" and schedule.get("yaxis", "y") == "y"
    y1, y2 = fig["layout"]["yaxis"]["domain"], fig["layout"]["yaxis2"]["domain"]
    assert y1[1] < y2[0]  # the idle panel above the busy bars
    assert idle["customdata"] == [50, 51]


@pytest.mark.parametrize(
    "kernel, function",
    [
        ("2.4.20", "default_idle"),
        ("2.4.20", "cpu_idle"),
        ("2.5.59", "poll_idle"),
        ("6.8.0", "intel_idle"),
        ("6.8.0", "acpi_idle_do_entry"),
        ("6.1.0", "mwait_idle_with_hints"),
    ],
)
def test_each_eras_idle_functions_are_idle(kernel, function):
    profile = KernelProfile(room_run(1, kernel), ((function, 75.0), ("schedule", 25.0)), 100.0)
    assert idle_share(profile) == 75.0
    assert shares(profile) == {"schedule": 100.0}


def test_a_wholly_idle_profile_draws_no_busy_bar():
    profile = KernelProfile(room_run(1, "2.5.59"), (("default_idle", 10.0),), 10.0)
    fig = top_functions_figure((profile,), top_n=2)
    assert [t["name"] for t in fig["data"]] == [OTHER, IDLE]
    assert fig["data"][0]["y"] == [0.0] and fig["data"][1]["y"] == [100.0]
