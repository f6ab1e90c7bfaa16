"""The kernel-time chart (dashboards/figures/kernel_time.py): a panel per setup in
parameter order with its runs in kernel order, one y range and one legend for every panel,
bars labelled by build (two runs of a build kept apart) with the whole run in the hover, and
kernel and scheduler lines per build when drawn against a parameter. No database."""

from __future__ import annotations

import json

import pytest

from dashboards.figures import kernel_time_figure
from dashboards.figures.kernel_time import build_labels, by_setup
from dashboards.pure.chartdata import KernelTimeChart, KernelTimePoint, RunInfo
from tests.dashboards.figures.literals import TOTAL_5, TOTAL_6, room_run

# What kernel_time_points makes of 002's Tables 5 and 6 (literals.py): the non-idle share,
# and schedule's share of it.
BUSY_5 = (TOTAL_5 - 7071) / TOTAL_5 * 100  # 70.50 %
BUSY_6 = (TOTAL_6 - 54048) / TOTAL_6 * 100  # 10.42 %
BUILDS = (
    ("2.4.20", ()),
    ("2.5.25", ()),
    ("2.5.25", ("pri_preempt",)),
    ("2.5.59", ()),
    ("2.6.0", ()),
)


def volume() -> tuple[KernelTimePoint, ...]:
    """8 setups (room counts) of 5 builds each, in kernel order as the selector gives them:
    40 bar pairs that had shared one axis."""
    points = []
    for k, (kernel, patches) in enumerate(BUILDS):
        for s, rooms in enumerate((5, 10, 15, 20, 25, 30, 40, 50)):
            busy = BUSY_5 if k % 2 else BUSY_6
            points.append(
                KernelTimePoint(room_run(100 * k + s, kernel, patches, rooms), busy, busy / 4)
            )
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
        KernelTimePoint(room_run(9, "2.5.59"), BUSY_6, 1.0),
        KernelTimePoint(room_run(12, "2.5.59"), BUSY_6, 2.0),
        KernelTimePoint(room_run(4, "2.4.20"), BUSY_5, 3.0),
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
