"""fio ``--output-format=json`` / ``json+`` (docs/parsers/fio.md).

fio 3.x prints latencies in nanoseconds (``clat_ns``), fio 2.x in microseconds (``clat``):
the key names which, so the same number is never read in the wrong unit. ``bw`` is KiB/s in
both. Client/server runs put the jobs under ``client_stats`` with a ``hostname`` each, and an
``All clients`` entry that fio summed itself; it is kept as its own record (job
``All clients``), never recomputed. JSON numbers are read as Decimals, so conversions are
exact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ingest.parsers.base import Better, Histogram, Measurement, ParseError, ParseResult, Record
from ingest.parsers.fio_common import DIRECTIONS, lat_stats, measurement, percentile_name

_NS = Decimal("0.001")
JSON = Mapping[str, Any]  # a decoded JSON object

_DIR_PLAIN: tuple[tuple[str, str, str, Better], ...] = (
    ("iops", "iops", "IOPS", "higher"),
    ("bw", "bw_kib_s", "KiB/s", "higher"),
    ("io_kbytes", "io_kib", "KiB", "none"),
    ("runtime", "runtime_ms", "ms", "none"),
    ("total_ios", "total_ios", "count", "none"),
    ("bw_min", "bw_min_kib_s", "KiB/s", "higher"),
    ("bw_max", "bw_max_kib_s", "KiB/s", "higher"),
    ("bw_mean", "bw_mean_kib_s", "KiB/s", "higher"),
    ("bw_dev", "bw_stddev_kib_s", "KiB/s", "lower"),
    ("bw_agg", "bw_agg_pct", "%", "none"),
    ("bw_samples", "bw_samples", "count", "none"),
    ("iops_min", "iops_min", "IOPS", "higher"),
    ("iops_max", "iops_max", "IOPS", "higher"),
    ("iops_mean", "iops_mean", "IOPS", "higher"),
    ("iops_stddev", "iops_stddev", "IOPS", "lower"),
    ("iops_samples", "iops_samples", "count", "none"),
)
_JOB_PLAIN = (
    ("job_runtime", "job_runtime_ms", "ms", "none"),
    ("usr_cpu", "cpu_usr_pct", "%", "none"),
    ("sys_cpu", "cpu_sys_pct", "%", "none"),
    ("ctx", "ctx_switches", "count", "none"),
    ("majf", "major_faults", "count", "none"),
    ("minf", "minor_faults", "count", "none"),
)
_DIST = (
    ("latency_ns", Decimal("0.001")),
    ("latency_us", Decimal(1)),
    ("latency_ms", Decimal(1000)),
)


def _load(text: str) -> tuple[dict[str, Any], int]:
    """The JSON object and the line it starts on; text before it (fio warnings) is skipped."""
    start = next((i for i, raw in enumerate(text.splitlines()) if raw.strip().startswith("{")), 0)
    body = "\n".join(text.splitlines()[start:])
    try:
        data, end = json.JSONDecoder(parse_float=Decimal).raw_decode(body)
    except json.JSONDecodeError as err:
        raise ParseError(f"fio JSON is malformed: {err.msg}", start + err.lineno) from None
    if not isinstance(data, dict):
        raise ParseError("fio JSON is not an object", start + 1)
    return data, start + 1


def _job_lines(text: str) -> list[int]:
    return [n for n, raw in enumerate(text.splitlines(), start=1) if '"jobname"' in raw]


def _number(value: object, what: str, line: int) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise ParseError(f"{what} is {value!r}, not a number", line)
    if isinstance(value, Decimal) and not value.is_finite():
        raise ParseError(f"{what} is not a finite number", line)
    return Decimal(value)


def _latency(block: JSON, prefix: str, factor: Decimal, line: int) -> list[Measurement]:
    if block.get("N") == 0:  # fio did not measure this latency (slat with sync engines)
        return []
    stats = {k: _number(block[k], f"{prefix} {k}", line) for k in ("min", "max", "mean", "stddev")}
    out = lat_stats(prefix, stats, factor)
    for pct, value in (block.get("percentile") or {}).items():
        us = _number(value, f"{prefix} percentile {pct}", line) * factor
        out.append(measurement(percentile_name(prefix, pct, line=line), us, "us", "lower"))
    return out


def _direction(block: JSON, what: str, line: int) -> tuple[list[Measurement], list[Histogram]]:
    out: list[Measurement] = []
    for key, metric, unit, better in _DIR_PLAIN:
        if key in block:
            out.append(
                measurement(metric, _number(block[key], f"{what} {key}", line), unit, better)
            )
    histograms = []
    for kind in ("slat", "clat", "lat"):
        if f"{kind}_ns" in block:
            out += _latency(block[f"{kind}_ns"], kind, _NS, line)
            bins = block[f"{kind}_ns"].get("bins")
            if bins:
                pairs = tuple(
                    (float(_number(Decimal(x), "bin", line)), float(_number(c, "bin count", line)))
                    for x, c in bins.items()
                )
                histograms.append(Histogram(f"{kind}_ns_bins", f"{kind} (ns)", pairs))
        elif kind in block:  # fio 2.x: microseconds
            out += _latency(block[kind], kind, Decimal(1), line)
    return out, histograms


def _used(block: object) -> bool:
    """fio prints every direction; one with no I/O at all is not a measurement."""
    if not isinstance(block, Mapping):
        return False
    return any(block.get(k) not in (None, 0) for k in ("total_ios", "io_kbytes", "io_bytes"))


def _distribution(job: JSON, line: int) -> tuple[list[Histogram], list[Measurement]]:
    """fio's latency buckets (% of I/Os); the open-ended >=2000 ms bucket is a measurement."""
    bins = []
    overflow: list[Measurement] = []
    for key, factor in _DIST:
        for bucket, pct in (job.get(key) or {}).items():
            value = _number(pct, f"{key} {bucket}", line)
            if bucket.startswith(">="):
                overflow.append(measurement("lat_over_2000ms_pct", value, "%", "lower"))
                continue
            bins.append((float(Decimal(bucket) * factor), float(value)))
    if not bins:
        return [], overflow
    label = "latency bucket upper bound (us)"
    return [Histogram("latency_distribution_pct", label, tuple(bins))], overflow


def _job_records(job: JSON, line: int) -> list[Record]:
    if not isinstance(job, Mapping) or "jobname" not in job:
        raise ParseError("a fio job entry has no 'jobname'", line)
    keys: dict[str, str | int] = {"job": str(job["jobname"])}
    if "hostname" in job:
        keys["host"] = str(job["hostname"])
    records = []
    for direction in DIRECTIONS:
        if _used(job.get(direction)):
            values, histograms = _direction(job[direction], f"{keys['job']} {direction}", line)
            records.append(
                Record(
                    keys={**keys, "direction": direction},
                    line=line,
                    measurements=tuple(values),
                    histograms=tuple(histograms),
                )
            )
    totals = [
        measurement(metric, _number(job[key], f"{keys['job']} {key}", line), unit, better)  # type: ignore[arg-type]
        for key, metric, unit, better in _JOB_PLAIN
        if key in job
    ]
    histograms, overflow = _distribution(job, line)
    totals += overflow
    if totals or histograms:
        records.append(
            Record(keys=keys, line=line, measurements=tuple(totals), histograms=tuple(histograms))
        )
    return records


def _disks(data: JSON, line: int) -> list[Record]:
    records = []
    for disk in data.get("disk_util") or []:
        keys: dict[str, str | int] = {"disk": str(disk.get("name"))}
        if "hostname" in disk:
            keys["host"] = str(disk["hostname"])
        values = [
            measurement(
                "disk_util_pct" if key == "util" else f"disk_{key}",
                _number(value, f"disk {key}", line),
                "%" if key == "util" else "count",
                "none",
            )
            for key, value in disk.items()
            if key not in ("name", "hostname", "port")
        ]
        records.append(Record(keys=keys, line=line, measurements=tuple(values)))
    return records


def _metadata(data: JSON) -> dict[str, str | int | float]:
    metadata: dict[str, str | int | float] = {"format": "json"}
    if "fio version" in data:
        metadata["fio_version"] = str(data["fio version"])
    if "time" in data:
        metadata["time"] = str(data["time"])
    options = data.get("global options")
    if isinstance(options, Mapping):
        options = [options]
    for entry in options or []:  # client/server: one per host, usually equal
        for key, value in entry.items():
            if key not in ("hostname", "port"):
                metadata.setdefault(f"option.{key}", str(value))
    return metadata


def parse_json(text: str) -> ParseResult:
    data, start = _load(text)
    jobs = list(data.get("jobs") or []) + list(data.get("client_stats") or [])
    if not jobs:
        raise ParseError("fio JSON has no 'jobs' or 'client_stats' entries", start)
    lines = _job_lines(text)
    records: list[Record] = []
    warnings: list[str] = []
    for index, job in enumerate(jobs):
        line = lines[index] if index < len(lines) else start
        if isinstance(job, Mapping) and job.get("error"):
            warnings.append(f"line {line}: job {job.get('jobname')!r} reports error {job['error']}")
        records += _job_records(job, line)
    records += _disks(data, start)
    if not any(r.keys.get("direction") for r in records):
        raise ParseError("fio JSON jobs did no I/O in any direction", start)
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=_metadata(data))
