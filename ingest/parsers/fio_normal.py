"""fio 3.x normal (human) output (docs/parsers/fio.md).

Each job block starts ``name: (groupid=0, jobs=1): err= 0: ...``; each direction line
``read: IOPS=10.9k, BW=42.6MiB/s (44.7MB/s)(85.3MiB/2001msec)`` starts that direction's
values. Units are printed per line and differ from line to line and run to run (``clat
(nsec)`` for one job, ``(usec)`` for the next; ``max=5317.1k`` nsec): each value is
converted with the unit of its own line, to us and KiB/s, exactly. fio 2.x's ``read :
io=..., bw=...KB/s`` lines are refused: their KB is ambiguous. Client/server runs prefix
lines with ``<host> ``, which is stripped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from ingest.parsers.base import Better, Histogram, Measurement, ParseError, ParseResult, Record
from ingest.parsers.fio_common import BW_UNITS, LAT_UNITS, exact, measurement, percentile_name
from ingest.parsers.text import numbered_lines

_JOB = re.compile(
    r"^(?P<job>\S.*?): \(groupid=(?P<group>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>\d+)"
)
_DIR = re.compile(
    r"^\s*(?P<dir>read|write|trim|mixed)\s*: IOPS=(?P<iops>[\d.]+[kM]?), "
    r"BW=(?P<bw>[\d.]+)(?P<bwu>B|KiB|MiB|GiB|TiB)/s \([^)]*\)"
    r"\((?P<io>[\d.]+)(?P<iou>B|KiB|MiB|GiB|TiB)/(?P<rt>\d+)msec\)"
)
_OLD = re.compile(r"^\s*(?:read|write|trim|mixed)\s*: io=")
_LAT = re.compile(r"^\s*(?P<kind>slat|clat|lat) \((?P<unit>nsec|usec|msec)\): (?P<rest>min=.*)$")
_PCT_HEAD = re.compile(r"^\s*(?P<kind>clat|lat|slat) percentiles \((?P<unit>nsec|usec|msec)\):")
_PCT = re.compile(r"(\d+\.\d+)th=\[\s*(\d+)\]")
_BW = re.compile(r"^\s*bw \(\s*(?P<unit>B|KiB|MiB|GiB|TiB)/s\): (?P<rest>min=.*)$")
_IOPS = re.compile(r"^\s*iops\s*: (?P<rest>min=.*)$")
_DIST = re.compile(r"^\s*lat \((?P<unit>nsec|usec|msec)\)\s+: (?P<rest>.*)$")
_CPU = re.compile(r"^\s*cpu\s*: (?P<rest>usr=.*)$")
_HOST = re.compile(r"^<[^>\s]+> ")
_PAIRS = re.compile(r"\w+|>=\d+")
_CPU_NAMES = {"usr": "cpu_usr_pct", "sys": "cpu_sys_pct", "ctx": "ctx_switches"}
_CPU_NAMES |= {"majf": "major_faults", "minf": "minor_faults"}


@dataclass
class _Job:
    name: str
    line: int
    directions: dict[str, tuple[int, list[Measurement]]] = field(default_factory=dict)
    totals: list[Measurement] = field(default_factory=list)
    buckets: list[tuple[float, float]] = field(default_factory=list)


def _pairs(rest: str, number: int) -> dict[str, str]:
    """``min=42, max=3355, avg=77.79`` -> dict; split on ', ' so '77,79' stays one bad value."""
    pairs = {}
    for part in rest.strip().rstrip(",").split(", "):
        name, sep, value = part.partition("=")
        if not sep or not _PAIRS.fullmatch(name.strip()):
            raise ParseError(f"{part.strip()!r} is not name=value", number)
        pairs[name.strip()] = value.strip()
    if not pairs:
        raise ParseError(f"no name=value pairs in {rest.strip()[:50]!r}", number)
    return pairs


def _direction(match: re.Match[str], number: int) -> list[Measurement]:
    iops = exact(match["iops"], line=number, what="IOPS", suffix=True)
    bw = exact(match["bw"], line=number, what="BW") * BW_UNITS[match["bwu"]]
    io = exact(match["io"], line=number, what="io") * BW_UNITS[match["iou"]]
    return [
        measurement("iops", iops, "IOPS", "higher"),
        measurement("bw_kib_s", bw, "KiB/s", "higher"),
        measurement("io_kib", io, "KiB", "none"),
        measurement("runtime_ms", Decimal(match["rt"]), "ms", "none"),
    ]


def _stats(kind: str, unit: str, rest: str, number: int) -> list[Measurement]:
    pairs = _pairs(rest, number)
    names = {"min": "min", "max": "max", "avg": "mean", "stdev": "stddev"}
    missing = [key for key in names if key not in pairs]
    if missing:
        raise ParseError(f"{kind} line lacks {', '.join(missing)}", number)
    return [
        measurement(
            f"{kind}_{name}_us",
            exact(pairs[key], line=number, what=f"{kind} {key}", suffix=True) * LAT_UNITS[unit],
            "us",
            "lower",
        )
        for key, name in names.items()
    ]


def _samples(prefix: str, unit: str, factor: Decimal, rest: str, number: int) -> list[Measurement]:
    pairs = _pairs(rest, number)
    out = []
    for key, name in (("min", "min"), ("max", "max"), ("avg", "mean"), ("stdev", "stddev")):
        if key in pairs:
            value = exact(pairs[key], line=number, what=f"{prefix} {key}") * factor
            better: Better = "lower" if key == "stdev" else "higher"
            out.append(
                measurement(
                    f"{prefix}_{name}{unit and '_' + unit}",
                    value,
                    unit and "KiB/s" or "IOPS",
                    better,
                )
            )
    if "per" in pairs:
        per = exact(pairs["per"].rstrip("%"), line=number, what=f"{prefix} per")
        out.append(measurement("bw_agg_pct", per, "%", "none"))
    if "samples" in pairs:
        count = exact(pairs["samples"], line=number, what=f"{prefix} samples")
        out.append(measurement(f"{prefix}_samples", count, "count", "none"))
    return out


def _percentiles(
    kind: str, unit: str, lines: list[tuple[int, str]], start: int
) -> tuple[list[Measurement], int]:
    """The ``|  1.00th=[   53], ...`` lines after a percentiles header."""
    out = []
    i = start
    while i < len(lines) and lines[i][1].lstrip().startswith("|"):
        number, text = lines[i]
        for pct, value in _PCT.findall(text):
            us = exact(value, line=number, what=f"{kind} percentile {pct}") * LAT_UNITS[unit]
            out.append(measurement(percentile_name(kind, pct, line=number), us, "us", "lower"))
        i += 1
    if not out:
        raise ParseError(
            f"{kind} percentiles header without '|  P.th=[v]' lines", lines[start - 1][0]
        )
    return out, i


def _bucket(job: _Job, unit: str, rest: str, number: int) -> None:
    for bound, pct in _pairs(rest, number).items():
        value = exact(pct.rstrip("%"), line=number, what=f"lat bucket {bound}")
        if bound.startswith(">="):
            job.totals.append(measurement("lat_over_2000ms_pct", value, "%", "lower"))
        else:
            us = exact(bound, line=number, what="lat bucket") * LAT_UNITS[unit]
            job.buckets.append((float(us), float(value)))


def _line(
    job: _Job, current: list[Measurement] | None, lines: list[tuple[int, str]], i: int
) -> int:
    """Read the value line at ``i`` into the job; return the index of the next line."""
    number, text = lines[i]
    if current is not None and (m := _LAT.match(text)):
        current += _stats(m["kind"], m["unit"], m["rest"], number)
    elif current is not None and (m := _PCT_HEAD.match(text)):
        values, end = _percentiles(m["kind"], m["unit"], lines, i + 1)
        current += values
        return end
    elif current is not None and (m := _BW.match(text)):
        current += _samples("bw", "kib_s", BW_UNITS[m["unit"]], m["rest"], number)
    elif current is not None and (m := _IOPS.match(text)):
        current += _samples("iops", "", Decimal(1), m["rest"], number)
    elif m := _DIST.match(text):
        _bucket(job, m["unit"], m["rest"], number)
    elif m := _CPU.match(text):
        for key, value in _pairs(m["rest"], number).items():
            if key in _CPU_NAMES:
                amount = exact(value.rstrip("%"), line=number, what=f"cpu {key}")
                unit = "%" if value.endswith("%") else "count"
                job.totals.append(measurement(_CPU_NAMES[key], amount, unit, "none"))
    return i + 1


def _jobs(lines: list[tuple[int, str]]) -> list[_Job]:
    jobs: list[_Job] = []
    current: list[Measurement] | None = None
    i = 0
    while i < len(lines):
        number, text = lines[i]
        if m := _JOB.match(text):
            jobs.append(_Job(m["job"], number))
            current = None
        elif _OLD.match(text):
            raise ParseError("fio 2.x normal output ('read : io=...') is not supported", number)
        elif jobs and (m := _DIR.match(text)):
            if m["dir"] in jobs[-1].directions:
                raise ParseError(f"second {m['dir']} line in job {jobs[-1].name!r}", number)
            current = _direction(m, number)
            jobs[-1].directions[m["dir"]] = (number, current)
        elif re.match(r"^\s*(?:read|write|trim|mixed)\s*: IOPS=", text):
            raise ParseError(f"unreadable direction line {text.strip()[:70]!r}", number)
        elif text.startswith(("Run status group", "Disk stats")):
            current = None
        elif jobs:
            i = _line(jobs[-1], current, lines, i)
            continue
        i += 1
    return jobs


def parse_normal(text: str) -> ParseResult:
    lines = [(n, _HOST.sub("", line)) for n, line in numbered_lines(text)]
    jobs = _jobs(lines)
    records = []
    for job in jobs:
        for direction, (number, values) in job.directions.items():
            keys = {"job": job.name, "direction": direction}
            records.append(Record(keys=keys, line=number, measurements=tuple(values)))
        label = "latency bucket upper bound (us)"
        histograms = (
            (Histogram("latency_distribution_pct", label, tuple(job.buckets)),)
            if job.buckets
            else ()
        )
        if job.totals or histograms:
            records.append(
                Record(
                    keys={"job": job.name},
                    line=job.line,
                    measurements=tuple(job.totals),
                    histograms=histograms,
                )
            )
    if not any(r.keys.get("direction") for r in records):
        raise ParseError("no fio job block with a 'read: IOPS=' / 'write: IOPS=' line")
    metadata: dict[str, str | int | float] = {"format": "normal"}
    version = next((t.strip() for _, t in lines if re.match(r"^fio-\d", t.strip())), None)
    if version:
        metadata["fio_version"] = version
    return ParseResult(records=tuple(records), metadata=metadata)
