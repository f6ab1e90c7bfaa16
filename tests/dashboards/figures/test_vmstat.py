"""The activity chart (dashboards/figures/vmstat.py): a subplot per column group with each
run overlaid in its own colour, the since-boot first sample left out, a row that does not
match its header refused, and thinned rows that keep the file's sample numbers and a chart
that says it is thinned. No database."""

from __future__ import annotations

import pytest

from dashboards.figures import vmstat_figure
from dashboards.figures.vmstat import samples
from dashboards.pure.chartdata import RunInfo, VmstatRun
from tests.dashboards.figures.literals import run, trace_named

COLUMNS = ("r", "in", "cs", "us", "sy", "id")
# 002 Table 12 (policy PA), first two rows, with a since-boot row put in front.
SINCE_BOOT = (1, 100, 200, 5, 2, 93)
TABLE_12 = ((14, 6067, 27204, 63, 10, 27), (9, 5868, 29230, 60, 9, 31))
TABLE_13 = ((18, 7788, 6903, 85, 14, 0), (26, 7168, 6686, 84, 11, 6))


@pytest.mark.parametrize("since_boot", [True, False])
def test_vmstat_excludes_the_since_boot_sample(since_boot):
    rows = ((SINCE_BOOT, *TABLE_12)) if since_boot else TABLE_12
    fig = vmstat_figure((VmstatRun(run(1), COLUMNS, rows, first_is_since_boot=since_boot),))
    cs = trace_named(fig, "cs: 2.5.59 #1")
    assert cs["x"] == [1, 2]
    assert cs["y"] == [row[2] for row in TABLE_12]
    x_title = fig["layout"]["xaxis3"]["title"]["text"]  # the bottom subplot's axis
    assert ("since boot" in x_title) == since_boot


def test_vmstat_overlays_runs_in_subplots_per_group():
    runs = (
        VmstatRun(run(1, patches=("PA",)), COLUMNS, TABLE_12, first_is_since_boot=False),
        VmstatRun(run(2, patches=("PC",)), COLUMNS, TABLE_13, first_is_since_boot=False),
    )
    fig = vmstat_figure(runs)
    assert len(fig["data"]) == 2 * len(COLUMNS)
    by_axis: dict[str, set[str]] = {}
    for trace in fig["data"]:
        by_axis.setdefault(trace["yaxis"], set()).add(trace["name"].split(":")[0])
    assert sorted(map(sorted, by_axis.values())) == [["cs", "in"], ["id", "sy", "us"], ["r"]]
    pa, pc = trace_named(fig, "r: 2.5.59+PA #1"), trace_named(fig, "r: 2.5.59+PC #2")
    assert pa["line"]["color"] != pc["line"]["color"]
    assert pc["y"] == [row[0] for row in TABLE_13]


def test_vmstat_rejects_a_row_that_does_not_match_the_header():
    with pytest.raises(ValueError, match="header"):
        vmstat_figure((VmstatRun(run(1), COLUMNS, ((1, 2),), first_is_since_boot=False),))


# --- thinned: a long series drawn every n-th sample ------------------------------------------


def thinned(first_is_since_boot: bool) -> VmstatRun:
    return VmstatRun(
        run=RunInfo(run_id=7, kernel="2.5.59"),
        columns=("r", "cs"),
        rows=((9.0, 9000.0), (3.0, 500.0), (4.0, 600.0)),
        first_is_since_boot=first_is_since_boot,
        stride=5,
    )


def test_thinned_rows_keep_the_file_sample_numbers():
    assert [n for n, _, _ in samples(thinned(True))] == [5, 10]
    assert [n for n, _, _ in samples(thinned(False))] == [1, 6, 11]


def test_the_chart_says_it_is_thinned():
    figure = vmstat_figure((thinned(True),), groups=("procs",))
    titles = [
        v.get("title", {}).get("text", "")
        for k, v in figure["layout"].items()
        if k.startswith("xaxis")
    ]
    assert any("every 5th sample" in t for t in titles)
