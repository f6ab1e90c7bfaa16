"""The activity chart (dashboards/figures/vmstat.py): thinned rows keep the file's sample
numbers, and the chart says it is thinned."""

from dashboards.figures import vmstat_figure
from dashboards.figures.vmstat import samples
from dashboards.pure.chartdata import RunInfo, VmstatRun


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
