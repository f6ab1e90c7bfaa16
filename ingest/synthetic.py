"""Synthetic lab history for benchmarks: kernels 2.2 → 2.6, patch sets, hardware, workloads.

Two halves. The generator (``setups_of_unit``, ``runs_of_setup``) is pure: plain frozen
dataclasses in, plain frozen dataclasses out, reproducible from a seed. The writer
(``history_write``, ``history_remove``) stores them with PostgreSQL COPY, the path
``ingest.writer`` uses for uploads, because the ORM would take hours at 10 million rows.

Everything stored is marked: runs have ``synthetic = True``; workloads, hardware and patches
are named ``synthetic-…``. ``history_remove`` deletes exactly that and leaves real data alone.

Sizing: a scale unit is 12 setups (one per workload) each measured on every build, so a
series stays as long as a real lab's (one run per build) while the data grows with the number
of configurations, as a lab's does. ``results_per_unit()`` gives the exact count.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q

from ingest.writer import SAMPLE_COLUMNS, copy_rows, kernel_get, patch_set_get, sample_row
from perfdb.cache import data_changed_on_commit
from perfdb.models import (
    Alert,
    Hardware,
    Kernel,
    Metric,
    Patch,
    PatchSet,
    Run,
    Setup,
    Workload,
    params_digest,
)
from perfdb.timeseries import columns_from_samples

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

PROFILE_FUNCTIONS = (
    "default_idle",
    "schedule",
    "__wake_up",
    "try_to_wake_up",
    "do_softirq",
    "tcp_sendmsg",
    "tcp_recvmsg",
    "sys_poll",
    "do_select",
    "fget",
    "__copy_to_user",
    "__copy_from_user",
    "kmalloc",
    "kfree",
    "do_page_fault",
    "file_read_actor",
    "system_call",
    "pipe_read",
    "pipe_write",
    "recalc_sigpending",
)

VMSTAT_COLUMNS = (
    ("r", 2.0),
    ("b", 0.2),
    ("swpd", 0.0),
    ("free", 250000.0),
    ("buff", 40000.0),
    ("cache", 300000.0),
    ("si", 0.0),
    ("so", 0.0),
    ("bi", 20.0),
    ("bo", 80.0),
    ("in", 1200.0),
    ("cs", 45000.0),
    ("us", 40.0),
    ("sy", 45.0),
    ("id", 15.0),
    ("wa", 0.0),
)
VMSTAT_ROWS = 30
VMSTAT_EVERY = 25  # one run in 25 carries a vmstat series
PROFILE_EVERY = 5  # one run in 5 of a profiled workload carries a readprofile profile


# --- the generator (pure) --------------------------------------------------------------------


@dataclass(frozen=True)
class SetupSpec:
    index: int
    workload: WorkloadDef
    hardware: HardwareDef
    mode: str
    params: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class RunSpec:
    setup_index: int
    build_index: int
    kernel: str
    patches: tuple[str, ...]
    created_at: datetime
    fingerprint: str
    trials: int
    discard_first_trial: bool
    # (metric name, unit, trial, value); trial 0 is a run-level value
    results: tuple[tuple[str, str, int, float], ...]
    profile: tuple[tuple[str, float, float], ...]  # (function, ticks, share_pct)
    vmstat: tuple[tuple[str, int, float], ...]  # (column, index, value)


def setup_spec(index: int) -> SetupSpec:
    """Setup ``index``: workload index % 12; for a workload, its units walk the 8 machines,
    then the next value of the scaling parameter, so each (workload, machine, mode) scope
    gains a point on its scaling curve every 8 units."""
    unit, w = divmod(index, SETUPS_PER_UNIT)
    workload = WORKLOADS[w]
    hardware = HARDWARE[(w + unit) % len(HARDWARE)]
    variant = unit // len(HARDWARE)
    mode = "UP" if hardware.cpus == 1 or unit % 4 == 3 else "SMP"
    params = workload.fixed_params + (
        (workload.scaling_param, workload.scaling_step * (variant + 1)),
    )
    return SetupSpec(index, workload, hardware, mode, params)


def setups_of_unit(unit: int) -> tuple[SetupSpec, ...]:
    first = unit * SETUPS_PER_UNIT
    return tuple(setup_spec(i) for i in range(first, first + SETUPS_PER_UNIT))


def _position(kernel: str) -> int:
    return KERNELS.index(kernel)


def step_factor(workload: str, kernel: str, patches: tuple[str, ...]) -> float:
    """How much better the build is than the baseline, from the STEPS that apply to it."""
    at = _position(kernel)
    factor = 1.0
    for step in STEPS:
        if step.workload != workload or at < _position(step.kernel):
            continue
        if step.until is not None and at >= _position(step.until):
            continue
        if step.patch is not None and step.patch not in patches:
            continue
        factor *= step.factor
    return factor


def _hardware_factor(hardware: HardwareDef, mode: str) -> float:
    cpus = 1 if mode == "UP" else hardware.cpus
    return (hardware.mhz / 1000) * cpus**0.7


def _directed(value: float, better: str, factor: float) -> float:
    if better == "higher":
        return value * factor
    if better == "lower":
        return value / factor
    return value


def _release_date(build_index: int) -> datetime:
    return datetime(1999, 6, 1, tzinfo=UTC) + timedelta(days=25 * build_index)


def _fingerprint(seed: int, setup_index: int, build_index: int) -> str:
    return hashlib.sha256(f"synthetic:{seed}:{setup_index}:{build_index}".encode()).hexdigest()


def _trial_values(
    rng: random.Random, mean: float, trials: int, warmup: bool
) -> Iterator[tuple[int, float]]:
    for trial in range(1, trials + 1):
        value = mean * (1 + rng.gauss(0, 0.01))
        if warmup and trial == 1:
            value *= 0.9  # the warm-up trial is slow, which is why it is discarded
        yield trial, value


def _run_results(
    rng: random.Random, setup: SetupSpec, kernel: str, patches: tuple[str, ...]
) -> list[tuple[str, str, int, float]]:
    workload = setup.workload
    scale = _hardware_factor(setup.hardware, setup.mode)
    step = step_factor(workload.name, kernel, patches)
    out = []
    metrics = workload.metrics if workload.name == PREFIX + "LMBench" else workload.metrics + CPU
    for metric in metrics:
        base = _directed(metric.base, metric.better, scale)
        run_mean = _directed(base, metric.better, step) * (1 + rng.gauss(0, 0.02))
        for trial, value in _trial_values(
            rng, run_mean, workload.trials, workload.discard_first_trial
        ):
            out.append((metric.name, metric.unit, trial, value))
    return out


def _profile(
    rng: random.Random, setup: SetupSpec, kernel: str, patches: tuple[str, ...]
) -> tuple[list[tuple[str, str, int, float]], tuple[tuple[str, float, float], ...]]:
    """Kernel-time metrics (run level) and a readprofile top list that agrees with them."""
    step = step_factor(setup.workload.name, kernel, patches)
    busy = min(95.0, 35.0 * (1 + rng.gauss(0, 0.05)))
    sched = 12.0 / step * (1 + rng.gauss(0, 0.05))
    total = 250000.0 * (1 + rng.gauss(0, 0.05))
    weights = [1.0 / (rank + 1) for rank in range(len(PROFILE_FUNCTIONS))]
    shown = sum(weights)
    profile = tuple(
        (name, round(total * 0.8 * w / shown), 80.0 * w / shown)
        for name, w in zip(PROFILE_FUNCTIONS, weights, strict=True)
    )
    metrics = [
        ("kernel_busy_pct", "%", 0, busy),
        ("scheduler_pct", "%", 0, sched),
        ("kernel_ticks", "ticks", 0, total),
    ]
    return metrics, profile


def _vmstat(rng: random.Random) -> tuple[tuple[str, int, float], ...]:
    return tuple(
        (column, index, max(0.0, round(base * (1 + rng.gauss(0, 0.1)))))
        for index in range(VMSTAT_ROWS)
        for column, base in VMSTAT_COLUMNS
    )


def runs_of_setup(setup: SetupSpec, seed: int) -> Iterator[RunSpec]:
    """One run per build, in kernel order. Which runs carry a profile or vmstat depends on
    the build only, so the shape (and the row counts) never depend on the seed."""
    rng = random.Random(f"{seed}:{setup.index}")
    for build_index, (kernel, patches) in enumerate(BUILDS):
        results = _run_results(rng, setup, kernel, patches)
        profile: tuple[tuple[str, float, float], ...] = ()
        if setup.workload.profiled and build_index % PROFILE_EVERY == 0:
            extra, profile = _profile(rng, setup, kernel, patches)
            results += extra
        vmstat = _vmstat(rng) if build_index % VMSTAT_EVERY == VMSTAT_EVERY - 1 else ()
        yield RunSpec(
            setup_index=setup.index,
            build_index=build_index,
            kernel=kernel,
            patches=patches,
            created_at=_release_date(build_index) + timedelta(minutes=setup.index),
            fingerprint=_fingerprint(seed, setup.index, build_index),
            trials=setup.workload.trials,
            discard_first_trial=setup.workload.discard_first_trial,
            results=tuple(results),
            profile=profile,
            vmstat=vmstat,
        )


@dataclass(frozen=True)
class Counts:
    setups: int
    runs: int
    results: int
    profile_entries: int
    samples: int


def counts(units: Sequence[int]) -> Counts:
    """Rows the given units store (seed-independent)."""
    setups = runs = results = profile = samples = 0
    for unit in units:
        for setup in setups_of_unit(unit):
            setups += 1
            for run in runs_of_setup(setup, seed=0):
                runs += 1
                results += len(run.results)
                profile += len(run.profile)
                samples += len(run.vmstat)
    return Counts(setups, runs, results, profile, samples)


def results_per_unit() -> int:
    """Results one scale unit stores; the same for every unit."""
    return counts([0]).results


def metric_defs() -> tuple[MetricDef, ...]:
    """Every metric the generator writes, once per (name, unit)."""
    found: dict[tuple[str, str], MetricDef] = {}
    for workload in WORKLOADS:
        for metric in workload.metrics + CPU + PROFILE_METRICS:
            found.setdefault((metric.name, metric.unit), metric)
    return tuple(found.values())


# --- the writer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteReport:
    units: tuple[int, ...]
    counts: Counts
    seconds: float


def _keys_resolve() -> dict[str, dict]:
    """Create (or find) the fixed vocabulary: hardware, workloads, kernels, patch sets,
    metrics. A few hundred rows, so the ORM is fine here."""

    hardware = {
        hw.name: Hardware.objects.get_or_create(
            name=hw.name,
            defaults={
                "cpus": hw.cpus,
                "cpu_model": hw.cpu,
                "mhz": hw.mhz,
                "l2_kb": hw.l2_kb,
                "memory_mb": hw.memory_mb,
                "notes": "synthetic (manage.py synth_history)",
            },
        )[0]
        for hw in HARDWARE
    }
    workloads = {
        w.name: Workload.objects.get_or_create(name=w.name, version=w.version)[0] for w in WORKLOADS
    }
    kernels: dict = {}
    for kernel in KERNELS:
        kernel_get(kernel, kernels)
    patch_sets: dict = {}
    for _, patches in BUILDS:
        patch_set_get(patches, patch_sets)
    metrics = {
        (m.name, m.unit): Metric.objects.get_or_create(
            name=m.name, unit=m.unit, defaults={"better": m.better}
        )[0]
        for m in metric_defs()
    }
    return {
        "hardware": hardware,
        "workloads": workloads,
        "kernels": {k: kernels[k].pk for k in KERNELS},
        "patch_sets": {p: ps.pk for p, ps in patch_sets.items()},
        "metrics": {key: m.pk for key, m in metrics.items()},
    }


def _setup_row(spec: SetupSpec, keys: dict[str, dict]) -> int:

    params = dict(spec.params)
    setup, _ = Setup.objects.get_or_create(
        workload=keys["workloads"][spec.workload.name],
        hardware=keys["hardware"][spec.hardware.name],
        mode=spec.mode,
        params_digest=params_digest(params),
        defaults={"params": params},
    )
    return setup.pk


def _ids_reserve(table: str, count: int) -> list[int]:
    """Take ``count`` ids from the table's identity sequence, so children can be copied with
    their run id without reading the runs back."""

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, count],
        )
        return [row[0] for row in cursor.fetchall()]


def _unit_write(unit: int, seed: int, keys: dict[str, dict]) -> Counts:

    setups = setups_of_unit(unit)
    setup_ids = {s.index: _setup_row(s, keys) for s in setups}
    runs = [run for s in setups for run in runs_of_setup(s, seed)]
    run_ids = _ids_reserve("perfdb_run", len(runs))
    kernels, patch_sets, metrics = keys["kernels"], keys["patch_sets"], keys["metrics"]
    copy_rows(
        "perfdb_run",
        [
            "id",
            "setup_id",
            "kernel_id",
            "patch_set_id",
            "label",
            "notes",
            "discard_first_trial",
            "fingerprint",
            "synthetic",
            "created_at",
        ],
        (
            (
                rid,
                setup_ids[r.setup_index],
                kernels[r.kernel],
                patch_sets[r.patches],
                "",
                f"synthetic history, seed unit {unit}",
                r.discard_first_trial,
                r.fingerprint,
                True,
                r.created_at,
            )
            for rid, r in zip(run_ids, runs, strict=True)
        ),
    )
    pairs = list(zip(run_ids, runs, strict=True))
    copy_rows(
        "perfdb_trial",
        ["run_id", "number", "discarded"],
        (
            (rid, n, r.discard_first_trial and n == 1)
            for rid, r in pairs
            for n in range(1, r.trials + 1)
        ),
    )
    copy_rows(
        "perfdb_result",
        ["run_id", "setup_id", "metric_id", "trial", "discarded", "value"],
        (
            (
                rid,
                setup_ids[r.setup_index],
                metrics[(name, unit_)],
                trial,
                r.discard_first_trial and trial == 1,
                value,
            )
            for rid, r in pairs
            for name, unit_, trial, value in r.results
        ),
    )
    copy_rows(
        "perfdb_profileentry",
        ["run_id", "trial", "source", "function", "ticks", "load", "share_pct"],
        (
            (rid, 0, "readprofile", function, ticks, None, share)
            for rid, r in pairs
            for function, ticks, share in r.profile
        ),
    )
    copy_rows(
        "perfdb_sample",
        SAMPLE_COLUMNS,
        (
            sample_row(rid, c)
            for rid, r in pairs
            for c in columns_from_samples(
                (0, "vmstat", column, index, value, index == 0, "")
                for column, index, value in r.vmstat
            )
        ),
    )
    return Counts(
        setups=len(setups),
        runs=len(runs),
        results=sum(len(r.results) for r in runs),
        profile_entries=sum(len(r.profile) for r in runs),
        samples=sum(len(r.vmstat) for r in runs),
    )


def units_stored() -> int:
    """Whole units already stored: ``history_write`` continues from there."""

    return (
        Setup.objects.filter(workload__name__startswith=PREFIX, runs__synthetic=True)
        .distinct()
        .count()
        // SETUPS_PER_UNIT
    )


def history_write(
    *, scale: int, seed: int = 0, units_per_commit: int = 20, progress=None
) -> WriteReport:
    """Store units up to ``scale`` (those already stored are kept: growing a history with the
    same seed gives the same data as building it at once). One transaction per
    ``units_per_commit`` units, so a 10-million-row build does not hold one huge transaction."""

    start = time.perf_counter()
    first = units_stored()
    units = tuple(range(first, scale))
    total = Counts(0, 0, 0, 0, 0)
    with transaction.atomic():
        keys = _keys_resolve()
    for at in range(0, len(units), units_per_commit):
        with transaction.atomic():
            _fk_checks_off()
            for unit in units[at : at + units_per_commit]:
                done = _unit_write(unit, seed, keys)
                total = Counts(
                    *(a + b for a, b in zip(_astuple(total), _astuple(done), strict=True))
                )
            data_changed_on_commit()  # cached page data is stale once this commits
        if progress:
            progress(units[min(at + units_per_commit, len(units)) - 1] + 1, scale, total)
    return WriteReport(units, total, time.perf_counter() - start)


def _fk_checks_off() -> None:
    """Skip the per-row foreign-key triggers for this transaction when allowed (superuser):
    the writer makes every key it points at, and those checks otherwise double the load time.
    Without the privilege the checks simply run."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if cursor.fetchone()[0]:
            cursor.execute("SET LOCAL session_replication_role = replica")


def _astuple(c: Counts) -> tuple[int, ...]:
    return (c.setups, c.runs, c.results, c.profile_entries, c.samples)


def history_remove() -> dict[str, int]:
    """Delete every synthetic run and what hangs off it, then the synthetic vocabulary no
    real run uses. Big child tables go by one DELETE each (the ORM would load every row);
    alerts, which have children of their own, go through the ORM."""
    synthetic_runs = "SELECT id FROM perfdb_run WHERE synthetic"
    removed: dict[str, int] = {}
    with transaction.atomic():
        removed["alerts"] = Alert.objects.filter(
            Q(candidate_run__synthetic=True) | Q(setup__workload__name__startswith=PREFIX)
        ).delete()[0]
        with connection.cursor() as cursor:
            for rel in Run._meta.related_objects:
                model, column = rel.related_model, rel.field.column
                if rel.many_to_many:
                    through = rel.through._meta
                    fk = next(f for f in through.fields if getattr(f, "related_model", None) is Run)
                    cursor.execute(
                        f'DELETE FROM {through.db_table} WHERE "{fk.column}" IN ({synthetic_runs})'
                    )
                    continue
                if model is Alert or model is Run:
                    continue  # alerts went through the ORM; Run.baseline is cleared below
                table = model._meta.db_table
                cursor.execute(f'DELETE FROM {table} WHERE "{column}" IN ({synthetic_runs})')
                removed[table] = cursor.rowcount
            cursor.execute(
                f"UPDATE perfdb_run SET baseline_id = NULL WHERE NOT synthetic "
                f"AND baseline_id IN ({synthetic_runs})"
            )
            cursor.execute("DELETE FROM perfdb_run WHERE synthetic")
            removed["perfdb_run"] = cursor.rowcount
        removed["setups"] = Setup.objects.filter(
            workload__name__startswith=PREFIX, runs__isnull=True
        ).delete()[0]
        removed["workloads"] = Workload.objects.filter(
            name__startswith=PREFIX, setup__isnull=True
        ).delete()[0]
        removed["hardware"] = Hardware.objects.filter(
            name__startswith=PREFIX, setup__isnull=True
        ).delete()[0]
        ours = PatchSet.objects.filter(items__patch__name__startswith=PREFIX).values("pk")
        removed["patch_sets"] = PatchSet.objects.filter(pk__in=ours, runs__isnull=True).delete()[0]
        removed["patches"] = Patch.objects.filter(
            name__startswith=PREFIX, patch_sets__isnull=True
        ).delete()[0]
        # Kernels and metrics are shared vocabulary: only the catalogue's, and only unused.
        removed["kernels"] = Kernel.objects.filter(
            _unused(Kernel), version__in=KERNELS + BENCH_KERNELS
        ).delete()[0]
        ours = Q()
        for m in metric_defs():
            ours |= Q(name=m.name, unit=m.unit)
        removed["metrics"] = Metric.objects.filter(ours, _unused(Metric)).delete()[0]
        data_changed_on_commit()
    return removed


def _unused(model) -> Q:
    """Rows nothing points at (no run, result, alert, threshold, …), whatever points at them."""

    unused = Q()
    for rel in model._meta.related_objects:
        unused &= Q(**{f"{rel.name}__isnull": True})
    return unused
