"""mmtests compare-kernels tables: real mails from lkml (sources in the fixtures' README.md).

The line grammar and how a header names its columns are tested in test_mmtests_lines.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, Record, Summary, recognisers

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
MMTESTS = FIXTURES / "mmtests"


def _parse(name: str):
    return get_parser("mmtests")((MMTESTS / name).read_text(), {})


def _record(result, **keys: str) -> Record:
    found = [r for r in result.records if all(r.keys.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, (keys, [r.keys for r in found])
    return found[0]


def _values(record: Record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def test_a_report_reads_each_kernel_parameter_and_monitor_block():
    result = _parse("lkml-2022-pan-hackbench-tbench.txt")
    base = _record(result, table="hackbench-process-pipes", label="hackbench-default", param="256")
    assert _values(base) == {
        "min": 23.5510,
        "amean": 24.4604,
        "stddev": 0.4420,
        "coeffvar": 1.8072,
        "max": 25.4930,
        "bamean-50": 24.1074,
        "bamean-95": 24.4111,
        "bamean-99": 24.4499,
    }
    assert base.line == 10
    pan = _record(result, table="hackbench-process-pipes", label="hackbench-pan", param="256")
    amean = next(m for m in pan.measurements if m.metric == "amean")
    assert (amean.value, amean.better, amean.unit) == (24.0353, "lower", "")
    assert amean.summary == Summary(sd=0.7611, sd_pct=3.1666)
    assert all(m.summary is None for m in pan.measurements if m.metric != "amean")
    assert {m.metric: m.better for m in pan.measurements}["max"] == "none"
    duration = _record(
        result, table="hackbench-process-pipes", label="hackbench-pan", section="duration"
    )
    assert _values(duration) == {"user": 25158.93, "system": 271729.32, "elapsed": 2671.33}
    assert {m.unit for m in duration.measurements} == {"s"}
    ops = _record(result, table="hackbench-process-pipes", label="hackbench-default", section="ops")
    assert _values(ops)["numa alloc hit"] == 1082415453.0
    assert _values(ops)["numa hint local faults %"] == 15371.0
    assert _values(ops)["autonuma cost"] == 79.03
    tbench = _record(result, table="tbench4", label="tbench-pan", param="64")
    assert _values(tbench) == {"hmean": 12160.51, "bhmean-50": 12202.07}
    assert {m.metric: m.better for m in tbench.measurements} == {
        "hmean": "higher",
        "bhmean-50": "higher",
    }
    assert _values(
        _record(result, table="tbench4", label="tbench-default", section="duration")
    ) == {
        "user": 8482.50,
        "system": 49462.63,
        "elapsed": 2217.10,
    }
    assert len(result.records) == 2 + 2 + 2 + 20 + 2
    assert result.metadata == {"workloads": "hackbench-process-pipes, tbench4"}
    assert result.warnings == ()


def test_eight_kernels_and_tables_with_the_same_labels_stay_apart():
    result = _parse("lkml-2020-uclamp-netperf-8-kernels.txt")
    first = [
        r for r in result.records if r.keys["param"] == "send-64" and r.keys["table"] == "[...]"
    ]
    # nouclam over nouclamp: a name without a dash, printed less its last letter over itself.
    assert [r.keys["label"] for r in first] == [
        "nouclamp",
        "nouclamp-recompile",
        "uclamp",
        "uclamp2",
        "uclamp.disabled",
        "uclamp-opt",
        "uclamp-opt2",
        "uclamp-opt.disabled",
    ]
    assert [_values(r)["hmean"] for r in first] == [
        158.07,
        156.99,
        163.83,
        160.97,
        163.93,
        159.62,
        161.79,
        161.14,
    ]
    drop = "If I switch to 5.6, I can see a drop (performed each run twice)"
    assert _values(_record(result, table=drop, label="uclamp2", param="send-16384")) == {
        "hmean": 26609.64
    }
    patched = "If I apply the 2 patches from my previous email, with uclamp enabled I see"
    assert _values(_record(result, table=patched, label="uclamp-opt2", param="send-8192")) == {
        "hmean": 15792.10
    }
    assert len(result.records) == 9 * 8 + 9 * 4 + 9 * 4


def test_tables_without_a_header_are_labelled_by_position_with_a_warning():
    result = _parse("lkml-2022-sis-filter-no-header.txt")
    assert _values(
        _record(result, table="a) hackbench-process-pipes", label="column-2", param="296")
    ) == {"amean": 23.8967}
    assert _values(
        _record(result, table="e) netperf-udp", label="column-1", param="recv-3312")
    ) == {"hmean": 8941.40}
    assert _values(
        _record(result, table="g) tbench4 Throughput", label="column-2", param="384")
    ) == {"hmean": 17396.64}
    assert [w.split(":")[0] for w in result.warnings] == ["line 8", "line 26", "line 47"]
    assert result.metadata == {"workloads": "hackbench-process-pipes, netperf-udp, tbench4"}


def test_rows_and_headers_a_mail_client_wrapped_are_joined():
    result = _parse("lkml-2023-usemem-wrapped-rows.txt")
    labels = ["6.4.0-rc2", "6.4.0-rc2-compactfix", "6.4.0-rc2-revert"]
    assert [_values(_record(result, label=k, param="elsp-4"))["amean"] for k in labels] == [
        79.48,
        66.60,
        66.37,
    ]
    assert [_values(_record(result, label=k, section="ops"))["minor faults"] for k in labels] == [
        2440289187.0,
        2356626072.0,
        2354663705.0,
    ]
    assert (
        _values(_record(result, label="6.4.0-rc2-revert", section="ops"))["autonuma cost"]
        == 731900.38
    )
    assert _values(_record(result, label="6.4.0-rc2-revert", section="duration"))["elapsed"] == (
        2529.83
    )
    assert "table" not in result.records[0].keys  # one table (and its blocks): no table key
    assert result.metadata == {"workload": "usemem", "hardware": "256 cpu two node milan"}


def test_older_releases_statistics():
    stutter = _parse("lkml-2016-stutter-old-format.txt")
    patched = _values(_record(stutter, label="4.7.0-rc3-nodelru-v7r17", param="mmap"))
    assert patched["max-90%"] == 59.8759
    assert patched["max"] == 135.6006
    assert patched["mean"] == 58.4884
    assert len(patched) == 10
    sparse = _parse("lkml-2017-sparsetruncate-best-amean.txt")
    base = _record(sparse, label="4.14.0-rc4-batchshadow-v1r1", param="Time")
    assert _values(base)["best99%amean"] == 144.29
    amean = next(m for m in base.measurements if m.metric == "amean")
    assert amean.summary == Summary(sd=12.74, sd_pct=8.78)
    assert {m.metric: m.better for m in base.measurements}["best95%amean"] == "lower"


def test_a_summary_only_where_the_table_prints_a_spread():
    result = _parse("lkml-2025-dbench4-throughput-and-time.txt")
    time = "dbench4 Loadfile Execution Time"
    with_sd = _record(result, table=time, label="6.18-rc1-sched-preemptnext-v2", param="7")
    amean = next(m for m in with_sd.measurements if m.metric == "amean")
    assert (amean.value, amean.summary) == (23.82, Summary(sd=1.84))
    without = _record(result, table=time, label="6.18-rc1-vanilla", param="160")
    assert [(m.metric, m.value, m.summary) for m in without.measurements] == [
        ("amean", 401.15, None)
    ]
    tput = _record(
        result,
        table="dbench4 Throughput (misleading but traditional)",
        label="6.18-rc1-sched-preemptnext-v2",
        param="110",
    )
    assert _values(tput) == {"hmean": 12114.01}
    wakeup = _record(
        result,
        table="schbench Wakeup Latency (usec)",
        label="6.18.0-rc1-sched-preemptnext-v2r1",
        param="Wakeup-99.9th-80",
    )
    assert _values(wakeup) == {"amean": 339.78}
    assert result.metadata == {"workloads": "dbench4, schbench"}
    highpcp = _parse("lkml-2022-highpcp-cascadelake.txt")
    assert highpcp.metadata == {"hardware": "2-socket CascadeLake"}
    assert _values(_record(highpcp, label="5.17.0-rc3-mm-highpcpopt-v2", param="elapsed")) == {
        "min": 500.0,
        "amean": 510.0,
        "stddev": 11.55,
    }


PAN = (MMTESTS / "lkml-2022-pan-hackbench-tbench.txt").read_text()


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        # a row whose last cell lost its closing mark
        (PAN.replace("24.0353 *   1.74%*", "24.0353 *   1.74"), 11, "row cannot be read"),
        # a row with a third kernel's cell where the first row has two
        (
            PAN.replace("0.7611 ( -72.18%)", "0.7611 ( -72.18%)      0.5000 (   1.00%)"),
            12,
            "3 kernels' values",
        ),
        (PAN.replace("Max       256", "Min       256"), 14, "appears twice"),
        (PAN.replace("Ops NUMA PMD updates", "Ops NUMA alloc miss"), 33, "appears twice"),
    ],
)
def test_rows_that_cannot_be_read_are_refused_naming_the_line(text, line, message):
    with pytest.raises(ParseError) as error:
        get_parser("mmtests")(text, {})
    assert error.value.line == line
    assert message in error.value.message


def test_text_without_a_table_is_refused_saying_what_was_expected():
    with pytest.raises(ParseError, match="no mmtests comparison table: expected rows such as"):
        get_parser("mmtests")("Hmean went up by 3% on send-64 (see the link)\n", {})


def test_the_recogniser_knows_a_table_and_nothing_else():
    recognise = recognisers()["mmtests"]
    for path in MMTESTS.glob("*.txt"):
        assert recognise(path.read_text()), path.name
    for other in (
        "hackbench/lkml-old-hackbench-10-runs.txt",
        "lkp/sockperf-netperf-2025-two-tests.txt",
        "tiobench/tiobench-0.3.3-full.txt",
    ):
        assert not recognise((FIXTURES / other).read_text()), other
