"""/proc/schedstat snapshots, versions 10, 11, 12, 14, 15, 16 and 17 (docs/parsers/schedstat.md).

The layout is chosen from the ``version`` line, never from the field count: v14 and v15 cpu
lines differ in length but their domain lines do not, so a count-based guess misreads one of
them. Counters are cumulative since boot; with two or more snapshots in one file the
measurements are last minus first, which is what a benchmark run changed.
Field names: torvalds/linux Documentation/scheduler/sched-stats.rst and the kernel's
show_schedstat() of each version (v10/v11 from the 2.6.10-2.6.12 sched.c). Version 17
(kernel 6.14+, kernel/sched/stats.c) prints the domain's name before its cpumask
(``domain0 SMT 00000003 ...``, a space, not a colon) and replaces lb_imbalance with four
fields (load, util, task, misfit): 45 domain fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import Measurement, ParseError, ParseResult, Sample, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_IDLE_V15 = ("idle", "busy", "newidle")  # CPU_IDLE, __CPU_NOT_IDLE, CPU_NEWLY_IDLE
_IDLE_V16 = ("busy", "idle", "newidle")  # v16 swapped the first two
_LB8 = (
    "lb_count",
    "lb_balanced",
    "lb_failed",
    "lb_imbalance",
    "lb_gained",
    "lb_hot_gained",
    "lb_nobusyq",
    "lb_nobusyg",
)
_LB11 = (
    *_LB8[:3],
    "lb_imbalance_load",
    "lb_imbalance_util",
    "lb_imbalance_task",
    "lb_imbalance_misfit",
    *_LB8[4:],
)
_YLD = ("yld_both_empty", "yld_act_empty", "yld_exp_empty")
_CPU_V11 = (
    *_YLD,
    "yld_count",
    "sched_switch",
    "sched_count",
    "sched_goidle",
    "ttwu_count",
    "ttwu_local",
    "rq_cpu_time",
    "run_delay",
    "pcount",
)
_CPU_V15 = ("yld_count", "legacy", *_CPU_V11[5:])
_CPU_V10 = (
    *_YLD,
    "yld_count",
    "sched_noswitch",
    "sched_switch",
    "sched_count",
    "sched_goidle",
    "alb_count",
    "alb_gained",
    "alb_lost",
    "alb_failed",
    "ttwu_count",
    "ttwu_moved",
    "ttwu_attempts",
    "wunt_count",
    "wunt_moved",
    "smt_count",
    "sbe_count",
    "rq_cpu_time",
    "run_delay",
    "pcount",
    *(f"pt_{what}_{idle}" for idle in _IDLE_V15 for what in ("gained", "lost")),
)
_DOMAIN_TAIL_V12 = (
    "alb_count",
    "alb_failed",
    "alb_pushed",
    "sbe_count",
    "sbe_balanced",
    "sbe_pushed",
    "sbf_count",
    "sbf_balanced",
    "sbf_pushed",
    "ttwu_wake_remote",
    "ttwu_move_affine",
    "ttwu_move_balance",
)


def _per_idle(names: tuple[str, ...], order: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{name}_{idle}" for idle in order for name in names)


_DOMAIN_V10 = (
    *_per_idle(("lb_count", "lb_failed", "lb_imbalance", "lb_nobusyq", "lb_nobusyg"), _IDLE_V15),
    "sbe_pushed",
    "sbe_attempts",
    "ttwu_wake_affine",
    "ttwu_wake_balance",
)
_DOMAIN_V11 = (
    *_per_idle(_LB8, _IDLE_V15),
    "alb_count",
    "alb_failed",
    "alb_pushed",
    "sbe_pushed",
    "sbe_attempts",
    "ttwu_wake_remote",
    "ttwu_move_affine",
    "ttwu_move_balance",
)
_DOMAIN_V12 = (*_per_idle(_LB8, _IDLE_V15), *_DOMAIN_TAIL_V12)
_DOMAIN_V16 = (*_per_idle(_LB8, _IDLE_V16), *_DOMAIN_TAIL_V12)
_DOMAIN_V17 = (*_per_idle(_LB11, _IDLE_V16), *_DOMAIN_TAIL_V12)

# version -> (cpu line fields, domain line fields after the cpumask)
LAYOUTS = {
    10: (_CPU_V10, _DOMAIN_V10),
    11: (_CPU_V11, _DOMAIN_V11),
    12: (_CPU_V11, _DOMAIN_V12),
    14: (_CPU_V11, _DOMAIN_V12),
    15: (_CPU_V15, _DOMAIN_V12),
    16: (_CPU_V15, _DOMAIN_V16),
    17: (_CPU_V15, _DOMAIN_V17),
}
NAMED_DOMAINS = 17  # from this version on a domain line names its domain before the mask

# measurement -> cpu field, summed over CPUs
TOTALS = {
    "sched_yld_count": "yld_count",
    "sched_count": "sched_count",
    "sched_goidle": "sched_goidle",
    "ttwu_count": "ttwu_count",
    "ttwu_local": "ttwu_local",
}


@dataclass
class _Snapshot:
    version: int
    line: int
    timestamp: float | None = None
    values: dict[str, float] = field(default_factory=dict)  # "cpu0.ttwu_count" -> value
    cpus: list[str] = field(default_factory=list)


def _fields(
    names: tuple[str, ...], tokens: list[str], number: int, what: str, version: int
) -> list[tuple[str, float]]:
    if len(tokens) != len(names):
        raise ParseError(
            f"{what} has {len(tokens)} fields; version {version} has {len(names)}", number
        )
    return [
        (name, parse_number(token, line=number, what=f"{what} {name}"))
        for name, token in zip(names, tokens, strict=True)
    ]


def _version(tokens: list[str], number: int) -> int:
    if len(tokens) != 2 or not tokens[1].isdigit():
        raise ParseError(f"malformed version line {' '.join(tokens)!r}", number)
    version = int(tokens[1])
    if version not in LAYOUTS:
        supported = ", ".join(str(v) for v in LAYOUTS)
        raise ParseError(
            f"schedstat version {version} is not supported (supported: {supported}; "
            "13 only existed in -mm trees with conflicting layouts)",
            number,
        )
    return version


def _read(text: str, warnings: list[str]) -> list[_Snapshot]:
    snapshots: list[_Snapshot] = []
    cpu = None
    for number, line in numbered_lines(text):
        tokens = line.split()
        if not tokens:
            continue
        head = tokens[0]
        if head == "version":
            snapshots.append(_Snapshot(_version(tokens, number), number))
            cpu = None
            continue
        if not snapshots:
            if head.startswith(("cpu", "domain", "timestamp")):
                raise ParseError("schedstat data before any 'version N' line", number)
            continue
        snap = snapshots[-1]
        cpu_fields, domain_fields = LAYOUTS[snap.version]
        if head == "timestamp" and len(tokens) == 2:
            snap.timestamp = parse_number(tokens[1], line=number, what="timestamp")
        elif head.startswith("cpu") and head[3:].isdigit():
            cpu = head
            snap.cpus.append(cpu)
            for name, value in _fields(cpu_fields, tokens[1:], number, head, snap.version):
                snap.values[f"{cpu}.{name}"] = value
        elif head.startswith("domain") and head[6:].isdigit():
            if cpu is None:
                raise ParseError(f"{head} line before any cpu line", number)
            prefix = f"{cpu}.{head}"
            first = 2
            if snap.version >= NAMED_DOMAINS:
                if len(tokens) < 3 or not tokens[1][:1].isalpha():
                    raise ParseError(
                        f"{head} has no domain name before its cpumask (version "
                        f"{snap.version} prints one, e.g. 'domain0 SMT 00000003')",
                        number,
                    )
                first = 3
            for name, value in _fields(domain_fields, tokens[first:], number, prefix, snap.version):
                snap.values[f"{prefix}.{name}"] = value
        else:
            warnings.append(f"line {number}: ignored {line.strip()[:60]!r}")
    return snapshots


def _totals(snap: _Snapshot) -> dict[str, float]:
    totals = {}
    for metric, name in TOTALS.items():
        values = [
            snap.values[f"{cpu}.{name}"] for cpu in snap.cpus if f"{cpu}.{name}" in snap.values
        ]
        if values:
            totals[metric] = sum(values)
    return totals


def _check_pair(first: _Snapshot, last: _Snapshot) -> None:
    if first.version != last.version or first.cpus != last.cpus:
        raise ParseError(
            "the snapshots differ in version or CPU set; deltas need the same layout", last.line
        )


def _deltas(first: _Snapshot, last: _Snapshot) -> dict[str, float]:
    _check_pair(first, last)
    before, after = _totals(first), _totals(last)
    deltas = {}
    for metric, value in after.items():
        delta = value - before[metric]
        if delta < 0:
            raise ParseError(
                f"{metric} went backwards between snapshots (reboot or counter wrap?)", last.line
            )
        deltas[metric] = delta
    return deltas


@register("schedstat")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    warnings: list[str] = []
    snapshots = _read(text, warnings)
    if not snapshots:
        raise ParseError("no 'version N' line: not a /proc/schedstat dump")
    for snap in snapshots:
        if not snap.cpus:
            raise ParseError(f"snapshot at line {snap.line} has no cpu lines", snap.line)
    metadata: dict[str, str | int | float] = {
        "version": snapshots[0].version,
        "snapshots": len(snapshots),
        "cpus": len(snapshots[0].cpus),
    }
    if len(snapshots) == 1:
        totals = _totals(snapshots[0])
    else:
        totals = _deltas(snapshots[0], snapshots[-1])
        if snapshots[0].timestamp is not None and snapshots[-1].timestamp is not None:
            metadata["interval_jiffies"] = snapshots[-1].timestamp - snapshots[0].timestamp
    samples = tuple(
        Sample("schedstat", column, index, value)
        for index, snap in enumerate(snapshots)
        for column, value in snap.values.items()
    )
    measurements = tuple(
        Measurement(metric, value, "count", "none") for metric, value in totals.items()
    )
    return ParseResult(
        measurements=measurements, samples=samples, warnings=tuple(warnings), metadata=metadata
    )
