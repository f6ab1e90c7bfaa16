"""fio terse (``--minimal`` / ``--output-format=terse``) lines, versions 3, 4 and 5.

Field order from fio's HOWTO "Terse output": version, fio version, job name, group, error;
then per direction (read, write, and trim from v4) io KiB, bw KiB/s, IOPS, runtime ms,
slat/clat min max mean stdev (us), 20 clat percentile fields ``P%=us``, total latency, bw
min max agg% mean stdev (v5 adds bw samples and five IOPS fields); then CPU, I/O depths,
latency buckets and 9 fields per disk. The version field picks the layout; a line whose field
count does not fit it is an error naming the line.
"""

from __future__ import annotations

from decimal import Decimal

from ingest.parsers.base import Histogram, Measurement, ParseError, ParseResult, Record
from ingest.parsers.fio_common import exact, measurement, percentile_name
from ingest.parsers.text import numbered_lines

_HEAD = ("io_kib", "bw_kib_s", "iops", "runtime_ms")
_HEAD_UNITS = {
    "io_kib": ("KiB", "none"),
    "bw_kib_s": ("KiB/s", "higher"),
    "iops": ("IOPS", "higher"),
    "runtime_ms": ("ms", "none"),
}
_BW = ("bw_min_kib_s", "bw_max_kib_s", "bw_agg_pct", "bw_mean_kib_s", "bw_stddev_kib_s")
_BW_V5 = (*_BW, "bw_samples")
_IOPS_V5 = ("iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples")
_UNITS = {
    "bw_agg_pct": ("%", "none"),
    "bw_samples": ("count", "none"),
    "iops_samples": ("count", "none"),
    "bw_stddev_kib_s": ("KiB/s", "lower"),
    "iops_stddev": ("IOPS", "lower"),
}
_CPU = (
    ("cpu_usr_pct", "%"),
    ("cpu_sys_pct", "%"),
    ("ctx_switches", "count"),
    ("major_faults", "count"),
    ("minor_faults", "count"),
)
_BUCKETS_US = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_BUCKETS_MS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)
_DISK = ("read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks")


def _direction_size(version: int) -> int:
    return 41 if version < 5 else 47


class _Fields:
    """The fields of one terse line, read in order; errors name the line and the field."""

    def __init__(self, tokens: list[str], line: int):
        self.tokens, self.line, self.pos = tokens, line, 0

    def take(self, what: str) -> str:
        if self.pos >= len(self.tokens):
            raise ParseError(f"terse line ends before field {what}", self.line)
        self.pos += 1
        return self.tokens[self.pos - 1]

    def number(self, what: str) -> Decimal:
        return exact(self.take(what).rstrip("%"), line=self.line, what=what)


def _latency(fields: _Fields, prefix: str) -> list[Measurement]:
    values = [fields.number(f"{prefix} {n}") for n in ("min", "max", "mean", "stddev")]
    if not any(values):  # all zero: fio did not measure it (slat with sync engines)
        return []
    return [
        measurement(f"{prefix}_{name}_us", value, "us", "lower")
        for name, value in zip(("min", "max", "mean", "stddev"), values, strict=True)
    ]


def _percentiles(fields: _Fields) -> list[Measurement]:
    out = []
    for index in range(20):
        token = fields.take(f"clat percentile {index + 1}")
        pct, sep, value = token.partition("=")
        if not sep or not pct.endswith("%"):
            raise ParseError(f"clat percentile field {token!r} is not 'P%=value'", fields.line)
        if pct == "0%":  # fio fills unused percentile slots with 0%=0
            continue
        us = exact(value, line=fields.line, what=f"clat percentile {pct}")
        out.append(measurement(percentile_name("clat", pct, line=fields.line), us, "us", "lower"))
    return out


def _direction(fields: _Fields, version: int) -> list[Measurement]:
    out = []
    for name in _HEAD:
        unit, better = _HEAD_UNITS[name]
        out.append(measurement(name, fields.number(name), unit, better))  # type: ignore[arg-type]
    out += _latency(fields, "slat")
    out += _latency(fields, "clat")
    out += _percentiles(fields)
    out += _latency(fields, "lat")
    for name in _BW if version < 5 else (*_BW_V5, *_IOPS_V5):
        unit, better = _UNITS.get(name, ("IOPS" if "iops" in name else "KiB/s", "higher"))
        out.append(measurement(name, fields.number(name), unit, better))  # type: ignore[arg-type]
    return out


def _job_tail(fields: _Fields) -> tuple[list[Measurement], list[Histogram]]:
    values = [measurement(name, fields.number(name), unit, "none") for name, unit in _CPU]
    for depth in ("1", "2", "4", "8", "16", "32", "64"):
        values.append(
            measurement(f"iodepth_{depth}_pct", fields.number(f"iodepth {depth}"), "%", "none")
        )
    bins = [(float(b), float(fields.number(f"lat {b}us"))) for b in _BUCKETS_US]
    bins += [(float(b * 1000), float(fields.number(f"lat {b}ms"))) for b in _BUCKETS_MS]
    values.append(measurement("lat_over_2000ms_pct", fields.number("lat >=2000ms"), "%", "lower"))
    label = "latency bucket upper bound (us)"
    return values, [Histogram("latency_distribution_pct", label, tuple(bins))]


def _disks(fields: _Fields, job: str, warnings: list[str]) -> list[Record]:
    """Disk utilisation as fio appends it to each job's line (so keyed by job too)."""
    records = []
    while len(fields.tokens) - fields.pos >= 9 and not fields.tokens[fields.pos][:1].isdigit():
        name = fields.take("disk name")
        values = [
            measurement(f"disk_{k}", fields.number(f"disk {k}"), "count", "none") for k in _DISK
        ]
        values.append(measurement("disk_in_queue", fields.number("disk in_queue"), "count", "none"))
        values.append(measurement("disk_util_pct", fields.number("disk util"), "%", "none"))
        records.append(
            Record(keys={"job": job, "disk": name}, line=fields.line, measurements=tuple(values))
        )
    rest = fields.tokens[fields.pos :]
    if any(token.strip() for token in rest):
        warnings.append(f"line {fields.line}: trailing fields not read: {';'.join(rest)[:60]!r}")
    return records


def _line(tokens: list[str], number: int, warnings: list[str]) -> tuple[list[Record], str]:
    fields = _Fields(tokens, number)
    version = int(fields.take("terse version"))
    if version not in (3, 4, 5):
        raise ParseError(f"terse version {version} is not supported (3, 4, 5 are)", number)
    fio_version = fields.take("fio version")
    job = fields.take("job name")
    fields.take("group id")
    error = fields.take("error")
    if error != "0":
        warnings.append(f"line {number}: job {job!r} reports error {error}")
    needed = 5 + _direction_size(version) * (2 if version == 3 else 3) + 34
    if len(tokens) < needed:
        raise ParseError(
            f"terse v{version} line has {len(tokens)} fields; at least {needed} expected", number
        )
    records = []
    for direction in ("read", "write", "trim")[: 2 if version == 3 else 3]:
        values = _direction(fields, version)
        if values[0].value or values[2].value:  # io_kib or iops: the direction did I/O
            keys = {"job": job, "direction": direction}
            records.append(Record(keys=keys, line=number, measurements=tuple(values)))
    totals, histograms = _job_tail(fields)
    records.append(
        Record(
            keys={"job": job}, line=number, measurements=tuple(totals), histograms=tuple(histograms)
        )
    )
    return records + _disks(fields, job, warnings), fio_version


def parse_terse(text: str) -> ParseResult:
    records: list[Record] = []
    warnings: list[str] = []
    versions = set()
    for number, line in numbered_lines(text):
        stripped = line.strip()
        if stripped[:2] not in ("3;", "4;", "5;", "2;") or stripped.count(";") < 40:
            continue
        found, version = _line(stripped.split(";"), number, warnings)
        records += found
        versions.add(version)
    if not records:
        raise ParseError("no fio terse line (version;fio-x.y;job;...)")
    metadata: dict[str, str | int | float] = {"format": "terse"}
    if len(versions) == 1:
        metadata["fio_version"] = versions.pop()
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
