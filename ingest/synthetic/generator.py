"""The synthetic history's generator: setups and their runs from the catalogue and a seed.

Pure: plain frozen dataclasses in, plain frozen dataclasses out, reproducible from a seed.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ingest.synthetic.catalogue import (
    BUILDS,
    CPU,
    HARDWARE,
    KERNELS,
    PREFIX,
    PROFILE_METRICS,
    SETUPS_PER_UNIT,
    STEPS,
    WORKLOADS,
    HardwareDef,
    MetricDef,
    WorkloadDef,
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
    """Rows the given units store (seed-independent). Every unit has the same shape (12
    setups, each on every build, the same metrics, profiles and vmstat runs), so this counts
    one unit and multiplies: generating 8,080 units only to count them took minutes."""
    setups = runs = results = profile = samples = 0
    for setup in setups_of_unit(0):
        setups += 1
        for run in runs_of_setup(setup, seed=0):
            runs += 1
            results += len(run.results)
            profile += len(run.profile)
            samples += len(run.vmstat)
    n = len(units)
    return Counts(setups * n, runs * n, results * n, profile * n, samples * n)


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
