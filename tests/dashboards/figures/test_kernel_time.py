"""The kernel-time page's figures (dashboards/figures/kernel_time.py, profile.py): a panel
per setup with bars labelled by build, and the top kernel functions with idle apart. No
database."""

from __future__ import annotations

import json

import pytest

from dashboards.figures import kernel_time_figure, top_functions_figure
from dashboards.figures.kernel_time import build_labels, by_setup
from dashboards.figures.profile import IDLE, OTHER, idle_share, shares, top_functions
from dashboards.pure.chartdata import KernelProfile, KernelTimeChart, KernelTimePoint, RunInfo

# 002 (Anand 2003) Tables 5 and 6, Trade 2.7 on 002-A (demo/002-anand-2003-trade27/): the
# listed readprofile rows and each listing's Total.
TABLE_5 = (
    ("default_idle", 7071.0),
    ("schedule", 2388.0),
    ("csum_partial_copy...", 822.0),
    ("send_sig_info", 799.0),
    ("save_i387", 744.0),
    ("tcp_v4_rcv", 511.0),
)
TABLE_6 = (
    ("default_idle", 54048.0),
    ("schedule", 397.0),
    ("csum_partial_copy...", 365.0),
    ("tcp_sendmsg", 191.0),
    ("__kfree_skb", 181.0),
    ("load_balance", 177.0),
)
TOTAL_5, TOTAL_6 = 23969.0, 60332.0
# What kernel_time_points makes of them: the non-idle share, and schedule's share of it.
BUSY_5 = (TOTAL_5 - 7071) / TOTAL_5 * 100  # 70.50 %
BUSY_6 = (TOTAL_6 - 54048) / TOTAL_6 * 100  # 10.42 %
BUILDS = (
    ("2.4.20", ()),
    ("2.5.25", ()),
    ("2.5.25", ("pri_preempt",)),
    ("2.5.59", ()),
    ("2.6.0", ()),
)


def run(run_id: int, kernel: str, patches: tuple[str, ...] = (), rooms: int = 10) -> RunInfo:
    params = (("messages", "1000"), ("rooms", str(rooms)))
    return RunInfo(
        run_id, kernel, patches, hardware="000-netfinity-7000-m10", mode="SMP", params=params
    )


def volume() -> tuple[KernelTimePoint, ...]:
    """8 setups (room counts) of 5 builds each, in kernel order as the selector gives them:
    40 bar pairs that had shared one axis."""
    points = []
    for k, (kernel, patches) in enumerate(BUILDS):
        for s, rooms in enumerate((5, 10, 15, 20, 25, 30, 40, 50)):
            busy = BUSY_5 if k % 2 else BUSY_6
            points.append(KernelTimePoint(run(100 * k + s, kernel, patches, rooms), busy, busy / 4))
    return tuple(points)


# --- kernel time: a panel per setup ------------------------------------------------------


def test_one_panel_per_setup_in_parameter_order_with_its_runs_in_kernel_order():
    fig = kernel_time_figure(KernelTimeChart(volume()))
    axes = sorted(k for k in fig["layout"] if k.startswith("xaxis"))
    assert len(axes) == 8 and len(fig["data"]) == 16  # a kernel and a scheduler bar each
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    # messages=1000 is every panel's: said in the hover, not in eight titles.
    assert titles == [f"<b>rooms={r}</b> · 5 runs" for r in (5, 10, 15, 20, 25, 30, 40, 50)]
    first = fig["layout"]["xaxis"]
    assert first["categoryarray"] == ["2.4.20", "2.5.25", "2.5.25+pri_preempt", "2.5.59", "2.6.0"]
    kernel, scheduler = fig["data"][:2]
    assert kernel["x"] == first["categoryarray"] and (kernel["xaxis"], kernel["yaxis"]) == (
        "x",
        "y",
    )
    assert (fig["data"][2]["xaxis"], fig["data"][2]["yaxis"]) == ("x2", "y2")
    assert kernel["y"][:2] == pytest.approx([BUSY_6, BUSY_5])
    assert scheduler["y"][1] == pytest.approx(BUSY_5 / 4)
    assert kernel["customdata"] == [0, 100, 200, 300, 400]


def test_panels_share_one_y_range_and_one_legend_and_do_not_overlap():
    fig = kernel_time_figure(KernelTimeChart(volume()))
    layout = fig["layout"]
    ranges = [layout[k]["range"] for k in layout if k.startswith("yaxis")]
    assert len(ranges) == 8 and all(r == ranges[0] for r in ranges)
    assert ranges[0] == [0, pytest.approx(BUSY_5 * 1.08)]
    domains = [layout["yaxis" + ("" if i == 1 else str(i))]["domain"] for i in range(1, 9)]
    for upper, lower in zip(domains, domains[1:], strict=False):
        assert lower[1] < upper[0]  # top to bottom, a gap for the build labels
    assert [t["name"] for t in fig["data"] if t["showlegend"]] == ["in kernel", "in scheduler"]
    json.dumps(fig)


def test_bars_are_labelled_by_build_and_the_hover_names_the_whole_run():
    fig = kernel_time_figure(KernelTimeChart(volume()))
    labels = {x for trace in fig["data"] for x in trace["x"]}
    assert max(len(label) for label in labels) == len("2.5.25+pri_preempt")
    hover = fig["data"][4]["hovertext"][2]  # rooms=15, 2.5.25+pri_preempt
    assert hover.startswith("<b>2.5.25+pri_preempt</b> · messages=1000, rooms=15<br>")
    assert "run #202" in hover and "000-netfinity-7000-m10, SMP" in hover


def test_two_runs_of_one_build_in_a_panel_keep_their_own_bars():
    points = [
        KernelTimePoint(run(9, "2.5.59"), BUSY_6, 1.0),
        KernelTimePoint(run(12, "2.5.59"), BUSY_6, 2.0),
        KernelTimePoint(run(4, "2.4.20"), BUSY_5, 3.0),
    ]
    assert build_labels(points) == ["2.5.59 #9", "2.5.59 #12", "2.4.20"]
    assert len(by_setup(tuple(points))) == 1


def test_a_setup_without_parameters_is_named_by_its_hardware_and_mode():
    plain = RunInfo(50, "2.4-distro", (), hardware="002-A", mode="SMP")
    fig = kernel_time_figure(KernelTimeChart((KernelTimePoint(plain, BUSY_5, 30.0),)))
    assert fig["layout"]["annotations"][0]["text"] == "<b>002-A, SMP</b> · 1 run"


def test_against_a_parameter_draws_kernel_and_scheduler_lines_per_build():
    points = (
        KernelTimePoint(RunInfo(1, "2.3.28"), 62.0, 31.0, x=1200),
        KernelTimePoint(RunInfo(2, "2.3.28"), 60.0, 25.0, x=400),
        KernelTimePoint(RunInfo(3, "2.3.28", ("task",)), 58.0, 20.0, x=400),
    )
    fig = kernel_time_figure(KernelTimeChart(points, "threads"))
    names = [t["name"] for t in fig["data"]]
    assert names == [
        "2.3.28: kernel",
        "2.3.28: scheduler",
        "2.3.28+task: kernel",
        "2.3.28+task: scheduler",
    ]
    assert fig["data"][0]["x"] == [400, 1200] and fig["data"][0]["y"] == [60.0, 62.0]
    assert fig["data"][1]["line"]["dash"] == "dash"
    assert fig["layout"]["yaxis"]["title"]["text"] == "% of total time"


# --- top kernel functions: idle apart ----------------------------------------------------


def tables() -> tuple[KernelProfile, ...]:
    return (
        KernelProfile(run(50, "2.4-distro"), TABLE_5, TOTAL_5),
        KernelProfile(run(51, "2.5.59"), TABLE_6, TOTAL_6),
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
    profile = KernelProfile(run(1, kernel), ((function, 75.0), ("schedule", 25.0)), 100.0)
    assert idle_share(profile) == 75.0
    assert shares(profile) == {"schedule": 100.0}


def test_a_wholly_idle_profile_draws_no_busy_bar():
    profile = KernelProfile(run(1, "2.5.59"), (("default_idle", 10.0),), 10.0)
    fig = top_functions_figure((profile,), top_n=2)
    assert [t["name"] for t in fig["data"]] == [OTHER, IDLE]
    assert fig["data"][0]["y"] == [0.0] and fig["data"][1]["y"] == [100.0]
