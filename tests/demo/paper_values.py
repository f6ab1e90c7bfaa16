"""Every number the demo bundles must carry, typed by hand from the seed papers.

One entry per printed number. ``printed`` is the text as the source prints it (searched for in
the seed document by the tests), ``value`` what the bundle stores for it: the same number, or
for relative results "100 + printed %" against the named baseline ("Base1-3.8%" -> 96.2).

``run`` picks one run of the bundle: kernel (normalized), patches, hardware, and the params that
tell it apart. ``metric`` is the name the pipeline stores: a direct metric, a parser's
measurement, ``vmstat:<column>[<row>]`` for a vmstat cell (row 0-based) or
``profile:<function>:ticks|load`` for a readprofile row. Samples and profile rows have no
unit or direction of their own, so theirs are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Run:
    kernel: str
    patches: tuple[str, ...] = ()
    hardware: str = ""
    params: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class PaperValue:
    bundle: str
    run: Run
    metric: str
    value: float
    unit: str | None
    better: str | None
    source: str
    printed: str = field(default="")


B000 = "000-bryant-hartner-2000-volanomark"
B001V = "001-hartner-2002-volanomark-pri-preempt"
B001W = "001-hartner-2002-specweb99-pri-preempt"
B002T = "002-anand-2003-trade27"
B002S = "002-anand-2003-specjappserver"
B002Y = "002-anand-2003-trade3-yield"
B004 = "004-vianney-2003-lmbench"

DOCS = {
    "000": "000_a64023bbb8979797.txt",
    "001": "001_1ac808dab169a9b3.txt",
    "002": "002_d6e32f02f03fb9ff.txt",
    "004": "004_628aff93bab0cb88.txt",
}

PAPER_VALUES: list[PaperValue] = []


def _add(bundle, run, metric, value, unit, better, source, printed):
    PAPER_VALUES.append(PaperValue(bundle, run, metric, value, unit, better, source, printed))


# --- 000: Bryant & Hartner 2000, summary figures stated in the text --------------------------

_NF = "000-netfinity-7000-m10"
_K22 = Run("2.2.12-20", (), _NF)
_K23 = Run("2.3.28", (), _NF)
_K22T = Run("2.2.12-20", ("task",), _NF)
_K23T = Run("2.3.28", ("task",), _NF)
_K23TS = Run("2.3.28", ("task", "sched"), _NF)
_PCT_KERNEL = ("% of kernel time", "lower")
_GAIN = ("% vs same kernel stock", "higher")
_PTS = ("percentage points of total time vs 2.3.28", "higher")
_UNIT_000 = {  # metric -> (unit, better), as the 000 bundle declares them
    "throughput_drop_5_to_25_rooms_pct": ("% drop from 5 to 25 rooms", "lower"),
    "sched_kernel_time_share_pct_min": _PCT_KERNEL,
    "sched_kernel_time_share_pct_max": _PCT_KERNEL,
    "runqueue_length_mean": ("tasks", "none"),
    "runqueue_length_sd": ("tasks", "none"),
    "runqueue_length_max": ("tasks", "none"),
    "goodness_cycles_per_rq_element": ("cycles per run-queue element", "lower"),
    "goodness_dcu_lines_in": ("DCU lines per goodness calculation", "lower"),
    "throughput_gain_vs_stock_pct_mean": _GAIN,
    "throughput_gain_vs_stock_pct_min": _GAIN,
    "throughput_gain_vs_stock_pct_max": _GAIN,
    "sched_time_reduction_pts_mean": _PTS,
    "sched_time_reduction_pts_min": _PTS,
    "sched_time_reduction_pts_max": _PTS,
}
for run, metric, value, source, printed in [
    (_K22, "throughput_drop_5_to_25_rooms_pct", 19, "Figure 1", "19% for kernel 2.2.12-20"),
    (_K23, "throughput_drop_5_to_25_rooms_pct", 24, "Figure 1", "24% for kernel 2.3.28"),
    (_K22, "sched_kernel_time_share_pct_min", 30, "Figure 2", "between 30 and 50 percent"),
    (_K22, "sched_kernel_time_share_pct_max", 50, "Figure 2", "between 30 and 50 percent"),
    (_K23, "sched_kernel_time_share_pct_min", 37, "Figure 3", "between 37 and 55 percent"),
    (_K23, "sched_kernel_time_share_pct_max", 55, "Figure 3", "between 37 and 55 percent"),
    (_K23, "runqueue_length_mean", 32.2, "Figure 5", "average size is 32.2"),
    (_K23, "runqueue_length_sd", 19.8, "Figure 5", "standard deviation of 19.8"),
    (_K23, "runqueue_length_max", 414, "Figure 5", "maximum queue size observed was 414"),
    (_K22, "goodness_cycles_per_rq_element", 167, "Figure 6", "167 cycles"),
    (_K23, "goodness_cycles_per_rq_element", 179, "Figure 6", "179 cycles"),
    (_K22T, "goodness_cycles_per_rq_element", 108, "Figure 7", "108 cycles"),
    (_K23T, "goodness_cycles_per_rq_element", 115, "Figure 7", "115 cycles"),
    (_K22, "goodness_dcu_lines_in", 4, "Appendix", "DCU_LINES_IN was typically 4"),
    (_K22T, "goodness_dcu_lines_in", 1, "Appendix", "typically 1 per each calculation"),
    (_K23T, "throughput_gain_vs_stock_pct_mean", 7, "Figure 8", "an average of 7%"),
    (_K23T, "throughput_gain_vs_stock_pct_min", 4, "Figure 8", "ranged from 4 to 11%"),
    (_K23T, "throughput_gain_vs_stock_pct_max", 11, "Figure 8", "ranged from 4 to 11%"),
    (_K23TS, "sched_time_reduction_pts_mean", 14, "Figure 13", "average of 14%"),
    (_K23TS, "sched_time_reduction_pts_min", 11, "Figure 13", "between 11 and 17%"),
    (_K23TS, "sched_time_reduction_pts_max", 17, "Figure 13", "between 11 and 17%"),
]:
    _add(B000, run, metric, value, *_UNIT_000[metric], f"000 text, {source}", printed)


# --- 001: Hartner 2002, Tables 1-3 -------------------------------------------------------------

_V8 = "001-8way-p3-700"
# (table, server nice, client nice, threshold, msg/sec, calls to wake_up, % priority preemptions)
_001_ROWS = [
    (1, 0, 0, 0, 13183, "3.49", 28.4),
    (1, 0, -19, 0, 13881, "4.42", 86.6),
    (1, 0, 19, 0, 10553, "5.52", 10.5),
    (1, 19, 0, 0, 13508, "4.06", 82.9),
    (1, 19, -19, 0, 13669, "4.06", 83.0),
    (1, 19, 19, 0, 11694, "3.42", 21.5),
    (1, -19, 0, 0, 12107, "5.54", 10.7),
    (1, -19, -19, 0, 13109, "3.55", 28.7),
    (1, -19, 19, 0, 10516, "5.51", 10.4),
    (2, 0, 0, 40, 13605, "3.22", 0.0),
    (2, 0, -19, 40, 18740, "1.67", 0.0),
    (2, 0, 19, 40, 10716, "5.35", 0.0),
    (2, 19, 0, 40, 16548, "2.01", 0.0),
    (2, 19, -19, 40, 16885, "2.00", 0.0),
    (2, 19, 19, 40, 11889, "3.15", 0.0),
    (2, -19, 0, 40, 12254, "5.36", 0.0),
    (2, -19, -19, 40, 13574, "3.24", 0.0),
    (2, -19, 19, 40, 10649, "5.35", 0.0),
]


def _row_text(srv: int, cli: int, thr: int, msg: int, calls: str, pct: float) -> str:
    """The table row as the post prints it, e.g. '+19 -19 40 16885 2.00 M 0.0 %'."""
    nice = {0: "0", 19: "+19", -19: "-19"}
    default = " (default)" if thr == 0 and srv == 0 and cli == 0 else ""
    return f"{nice[srv]} {nice[cli]} {thr}{default} {msg} {calls} M {pct:.1f} %"


for table, srv, cli, thr, msg, calls, pct in _001_ROWS:
    run = Run(
        "2.5.25",
        ("pri_preempt_cntr",),
        _V8,
        (("server_nice", srv), ("client_nice", cli), ("preempt_threshold", thr)),
    )
    source = f"001 Table {table}"
    row = _row_text(srv, cli, thr, msg, calls, pct)
    _add(B001V, run, "throughput", msg, "msg/s", "higher", source, row)
    _add(B001V, run, "wakeup_calls", float(calls + "e6"), "calls", "none", source, row)
    _add(B001V, run, "priority_preemption_pct", pct, "%", "none", source, row)
_add(
    B001V,
    Run("2.5.25", ("pri_preempt_cntr",), _V8, (("preempt_threshold", 40),)),
    "throughput_gain_vs_threshold0_pct",
    5,
    "% vs preempt_threshold 0",
    "higher",
    "001 text after Table 2 (8-way)",
    "showed a 5% increase in throughput",
)

_W8 = "001-specweb99-8way-p3-900"
_W0 = Run("2.5.33", ("pri_preempt",), _W8, (("preempt_threshold", 0),))
_W40 = Run("2.5.33", ("pri_preempt",), _W8, (("preempt_threshold", 40),))
_CC = ("conforming_connections", "connections", "higher")
_add(B001W, _W0, *_CC[:1], 2906, *_CC[1:], "001 Table 3", "2906 baseline")
_add(B001W, _W40, *_CC[:1], 2990, *_CC[1:], "001 Table 3", "2990 2.9 %")
_add(
    B001W,
    _W40,
    "conforming_connections_gain_vs_threshold0_pct",
    2.9,
    "% vs preempt_threshold 0",
    "higher",
    "001 Table 3",
    "2990 2.9 %",
)


# --- 002: Anand et al. 2003, Tables 1-14 -------------------------------------------------------

_A, _B, _D = "002-A", "002-B", "002-D"
_REL1 = ("tops_rel_base1", "% of Base1", "higher")
_REL2 = ("tops_rel_base2", "% of Base2", "higher")
_REL7 = ("tops_rel_2420_stock", "% of 2.4.20-stock", "higher")
_REL89 = ("tops_rel_2566_stock", "% of 2.5.66-stock", "higher")
_PCT = "%"

# Table 1 (Trade 2.7, Configuration A): kernel, patches, stored TOPS, printed TOPS, %CPU on AS.
for kernel, patches, rel, printed, cpu in [
    ("2.4-distro", (), 100, "2.4-distro\tBase1\t87", 87),
    ("2.5.59", (), 85.6, "2.5.59\tBase1-14.4%\t66", 66),
    ("2.5.59", ("D7",), 102, "2.5.59+D7\tBase1+2%\t86", 86),
]:
    run = Run(kernel, patches, _A)
    _add(B002T, run, _REL1[0], rel, *_REL1[1:], "002 Table 1", printed)
    _add(B002T, run, "cpu_usage_pct", cpu, _PCT, "none", "002 Table 1", printed)

# Table 2 (SJAS): kernel, hardware, relative metric, stored, printed row, user, system, idle.
for kernel, hw, rel, value, printed, usr, sys_, idle in [
    ("2.4.20", _B, _REL1, 100, "2.4.20-stock\t4\tBase1\t68\t14\t17", 68, 14, 17),
    ("2.5.59", _B, _REL1, 96.2, "2.5.59\t4\tBase1-3.8%\t60\t10\t28", 60, 10, 28),
    ("2.5.66", _B, _REL1, 111.6, "2.5.66\t4\tBase1+11.6%\t70\t12\t16", 70, 12, 16),
    ("2.4.20", _D, _REL2, 100, "2.4.20-stock\t8\tBase2\t47\t10\t41", 47, 10, 41),
    ("2.5.59", _D, _REL2, 100, "2.5.59\t8\tBase2+0%\t36\t6\t56", 36, 6, 56),
    ("2.5.66", _D, _REL2, 124.0, "2.5.66\t8\tBase2+24.0%\t49\t9\t41", 49, 9, 41),
]:
    run = Run(kernel, (), hw)
    _add(B002S, run, rel[0], value, *rel[1:], "002 Table 2", printed)
    _add(B002S, run, "cpu_user_pct", usr, _PCT, "none", "002 Table 2", printed)
    _add(B002S, run, "cpu_system_pct", sys_, _PCT, "none", "002 Table 2", printed)
    _add(B002S, run, "cpu_idle_pct", idle, _PCT, "none", "002 Table 2", printed)

# Tables 7, 8, 9 (SJAS v1.14): kernel, patches, hardware, metric, stored, CPU usage, printed row.
for table, kernel, patches, hw, rel, value, cpu, printed in [
    (7, "2.4.20", (), _B, _REL7, 100, 82, "2.4.20-stock\t82%\tbaseline"),
    (7, "2.4.20", ("O(1)",), _B, _REL7, 89.4, 66, "2.4.20+O(1)\t66%\t-10.6%"),
    (7, "2.5.59", (), _B, _REL7, 96.2, 70, "2.5.59-stock\t70%\t-3.8%"),
    (7, "2.5.59", ("D7",), _B, _REL7, 100, 64, "2.5.59+D7\t64%\tno change"),
    (8, "2.5.66", (), _B, _REL89, 100, 82, "2.5.66-stock\t82%\tbaseline"),
    (8, "2.5.66", ("trytowakeup1",), _B, _REL89, 104.3, 83, "2.5.66+trytowakeup1\t83%\t+4.3%"),
    (8, "2.5.66", ("trytowakeup2",), _B, _REL89, 100, 89, "2.5.66+trytowakeup2\t89%\t+0%"),
    (8, "2.5.66", ("busiestqueue",), _B, _REL89, 95.7, 82, "2.5.66+busiestqueue\t82%\t-4.3%"),
    (9, "2.5.66", (), _D, _REL89, 100, 56, "2.5.66-stock\t56%\tbaseline"),
    (9, "2.5.66", ("trytowakeup1",), _D, _REL89, 104.4, 60, "2.5.66+trytowakeup1\t60%\t+4.4%"),
    (9, "2.5.66", ("trytowakeup2",), _D, _REL89, 103.0, 72, "2.5.66+trytowakeup2\t72%\t+3.0%"),
    (9, "2.5.66", ("busiestqueue",), _D, _REL89, 105.2, 65, "2.5.66+busiestqueue\t65%\t+5.2%"),
]:
    run = Run(kernel, patches, hw)
    source = f"002 Table {table}"
    _add(B002S, run, rel[0], value, *rel[1:], source, printed)
    _add(B002S, run, "cpu_usage_pct", cpu, _PCT, "none", source, printed)

# Tables 3, 4, 12, 13 (vmstat): bundle, run, source, columns, rows as printed.
_VMSTAT = [
    (
        B002T,
        Run("2.4-distro", (), _A),
        "002 Table 3",
        ("r", "cs", "us", "sy", "id"),
        [
            (8, 15689, 74, 18, 8),
            (12, 18844, 76, 18, 6),
            (10, 15778, 71, 21, 8),
            (11, 16114, 74, 20, 6),
            (11, 17629, 74, 17, 8),
        ],
    ),
    (
        B002T,
        Run("2.5.59", (), _A),
        "002 Table 4",
        ("r", "cs", "us", "sy", "id"),
        [
            (3, 12195, 41, 10, 49),
            (5, 12079, 41, 9, 50),
            (7, 17508, 49, 10, 42),
            (2, 12087, 41, 9, 50),
            (3, 11898, 44, 9, 47),
        ],
    ),
    (
        B002Y,
        Run("2.5.65", ("PA",), _D),
        "002 Table 12",
        ("r", "in", "cs", "us", "sy", "id"),
        [
            (14, 6067, 27204, 63, 10, 27),
            (9, 5868, 29230, 60, 9, 31),
            (12, 5337, 24765, 61, 8, 30),
            (10, 6021, 27753, 61, 9, 30),
            (5, 5947, 27496, 64, 10, 25),
        ],
    ),
    (
        B002Y,
        Run("2.5.65", (), _D),
        "002 Table 13",
        ("r", "in", "cs", "us", "sy", "id"),
        [
            (18, 7788, 6903, 85, 14, 0),
            (26, 7168, 6686, 84, 11, 6),
            (24, 8010, 6798, 87, 12, 1),
            (23, 8083, 6727, 87, 13, 0),
            (22, 7934, 6212, 87, 13, 1),
        ],
    ),
]
for bundle, run, source, columns, rows in _VMSTAT:
    for index, row in enumerate(rows):
        printed = "\t".join(str(cell) for cell in row)
        for column, cell in zip(columns, row, strict=True):
            _add(bundle, run, f"vmstat:{column}[{index}]", cell, None, None, source, printed)

# Tables 5, 6 (readprofile): ticks, function, normalized ticks (the load), as printed.
_PROFILES = [
    (
        Run("2.4-distro", (), _A),
        "002 Table 5",
        [
            ("23969", "Total", "0.02"),
            ("7071", "default_idle", "110.48"),
            ("2388", "schedule", "1.52"),
            ("822", "csum_partial_copy...", "3.31"),
            ("799", "send_sig_info", "4.54"),
            ("744", "save_i387", "1.29"),
            ("511", "tcp_v4_rcv", "0.31"),
        ],
    ),
    (
        Run("2.5.59", (), _A),
        "002 Table 6",
        [
            ("60332", "Total", "0.05"),
            ("54048", "default_idle", "844.50"),
            ("397", "schedule", "0.41"),
            ("365", "csum_partial_copy...", "1.47"),
            ("191", "tcp_sendmsg", "0.04"),
            ("181", "__kfree_skb", "0.60"),
            ("177", "load_balance", "0.19"),
        ],
    ),
]
for run, source, rows in _PROFILES:
    for ticks, function, load in rows:
        printed = f"{ticks}\t{function}\t{load}"
        if function == "Total":
            # readprofile's total row becomes the kernel_ticks measurement; its load is metadata.
            _add(B002T, run, "kernel_ticks", int(ticks), "ticks", "none", source, printed)
            continue
        _add(B002T, run, f"profile:{function}:ticks", int(ticks), None, None, source, printed)
        _add(B002T, run, f"profile:{function}:load", float(load), None, None, source, printed)

# Table 10 (schedule() callers, csv): call site as printed, metric, ticks.
_T10 = Run("2.4.20", (), _A)
for site, metric, ticks in [
    ("Total", "schedule_caller_ticks_total", 6826403),
    ("sys_sched_yield+11d", "schedule_caller_ticks_sys_sched_yield_11d", 2523245),
    ("cpu_idle+3e", "schedule_caller_ticks_cpu_idle_3e", 2236660),
    ("schedule_timeout+9d", "schedule_caller_ticks_schedule_timeout_9d", 1312369),
    ("schedule_timeout+184", "schedule_caller_ticks_schedule_timeout_184", 327747),
]:
    printed = f"{ticks}\tTotal" if site == "Total" else f"{ticks}\t<code>{site}</code>"
    _add(B002T, _T10, metric, ticks, "ticks", "none", "002 Table 10", printed)

# Table 11 (sys_sched_yield calls per CPU, csv): row name, metric stem, CPU 0..7 as printed.
_T11 = Run("2.4.20", (), _A)
for row, stem, counts in [
    ("Same", "same_prio", (145103, 157055, 163064, 156379, 162783, 161733, 167366, 177876)),
    ("Only", "only_task", (117653, 112196, 112387, 105653, 101420, 96053, 108830, 92293)),
    ("Higher", "higher_prio", (26, 34, 28, 29, 31, 25, 33, 36)),
    ("Lower", "lower_prio", (929, 937, 1000, 1073, 1036, 1016, 1156, 1132)),
    ("Total", "total", (263711, 270222, 276479, 263134, 265270, 258827, 277385, 271337)),
]:
    printed = "\t".join([row, *map(str, counts)])
    for cpu, count in enumerate(counts):
        metric = f"sched_yield_calls_{stem}_cpu{cpu}"
        _add(B002T, _T11, metric, count, "calls", "none", "002 Table 11", printed)

# Table 14 (Trade 3, Configuration D): patches, stored Pg/s, Usg, Effncy, printed row.
for patches, pages, usage, efficiency, printed in [
    ((), 100, 95, 100, "2.5.65\tPC\tBaseline\t95%\t100%"),
    (("PA",), 67.4, 75, 85, "2.5.65\tPA\t-32.6%\t75%\t85%"),
]:
    run = Run("2.5.65", patches, _D)
    _add(
        B002Y,
        run,
        "pages_rel_policy_pc",
        pages,
        "% of policy PC",
        "higher",
        "002 Table 14",
        printed,
    )
    _add(B002Y, run, "cpu_usage_pct", usage, _PCT, "none", "002 Table 14", printed)
    _add(B002Y, run, "efficiency_pct", efficiency, _PCT, "higher", "002 Table 14", printed)


# --- 004: Vianney 2003, LMBench 3.0 table (microseconds) ----------------------------------------

_LMBENCH = [
    ("Simple syscall", "lat_syscall_null", "0.69", "0.71", "0.69"),
    ("Simple read", "lat_syscall_read", "1.13", "1.36", "1.37"),
    ("Simple write", "lat_syscall_write", "1.01", "1.14", "1.18"),
    ("Simple stat", "lat_syscall_stat", "6.11", "8.35", "7.74"),
    ("Simple fstat", "lat_syscall_fstat", "1.31", "1.53", "1.70"),
    ("Simple open/close", "lat_syscall_open_close", "7.64", "10.55", "9.92"),
    ("Pipe latency", "lat_pipe", "9.88", "14.36", "13.46"),
    ("Process fork+exit", "lat_proc_fork", "469.67", "555.13", "586.03"),
    ("Process fork+execve", "lat_proc_exec", "1824.67", "1957.00", "2146.56"),
    ("Process fork+/bin/sh -c", "lat_proc_shell", "67206.67", "8859.67", "9175.00"),
    ("UDP latency using localhost", "lat_udp", "63.52", "50.40", "47.96"),
    ("TCP latency using localhost", "lat_tcp", "87.87", "64.90", "67.77"),
    ("RPC/udp latency using localhost", "lat_rpc_udp", "104.58", "91.86", "93.59"),
    ("RPC/tcp latency using localhost", "lat_rpc_tcp", "130.31", "116.03", "119.48"),
    ("TCP/IP connection cost to localhost", "lat_tcp_connect", "182.83", "129.92", "207.86"),
]
for label, metric, *cells in _LMBENCH:
    printed = "\t".join([label, *cells])
    for kernel, cell in zip(("2.2.23", "2.4.20", "2.5.59"), cells, strict=True):
        run = Run(kernel, (), "004-4way-500")
        _add(B004, run, metric, float(cell), "us", "lower", "004 LMBench table", printed)
