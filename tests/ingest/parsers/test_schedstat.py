from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "schedstat"
parse = get_parser("schedstat")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def sample(result, column: str, index: int = 0) -> float:
    return next(s.value for s in result.samples if s.column == column and s.index == index)


@pytest.mark.parametrize(
    ("name", "column", "expected"),
    [
        # v15: yld_count, legacy, sched_count, sched_goidle, ttwu_count, ttwu_local, ...
        ("prometheus-procfs-fixture-proc-schedstat-v15.txt", "cpu1.ttwu_count", 10466382),
        ("prometheus-procfs-fixture-proc-schedstat-v15.txt", "cpu0.pcount", 4767485306),
        (
            "prometheus-procfs-fixture-proc-schedstat-v15.txt",
            "cpu0.domain0.lb_count_idle",
            212499247,
        ),
        ("prometheus-procfs-fixture-proc-schedstat-v15.txt", "cpu1.domain0.ttwu_move_balance", 0),
        # v14: the three yld_*_empty fields come first
        ("snap-plugin-schedstat-proc-schedstat14.txt", "cpu0.sched_count", 68408),
        ("snap-plugin-schedstat-proc-schedstat14.txt", "cpu0.domain0.lb_count_busy", 40),
        ("v12-2cpu.txt", "cpu0.yld_both_empty", 3),
        ("v12-2cpu.txt", "cpu1.run_delay", 2190021),
        ("v10-1cpu.txt", "cpu0.ttwu_count", 5 + 12 * 7),
        ("v10-1cpu.txt", "cpu0.pt_lost_newidle", 5 + 27 * 7),
    ],
)
def test_fields_by_version(name, column, expected):
    assert sample(parse(read(name), {}), column) == expected


def test_one_snapshot_totals_over_cpus():
    result = parse(read("prometheus-procfs-fixture-proc-schedstat-v15.txt"), {})
    assert values(result) == {
        "sched_yld_count": 498494191 + 518377256,
        "sched_count": 3533438552 + 4155211005,
        "sched_goidle": 2553969831 + 2778589869,
        "ttwu_count": 3853684107 + 10466382,
        "ttwu_local": 2465731542 + 2867629021,
    }
    assert {(m.unit, m.better) for m in result.measurements} == {("count", "none")}
    assert result.metadata == {"version": 15, "snapshots": 1, "cpus": 2}
    assert {s.source for s in result.samples} == {"schedstat"}


def test_v10_has_no_ttwu_local():
    assert "ttwu_local" not in values(parse(read("v10-1cpu.txt"), {}))


def test_two_snapshots_give_deltas():
    result = parse(read("v15-two-snapshots.txt"), {})
    assert values(result) == {
        "sched_yld_count": (125 + 90) - (120 + 80),
        "sched_count": (61000 + 50500) - (50000 + 42000),
        "sched_goidle": (24000 + 20000) - (20000 + 17000),
        "ttwu_count": (37500 + 33000) - (30000 + 26000),
        "ttwu_local": (22000 + 19000) - (18000 + 15000),
    }
    assert result.metadata["interval_jiffies"] == 2500
    assert sample(result, "cpu0.sched_count", 1) == 61000


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("v13-mm.txt", "version 13 is not supported (supported: 10, 11, 12, 14, 15, 16, 17", 1),
        ("v15-with-v14-cpu-line.txt", "cpu0 has 12 fields; version 15 has 9", 3),
        ("v15-backwards.txt", "sched_yld_count went backwards", 7),
        ("cpu0 1 2 3\n", "data before any 'version N' line", 1),
        ("hello\n", "no 'version N' line", None),
        ("version 15\ntimestamp 1\ncpu0 1 0 2 3 4 5 6 7 8,5\n", "decimal comma", 3),
        ("version 15\ntimestamp 1\n", "has no cpu lines", 1),
    ],
)
def test_rejects(text, fragment, line):
    if text.endswith(".txt"):
        text = read(text)
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


# Version 17 layout check. No real v17 dump was found and this machine has no /proc/schedstat,
# so this is NOT a sample: a line built in the test from the kernel's show_schedstat() printf
# order (kernel/sched/stats.c, v6.14+): name, cpumask, then 11 fields per idle type
# (busy, idle, newidle), then 12 tail fields. Field k holds the value k so each name is checked.
V17_DOMAIN = " ".join(str(k) for k in range(1, 46))
V17 = f"version 17\ntimestamp 4294\ncpu0 1 0 3 4 5 6 7 8 9\ndomain0 SMT 00000003 {V17_DOMAIN}\n"


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ("cpu0.domain0.lb_count_busy", 1),
        ("cpu0.domain0.lb_imbalance_load_busy", 4),
        ("cpu0.domain0.lb_imbalance_misfit_busy", 7),
        ("cpu0.domain0.lb_nobusyg_busy", 11),
        ("cpu0.domain0.lb_count_idle", 12),
        ("cpu0.domain0.lb_imbalance_util_newidle", 27),
        ("cpu0.domain0.alb_count", 34),
        ("cpu0.domain0.ttwu_move_balance", 45),
        ("cpu0.ttwu_count", 5),
    ],
)
def test_v17_layout(column, expected):
    assert sample(parse(V17, {}), column) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (V17.replace("domain0 SMT ", "domain0 "), "has no domain name before its cpumask"),
        (V17.replace(" 45\n", "\n"), "has 44 fields; version 17 has 45"),
        (V17.replace("version 17", "version 16"), "has 46 fields; version 16 has 36"),
    ],
)
def test_v17_rejects(text, fragment):
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == 4
