"""The plain data the figure builders' tests draw (helpers, not tests): a run, a metric, a
series across kernels in an order strings would get wrong, and text that is HTML; and the
readprofile listings the kernel-time page's two figures are tested with. Values are made up
for the tests unless a paper's table is named."""

from __future__ import annotations

from dashboards.pure.chartdata import Metric, Point, RunInfo, Series

HOSTILE = "<script>alert(1)</script>&"
THROUGHPUT = Metric("VolanoMark throughput", "msg/s", higher_is_better=True)
LATENCY = Metric("pipe latency", "µs", higher_is_better=False)
# Deliberately not alphabetical: "2.4.20" < "2.3.99-pre3" as strings, not as kernels.
KERNELS = ("2.2.12-20", "2.3.28", "2.3.99-pre3", "2.4.20", "2.4-distro", "2.5.59")


def run(run_id: int, kernel: str = "2.5.59", patches: tuple[str, ...] = (), **kw) -> RunInfo:
    return RunInfo(run_id, kernel, patches, hardware="Configuration C", mode="SMP", **kw)


def series_points() -> tuple[Point, ...]:
    """Stock on every kernel, two patch sets on some; values made up for the test."""
    points = [Point(run(i, k), 1000.0 + 10 * i, sd=float(i)) for i, k in enumerate(KERNELS)]
    points.append(Point(run(20, "2.3.28", ("task",)), 1100.0, sd=5.0))
    points.append(Point(run(21, "2.2.12-20", ("task",)), 1050.0, sd=4.0))
    points.append(Point(run(22, "2.3.28", ("task", "sched")), 900.0, sd=None))
    # Input order shuffled: the builder must place points by the kernel order, not by input.
    return tuple(reversed(points))


def series(points: tuple[Point, ...] | None = None, title: str = "") -> Series:
    return Series(THROUGHPUT, KERNELS, series_points() if points is None else points, title)


def trace_named(fig: dict, name: str) -> dict:
    matches = [t for t in fig["data"] if t.get("name") == name]
    assert len(matches) == 1, [t.get("name") for t in fig["data"]]
    return matches[0]


# --- the kernel-time page: time in the kernel, and the top kernel functions ----------------

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


def room_run(run_id: int, kernel: str, patches: tuple[str, ...] = (), rooms: int = 10) -> RunInfo:
    """A VolanoMark run of ``rooms`` rooms, as the kernel-time page groups them by setup."""
    params = (("messages", "1000"), ("rooms", str(rooms)))
    return RunInfo(
        run_id, kernel, patches, hardware="000-netfinity-7000-m10", mode="SMP", params=params
    )
