"""The kernel test robot's report mails, read from real mails (tests/fixtures/formats/lkp/)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, Summary, group_records, recognisers

LKP = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "lkp"


def _parse(name: str):
    return get_parser("lkp")((LKP / name).read_text(), {})


def _value(result, label: str, metric: str, **keys):
    """The one measurement of ``metric`` (the name as the mail prints it) in the record of
    ``label`` (and keys)."""
    stored = {v: k[len("metric_name:") :] for k, v in result.metadata.items()}
    metric = stored.get(metric, metric)
    found = [
        m
        for r in result.records
        if r.keys["label"] == label and all(r.keys.get(k) == v for k, v in keys.items())
        for m in r.measurements
        if m.metric == metric
    ]
    assert len(found) == 1, found
    return found[0]


def test_a_2025_report_reads_every_row_as_printed():
    result = _parse("stress-ng-pipeherd-2025-improvement.txt")
    base, new = result.records
    assert base.keys == {
        "label": "f2ffc48de2017c69",
        "compiler": "gcc-12",
        "cpufreq_governor": "performance",
        "kconfig": "x86_64-rhel-9.4",
        "nr_threads": "100%",
        "rootfs": "debian-12-x86_64-20240206.cgz",
        "tbox_group": "lkp-icl-2sp7",
        "test": "pipeherd",
        "testcase": "stress-ng",
        "testtime": "60s",
    }
    assert new.keys["label"] == "ee5eda8ea59546af2e8f192c060"
    assert len(base.measurements) == len(new.measurements) == 39
    ops = _value(result, "ee5eda8ea59546af2e8f192c060", "stress-ng.pipeherd.ops")
    assert (ops.value, ops.summary, ops.resolution) == (2.937e09, Summary(sd_pct=10), 1e6)
    wait = _value(
        result,
        "f2ffc48de2017c69",
        "perf-sched.wait_time.max.ms.__cond_resched.__mutex_lock.constprop.0.anon_pipe_read",
    )
    assert (wait.value, wait.unit, wait.summary) == (0.20, "ms", Summary(sd_pct=153))
    # No "±" printed: the spread was 2% or less, and nothing is made up for it.
    procs = _value(result, "f2ffc48de2017c69", "vmstat.procs.r")
    assert (procs.value, procs.summary, procs.resolution) == (3930, None, 1)
    rate = _value(result, "ee5eda8ea59546af2e8f192c060", "perf-stat.i.branch-miss-rate%")
    assert (rate.value, rate.unit) == (0.41, "%")
    # The headline: a 26.0% improvement of a metric that rose: higher is better.
    headline = _value(result, "f2ffc48de2017c69", "stress-ng.pipeherd.ops_per_sec")
    assert (headline.value, headline.better) == (38728105, "higher")
    assert _value(result, "f2ffc48de2017c69", "stress-ng.pipeherd.ops").better == "none"
    meta = result.metadata
    assert meta["workload"] == "stress-ng"
    assert meta["hardware"] == "lkp-icl-2sp7"
    assert meta["commit"] == "ee5eda8ea59546af2e8f192c060fbf29862d7cbd"
    assert meta["base_commit"] == "f2ffc48de2017c69"
    assert meta["tree"] == "https://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git master"
    assert meta["commit_subject:f2ffc48de2017c69"] == (
        'Merge patch series "pipe: don\'t update {a,c,m}time for anonymous pipes"'
    )
    # Changes are derived, so they are metadata: percent or, for % metrics, the difference.
    assert meta["change_pct:stress-ng.pipeherd.ops_per_sec"] == 26.0
    assert (
        meta[
            "change_pct:perf-sched.wait_time.max.ms.__cond_resched.__mutex_lock."
            "constprop.0.anon_pipe_read"
        ]
        == 2.1e05
    )
    assert meta["change:perf-stat.i.branch-miss-rate%"] == -0.1


def test_a_long_call_chain_is_stored_as_printed():
    result = _parse("stress-ng-pipeherd-2025-improvement.txt")
    printed = (
        "perf-profile.calltrace.cycles-pp.record__mmap_read_evlist.__cmd_record.cmd_record."
        "run_builtin.handle_internal_command"
    )
    assert _value(result, "f2ffc48de2017c69", printed).value == 3.32
    assert not any(k.startswith("metric_name:") for k in result.metadata)


def test_a_name_too_long_to_store_keeps_its_head_and_a_hash():
    """A chain longer than a metric name holds (300): the real mail with one of its chains
    made 320 characters long (a test input; the values are the mail's)."""
    printed = (
        "perf-profile.calltrace.cycles-pp.record__mmap_read_evlist.__cmd_record.cmd_record."
        "run_builtin.handle_internal_command"
    )
    longer = printed + ".x" * ((320 - len(printed)) // 2)
    text = (LKP / "stress-ng-pipeherd-2025-improvement.txt").read_text()
    result = get_parser("lkp")(text.replace(printed, longer), {})
    (short,) = [k for k, v in result.metadata.items() if v == longer]
    stored = short[len("metric_name:") :]
    assert len(stored) == 300 and stored.startswith(longer[:291] + "~")
    assert _value(result, "f2ffc48de2017c69", stored).value == 3.32
    assert all(len(m.metric) <= 300 for r in result.records for m in r.measurements)
    assert "longer than the 300 characters stored" in result.warnings[0]


def test_an_unsigned_regression_headline_takes_its_direction_from_the_row():
    result = _parse("will-it-scale-poll2-2025-regression.txt")
    ops = _value(result, "89359897983825dbfc08578e7ee", "will-it-scale.per_process_ops")
    assert (ops.value, ops.better) == (232411, "higher")
    shmem = _value(result, "d000e073ca2a08ab", "numa-meminfo.node0.Shmem")
    assert (shmem.value, shmem.summary) == (21281, Summary(sd_pct=147))
    mpki = _value(result, "89359897983825dbfc08578e7ee", "perf-stat.overall.MPKI")
    assert (mpki.value, mpki.summary) == (0.0, None)
    assert _value(result, "d000e073ca2a08ab", "perf-stat.i.instructions").value == 2.9e11
    meta = result.metadata
    assert meta["test failed on linux-next/master"] == "5ffa57f6eecefababb8cbe327222ef171943b183"
    assert meta["test faield on linus/master"] == "b46c89c08f4146e7987fc355941a93b12e2c03ef"
    assert meta["headline"] == "11.7% regression of will-it-scale.per_process_ops"
    assert meta["test_machine"] == "104 threads 2 sockets (Skylake) with 192G memory"


def test_a_second_comparison_is_its_own_records_with_its_own_parameters():
    result = _parse("sockperf-netperf-2025-two-tests.txt")
    assert [(r.keys["label"], r.keys["testcase"]) for r in result.records] == [
        ("844c9db7f7f5fe1b", "sockperf"),
        ("5628f3fe3b16114e8424bbfcf05", "sockperf"),
        ("844c9db7f7f5fe1b", "netperf"),
        ("5628f3fe3b16114e8424bbfcf05", "netperf"),
    ]
    assert result.records[2].keys["nr_threads"] == 1
    assert len(group_records(result.records)) == 4
    udp = _value(result, "5628f3fe3b16114e8424bbfcf05", "sockperf.throughput.UDP.msg_per_sec")
    assert (udp.value, udp.better) == (535658, "higher")
    # The impact table names netperf.Throughput_Mbps as a 6.0% regression: it fell.
    mbps = _value(result, "844c9db7f7f5fe1b", "netperf.Throughput_Mbps", testcase="netperf")
    assert (mbps.value, mbps.better) == (97384, "higher")
    ttwu = _value(
        result,
        "844c9db7f7f5fe1b",
        "perf-profile.calltrace.cycles-pp.ttwu_queue_wakelist.try_to_wake_up."
        "autoremove_wake_function.__wake_up_common.__wake_up_sync_key",
    )
    assert (ttwu.value, ttwu.unit, ttwu.summary) == (0.17, "%", Summary(sd_pct=141))
    meta = result.metadata
    assert meta["change_pct:turbostat.IRQ"] == -16.0
    assert meta["change_pct@2.2:netperf.Throughput_Mbps"] == -6.0
    assert meta["still regression on linus/master"] == "cb015814f8b6eebcbb8e46e111d108892c5e6821"


def test_fail_runs_rows_keep_failures_and_runs_as_stated():
    result = _parse("ltp-hugemmap10-2024-fail-runs.txt")
    base, new = result.records
    assert base.keys == {"label": "9acad7ba3e25d11f"}  # the table names no parameters
    assert [(m.metric, m.value, m.unit, m.better) for m in base.measurements] == [
        ("ltp.hugemmap10.fail.failed_runs", 0, "runs", "lower"),
        ("ltp.hugemmap10.fail.runs", 6, "runs", "none"),
    ]
    assert [m.value for m in new.measurements] == [6, 6]
    assert result.metadata["reproduction_pct:ltp.hugemmap10.fail"] == 100.0
    assert result.metadata["workload"] == "ltp"
    assert result.metadata["parameter:test"] == "hugetlb/hugemmap10"
    assert result.metadata["commit"] == "7c43a553792a1701affeef20959dfb2ccb26dcee"


def test_a_reply_with_wrapped_rows_and_a_quoted_report():
    result = _parse("reaim-2020-reply-wrapped-three-commits.txt")
    labels = [r.keys["label"] for r in result.records]
    assert labels == [
        "9f68395333ad7f5b",
        "070f5e860ee2bf588c99ef7b4c2",
        "v5.7",
        "9f68395333ad7f5b",
        "070f5e860ee2bf588c99ef7b4c2",
    ]
    first = result.records[0]
    assert first.keys["debug-setup"] == "test" and first.keys["ucode"] == "0x21"
    # "2.01 ± \n2%  reaim.std_dev_percent": the spread wrapped onto the next line.
    spread = _value(result, "v5.7", "reaim.std_dev_percent")
    assert (spread.value, spread.summary) == (2.01, Summary(sd_pct=2))
    assert _value(result, "v5.7", "reaim.workload").value == 50000
    assert [m.metric for m in result.records[2].measurements][:2] == [
        "reaim.child_systime",
        "reaim.child_utime",
    ]
    # The quoted original: failures first, then means in the same table.
    quoted = result.records[3]
    assert quoted.keys["testcase"] == "reaim" and "debug-setup" not in quoted.keys
    assert [(m.metric, m.value) for m in quoted.measurements[:4]] == [
        ("perf-profile.children.cycles-pp.error_entry.failed_runs", 4),
        ("perf-profile.children.cycles-pp.error_entry.runs", 4),
        ("perf-profile.self.cycles-pp.error_entry.failed_runs", 3),
        ("perf-profile.self.cycles-pp.error_entry.runs", 4),
    ]
    negative = [
        m.value
        for m in result.records[4].measurements
        if m.metric == "sched_debug.cpu.nr_uninterruptible.min"
    ]
    assert negative == [-15.17]
    # "a -10.5% regression of reaim.jobs_per_min", in the quoted mail: higher is better.
    assert _value(result, "v5.7", "reaim.jobs_per_min").better == "higher"
    meta = result.metadata
    assert meta["commit"] == "070f5e860ee2bf588c99ef7b4c202451faa48236"
    assert meta["workload"] == "reaim"
    assert meta["hardware"] == "lkp-ivb-d04"
    assert meta["change_pct@1.3:reaim.jobs_per_min"] == -7.6
    assert meta["reproduction_pct@2.2:perf-profile.children.cycles-pp.error_entry"] == -18.0


def test_a_quoted_old_greeting_report():
    result = _parse("vm-scalability-2020-quoted-greeting.txt")
    median = _value(result, "1567c3e3467cddeb019a7b53ec6", "vm-scalability.median")
    assert (median.value, median.better) == (177280, "higher")
    c3 = _value(result, "2a4b03ffc69f2ded", "cpuidle.C3.time")
    assert (c3.value, c3.summary) == (7.277e09, Summary(sd_pct=41))
    assert _value(result, "2a4b03ffc69f2ded", "sched_debug.cpu.nr_uninterruptible.min").value == (
        -36.17
    )
    assert result.metadata["test_machine"].startswith("144 threads Intel(R) Xeon(R) CPU E7-8890")
    assert result.metadata["parameter:size"] == "8T"
    assert result.metadata["change:mpstat.cpu.all.idle%"] == -5.4


def test_three_commits_without_a_headline():
    result = _parse("will-it-scale-poll2-2021-reply-three-commits.txt")
    assert [r.keys["label"] for r in result.records] == [
        "5f58da2befa58edf",
        "054aa8d439b9185d4f5eb9a9028",
        "242d36be3ad02063a1cf6df7802",
    ]
    fget = (
        "perf-profile.calltrace.cycles-pp.__fget_files.__fget_light.do_sys_poll."
        "__x64_sys_poll.do_syscall_64"
    )
    assert _value(result, "242d36be3ad02063a1cf6df7802", fget).value == 0.0
    assert _value(result, "054aa8d439b9185d4f5eb9a9028", fget).summary == Summary(sd_pct=2)
    assert all(m.better == "none" for r in result.records for m in r.measurements)
    assert result.metadata["change@1.3:" + fget] == -22.9
    assert result.metadata["commit_subject:242d36be3ad02063a1cf6df7802"] == "fixup-for-054aa8d439"


HEAD = """\
d000e073ca2a08ab 89359897983825dbfc08578e7ee
---------------- ---------------------------
         %stddev     %change         %stddev
             \\          |                \\
    263173           -11.7%     232411        will-it-scale.per_process_ops
"""


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("    263173           -11.7%\n", "cut short"),
        ("    263173           -11.7%     23x411        will-it-scale.workload\n", "23x411"),
        ("    abc           -11.7%     232411        will-it-scale.workload\n", "'abc'"),
        ("    263173 ±  x%     -11.7%     232411        will-it-scale.workload\n", "spread"),
        ("    263173    -11.7%   232411   -1.0%   232000   will-it-scale.workload\n", "too many"),
    ],
)
def test_a_row_that_cannot_be_read_is_refused_naming_its_line(row, message):
    with pytest.raises(ParseError, match=message) as error:
        get_parser("lkp")(HEAD + row + "\n", {})
    assert error.value.line == 6


def test_text_without_a_table_is_refused():
    with pytest.raises(ParseError, match="no LKP comparison table"):
        get_parser("lkp")("kernel test robot noticed a 5.0% regression of x.y on:\n", {})


def test_a_quoted_printable_mail_is_refused_with_what_to_do():
    mail = "Content-Transfer-Encoding: quoted-printable\n\n" + HEAD.replace(
        "232411        will", "232411 =C2=B1  3%  will"
    )
    with pytest.raises(ParseError, match="quoted-printable"):
        get_parser("lkp")(mail, {})


def test_the_recogniser_knows_a_report_and_nothing_else():
    recognise = recognisers()["lkp"]
    assert recognise((LKP / "will-it-scale-poll2-2025-regression.txt").read_text())
    assert recognise((LKP / "ltp-hugemmap10-2024-fail-runs.txt").read_text())
    assert not recognise("Time: 5.484\nRunning with 10*40 (== 400) tasks.\n")


def test_a_long_report_parses_in_milliseconds():
    text = (LKP / "stress-ng-pipeherd-2025-improvement.txt").read_text()
    head, _, rows = text.partition("             \\          |                \\  \n")
    table, _, tail = rows.partition("\n\n")
    many = "\n".join([table] * 5)  # 195 rows
    parse = get_parser("lkp")
    started = time.perf_counter()
    result = parse(f"{head}             \\          |                \\  \n{many}\n\n{tail}", {})
    assert time.perf_counter() - started < 0.05
    assert len(result.records[0].measurements) == 195
