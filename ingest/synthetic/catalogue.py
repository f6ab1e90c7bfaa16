"""The synthetic lab's catalogue: hardware, workloads and their metrics, kernels 2.2 to 2.6,
patch sets, and the steps the history carries. Plain frozen dataclasses; no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "synthetic-"


SETUPS_PER_UNIT = 12  # one setup per workload per unit


# --- the catalogue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HardwareDef:
    name: str
    cpus: int
    cpu: str
    mhz: int
    l2_kb: int
    memory_mb: int


@dataclass(frozen=True)
class MetricDef:
    name: str
    unit: str
    better: str  # higher | lower | none
    base: float  # value on a 1 GHz uniprocessor with a 2.4.0 kernel


@dataclass(frozen=True)
class WorkloadDef:
    name: str
    version: str
    metrics: tuple[MetricDef, ...]
    trials: int
    discard_first_trial: bool
    fixed_params: tuple[tuple[str, object], ...]
    scaling_param: str  # grows with the setup's variant, so the scaling page has a curve
    scaling_step: int
    profiled: bool  # readprofile entries and kernel-time metrics on every 5th run


@dataclass(frozen=True)
class Step:
    """A real change in the history: from ``kernel`` on (until ``until``, exclusive), the
    workload's directed metrics get ``factor`` better (factor < 1: worse)."""

    workload: str
    kernel: str
    factor: float
    until: str | None = None
    patch: str | None = None  # only builds carrying this patch


def _m(name: str, unit: str, better: str, base: float) -> MetricDef:
    return MetricDef(name, unit, better, base)


HARDWARE = (
    HardwareDef(PREFIX + "1way-p4-2000", 1, "Pentium 4", 2000, 512, 1024),
    HardwareDef(PREFIX + "2way-piii-500", 2, "Pentium III", 500, 512, 1024),
    HardwareDef(PREFIX + "4way-piii-700", 4, "Pentium III Xeon", 700, 1024, 2048),
    HardwareDef(PREFIX + "8way-piii-900", 8, "Pentium III", 900, 2048, 2560),
    HardwareDef(PREFIX + "2way-xeon-2400", 2, "Xeon", 2400, 512, 2048),
    HardwareDef(PREFIX + "4way-xeon-1600", 4, "Xeon MP", 1600, 1024, 4096),
    HardwareDef(PREFIX + "8way-xeon-2000", 8, "Xeon MP", 2000, 2048, 8192),
    HardwareDef(PREFIX + "16way-numaq-700", 16, "Pentium III Xeon (NUMA-Q)", 700, 2048, 16384),
)


# Every workload but LMBench also reports the CPU use of the machine under test.
CPU = (_m("cpu_usage_pct", "%", "none", 80.0),)


PROFILE_METRICS = (
    _m("kernel_busy_pct", "%", "none", 35.0),
    _m("scheduler_pct", "%", "lower", 12.0),
    _m("kernel_ticks", "ticks", "none", 250000.0),
)


WORKLOADS = (
    WorkloadDef(
        PREFIX + "VolanoMark",
        "2.1.2",
        (
            _m("throughput", "msg/s", "higher", 9000.0),
            _m("wakeup_calls", "calls", "none", 2.0e6),
            _m("priority_preemption_pct", "%", "none", 30.0),
        ),
        5,
        True,
        (("server_nice", 0), ("client_nice", -19), ("rooms", 10)),
        "preempt_threshold",
        10,
        True,
    ),
    WorkloadDef(
        PREFIX + "SPECjAppServer2002",
        "1.0",
        (_m("tops", "TOPS", "higher", 120.0), _m("response_time_ms", "ms", "lower", 800.0)),
        3,
        False,
        (("injection_rate", 40),),
        "threads",
        8,
        True,
    ),
    WorkloadDef(
        PREFIX + "Trade",
        "3",
        (_m("requests_per_s", "req/s", "higher", 400.0), _m("response_ms", "ms", "lower", 90.0)),
        5,
        False,
        (),
        "clients",
        25,
        False,
    ),
    WorkloadDef(
        PREFIX + "SPECweb99",
        "1.02",
        (
            _m("conforming_connections", "connections", "higher", 600.0),
            _m("ops_per_s", "ops/s", "higher", 1800.0),
        ),
        3,
        False,
        (),
        "connections",
        100,
        True,
    ),
    WorkloadDef(
        PREFIX + "LMBench",
        "2.0",
        (
            _m("lat_ctx_us", "us", "lower", 4.0),
            _m("lat_syscall_us", "us", "lower", 0.6),
            _m("lat_pipe_us", "us", "lower", 11.0),
            _m("bw_pipe_mb_s", "MB/s", "higher", 600.0),
            _m("lat_proc_fork_us", "us", "lower", 180.0),
            _m("lat_udp_us", "us", "lower", 25.0),
            _m("lat_tcp_us", "us", "lower", 40.0),
            _m("lat_mmap_us", "us", "lower", 600.0),
            _m("lat_pagefault_us", "us", "lower", 1.5),
            _m("bw_mem_rd_mb_s", "MB/s", "higher", 1200.0),
        ),
        5,
        False,
        (),
        "processes",
        2,
        False,
    ),
    WorkloadDef(
        PREFIX + "tiobench",
        "0.3.3",
        (
            _m("seq_read_mb_s", "MB/s", "higher", 40.0),
            _m("rand_write_mb_s", "MB/s", "higher", 3.0),
            _m("max_latency_ms", "ms", "lower", 400.0),
        ),
        3,
        False,
        (("file_mb", 1024),),
        "threads",
        4,
        False,
    ),
    WorkloadDef(
        PREFIX + "dbench",
        "1.3",
        (_m("throughput", "MB/s", "higher", 120.0), _m("max_latency_ms", "ms", "lower", 250.0)),
        5,
        False,
        (),
        "clients",
        16,
        False,
    ),
    WorkloadDef(
        PREFIX + "kernbench",
        "0.30",
        (
            _m("elapsed_s", "s", "lower", 300.0),
            _m("user_s", "s", "lower", 900.0),
            _m("system_s", "s", "lower", 80.0),
        ),
        5,
        True,
        (("tree", "linux-2.4.20"),),
        "jobs",
        4,
        True,
    ),
    WorkloadDef(
        PREFIX + "netperf",
        "2.2",
        (
            _m("tcp_stream_mbit_s", "Mbit/s", "higher", 900.0),
            _m("tcp_rr_trans_s", "trans/s", "higher", 9000.0),
        ),
        5,
        False,
        (("message_bytes", 8192),),
        "streams",
        1,
        False,
    ),
    WorkloadDef(
        PREFIX + "tbench",
        "1.3",
        (_m("throughput", "MB/s", "higher", 150.0),),
        5,
        False,
        (),
        "clients",
        8,
        False,
    ),
    WorkloadDef(
        PREFIX + "hackbench",
        "1.0",
        (_m("elapsed_s", "s", "lower", 3.0),),
        5,
        False,
        (),
        "groups",
        10,
        False,
    ),
    WorkloadDef(
        PREFIX + "AIM7",
        "1.1",
        (_m("jobs_per_min", "jobs/min", "higher", 8000.0),),
        3,
        False,
        (("mix", "shared"),),
        "users",
        200,
        False,
    ),
)


PATCHES = (PREFIX + "o1-sched", PREFIX + "pri-preempt", PREFIX + "hugetlb")


KERNELS = (
    # 2.2: maintenance releases
    "2.2.14",
    "2.2.16",
    "2.2.18",
    "2.2.20",
    "2.2.22",
    "2.2.24",
    "2.2.26",
    # 2.4: test, pre and rc steps before some releases
    "2.4.0-test9",
    "2.4.0",
    "2.4.2",
    "2.4.4",
    "2.4.6",
    "2.4.8",
    "2.4.10",
    "2.4.12",
    "2.4.14",
    "2.4.16",
    "2.4.17",
    "2.4.18-pre3",
    "2.4.18",
    "2.4.19-pre10",
    "2.4.19",
    "2.4.20-rc2",
    "2.4.20",
    "2.4.21",
    "2.4.22",
    # 2.5: the development series
    "2.5.1",
    "2.5.2",
    "2.5.8",
    "2.5.20",
    "2.5.25",
    "2.5.40",
    "2.5.59",
    "2.5.75",
    # 2.6
    "2.6.0-test1",
    "2.6.0-test6",
    "2.6.0-test11",
    "2.6.0",
    "2.6.1-rc1",
    "2.6.1",
    "2.6.2",
)


# Kernels the benchmarks upload after the history (bench/regression_speed.py); removed with it.
BENCH_KERNELS = tuple(f"2.6.{n}" for n in range(3, 13))


def _builds() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every (kernel, patches) a setup is measured on: each kernel stock, plus the patch sets
    people tried on the kernels they were written for."""
    o1, preempt, huge = PATCHES
    out: list[tuple[str, tuple[str, ...]]] = []
    for kernel in KERNELS:
        out.append((kernel, ()))
        if kernel in ("2.4.18", "2.4.19", "2.4.20", "2.4.21", "2.4.22"):
            out.append((kernel, (o1,)))
        if kernel.startswith("2.5."):
            out.append((kernel, (preempt,)))
        if KERNELS.index(kernel) >= KERNELS.index("2.5.40"):
            out.append((kernel, (preempt, huge)))
    return tuple(out)


BUILDS = _builds()


# The real changes a viewer should see. Kernel names compare by position in KERNELS.
STEPS = (
    Step(PREFIX + "SPECweb99", "2.4.0", 1.40),  # 2.2 → 2.4: the networking rewrite
    Step(PREFIX + "VolanoMark", "2.5.2", 1.25),  # O(1) scheduler
    Step(PREFIX + "hackbench", "2.5.2", 1.35),
    Step(PREFIX + "VolanoMark", "2.4.18", 1.15, patch=PREFIX + "o1-sched"),
    Step(PREFIX + "VolanoMark", "2.5.1", 1.08, patch=PREFIX + "pri-preempt"),
    Step(PREFIX + "dbench", "2.4.19-pre10", 0.85, until="2.4.20"),  # a regression, then fixed
    Step(PREFIX + "tiobench", "2.4.19-pre10", 0.88, until="2.4.20"),
    Step(PREFIX + "LMBench", "2.6.0-test1", 0.90),  # context switches got slower
    Step(PREFIX + "SPECjAppServer2002", "2.5.40", 1.10, patch=PREFIX + "hugetlb"),
    Step(PREFIX + "kernbench", "2.5.59", 1.06),
)
