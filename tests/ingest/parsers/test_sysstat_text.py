"""ingest/parsers/sysstat_text.py: sar, mpstat and iostat text, values read by hand."""

from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser
from tests.ingest.parsers.records import record

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "sysstat"
LABEL = "Linux 6.18.44-fc-v657"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def column(rec, name):
    return next(c for c in rec.columns if c.column == name)


def averages(rec):
    return {m.metric: m.value for m in rec.measurements}


def test_sar_u_series_and_average():
    result = get_parser("sar")(read("sar-u.txt"), {})
    rec = record(result, label=LABEL, report="cpu", cpu="all")
    user = column(rec, "%user")
    assert user.values == (7.22, 11.46, 8.42)
    assert user.timestamps == ("15:34:56", "15:34:57", "15:34:58")
    assert user.source == "sar" and not user.first_is_since_boot
    assert averages(rec)["sar_idle_pct_avg"] == 14.97
    assert averages(rec)["sar_steal_pct_avg"] == 0.17
    assert {m.unit for m in rec.measurements} == {"%"}
    assert result.metadata["host"] == "vm" and result.metadata["cpus"] == 2


def test_sar_q_and_w():
    queue = record(get_parser("sar")(read("sar-q.txt"), {}), label=LABEL, report="queue")
    assert column(queue, "blocked").values == (2, 2, 0)
    assert averages(queue)["sar_ldavg_15_avg"] == 2.33
    task = record(get_parser("sar")(read("sar-w.txt"), {}), label=LABEL, report="task")
    assert column(task, "cswch/s").values == (9679, 6928, 9700)
    assert averages(task)["sar_cswch_per_s_avg"] == 8769
    assert next(m.unit for m in task.measurements if m.metric == "sar_cswch_per_s_avg") == "/s"


def test_sar_n_dev_one_record_per_interface():
    result = get_parser("sar")(read("sar-n-dev.txt"), {})
    assert sorted(dict(r.keys)["iface"] for r in result.records) == ["eth0", "ifb0", "ifb1", "lo"]
    eth0 = record(result, label=LABEL, report="dev", iface="eth0")
    assert column(eth0, "%ifutil").timestamps == ("15:34:56", "15:34:57")
    assert averages(eth0)["sar_rxkb_per_s_avg"] == 0.0


def test_sar_12_hour_clock_kept_as_printed():
    rec = record(get_parser("sar")(read("sar-q-en-us.txt"), {}), label=LABEL, report="queue")
    assert column(rec, "plist-sz").timestamps == ("03:34:56 PM", "03:34:57 PM")
    assert column(rec, "plist-sz").values == (175, 169)
    assert averages(rec)["sar_plist_sz_avg"] == 172


def test_mpstat_per_cpu():
    result = get_parser("mpstat")(read("mpstat-p-all.txt"), {})
    cpu1 = record(result, label=LABEL, report="cpu", cpu="1")
    assert column(cpu1, "%soft").values == (11.11, 8.0)
    assert averages(cpu1)["mpstat_idle_pct_avg"] == 10.05
    assert column(cpu1, "%usr").source == "mpstat"


def test_iostat_x_first_report_since_boot():
    result = get_parser("iostat")(read("iostat-x.txt"), {})
    vda = record(result, label=LABEL, report="device", device="vda")
    assert column(vda, "r/s").values == (159.38, 12063.0, 9584.0)
    assert column(vda, "r/s").first_is_since_boot
    assert column(vda, "%util").values == (1.79, 85.2, 63.6)
    cpu = record(result, label=LABEL, report="cpu")
    assert column(cpu, "%idle").values == (90.13, 11.52, 26.4)
    assert result.warnings == ()


def test_iostat_d_and_since_boot_only():
    vda = record(get_parser("iostat")(read("iostat-d.txt"), {}), label=LABEL, report="device",
                 device="vda")  # fmt: skip
    assert column(vda, "kB_dscd").values == (623340, 0)
    result = get_parser("iostat")(read("iostat-since-boot.txt"), {})
    assert any("since boot" in w for w in result.warnings)
    one = record(result, label=LABEL, report="device", device="vda")
    assert column(one, "tps").values == (292.43,) and column(one, "tps").first_is_since_boot


def test_iostat_2005_mail_two_invocations_are_two_trials():
    result = get_parser("iostat")(read("lkml-2005-zhang-iostat-k.txt"), {})
    devices = [r for r in result.records if dict(r.keys).get("device") == "sdj"]
    assert [column(r, "kB_wrtn").values for r in devices] == [(0,), (81640,)]
    assert [column(r, "%sys").values for r in result.records if r.keys["report"] == "cpu"] == [
        (6.63,),
        (6.48,),
    ]
    assert result.metadata["label"] == "Linux 2.6.11.12"


def test_iostat_excerpt_without_banner_is_not_flagged():
    result = get_parser("iostat")(read("lkml-2004-vansanden-iostat-c.txt"), {})
    cpu = record(result, report="cpu")
    assert column(cpu, "%iowait").values == (62.38, 87.0, 82.83, 88.12, 98.99, 96.04)
    assert not column(cpu, "%iowait").first_is_since_boot
    assert any("no iostat banner" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("parser", "name", "line"),
    [
        ("sar", "sar-u-de.txt", 4),
        ("iostat", "iostat-x-de.txt", 4),
        ("iostat", "lkml-2005-chmielewski-iostat-decimal-comma.txt", 4),
    ],
)
def test_decimal_comma_rejected(parser, name, line):
    with pytest.raises(ParseError, match="LC_ALL=C") as error:
        get_parser(parser)(read(name), {})
    assert error.value.line == line


def test_cut_row_rejected_naming_the_line():
    # derived from the real sar-n-dev.txt: the eth0 row of the first interval loses its last value
    lines = read("sar-n-dev.txt").split("\n")
    assert lines[6].split()[1] == "eth0"
    lines[6] = lines[6].rsplit(None, 1)[0]
    with pytest.raises(ParseError, match="7 values for 8 columns") as error:
        get_parser("sar")("\n".join(lines), {})
    assert error.value.line == 7
