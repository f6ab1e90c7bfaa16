"""netperf 2.x results: STREAM, UDP_STREAM and request/response tests (docs/parsers/netperf.md).

A test is a banner (``... TEST from ...``), a header whose last line carries the units, a
blank line, then the result row(s). Columns are taken by position per test family, because
netperf's header words are spread over 3-5 wrapped lines. Several banners in one file are
concurrent instances (the lkp layout): throughputs are summed, utilisation and service demand
averaged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_BANNER = re.compile(r"^(?:MIGRATED\s+)?(?P<test>.+?)\s+TEST\b")
_NUMERIC = re.compile(r"^[-+]?[\d.,]+(?:[eE][-+]?\d+)?$")
_UNIT = re.compile(r"^(?P<scale>10\^[0369]bits|[KMG]Bytes|bits)/s(?:ec)?$")

# Throughput units netperf prints (-f k/m/g use powers of ten, K/M/G powers of two), in Mbit/s.
TO_MBIT = {
    "bits": 1e-6,
    "10^0bits": 1e-6,
    "10^3bits": 1e-3,
    "10^6bits": 1.0,
    "10^9bits": 1e3,
    "KBytes": 1024 * 8 / 1e6,
    "MBytes": 1024**2 * 8 / 1e6,
    "GBytes": 1024**3 * 8 / 1e6,
}


@dataclass
class _Test:
    name: str
    family: str  # "stream", "udp_stream" or "rr"
    line: int
    unit: str | None = None
    rows: list[tuple[int, list[float]]] = field(default_factory=list)


def _family(name: str, line: int) -> str:
    upper = name.upper()
    if "REQUEST/RESPONSE" in upper or "_RR" in upper:
        return "rr"
    if "UDP" in upper and "STREAM" in upper:
        return "udp_stream"
    if any(word in upper for word in ("STREAM", "MAERTS", "SENDFILE")):
        return "stream"
    raise ParseError(f"unsupported netperf test {name!r}", line)


def _row(line: str, number: int, warnings: list[str]) -> list[float] | None:
    """Leading numbers of a result row; trailing annotations are dropped with a warning."""
    tokens = line.split()
    if not tokens or not _NUMERIC.match(tokens[0]):
        return None
    numbers = []
    for position, token in enumerate(tokens):
        if not _NUMERIC.match(token):
            warnings.append(f"line {number}: ignored annotation {' '.join(tokens[position:])!r}")
            break
        numbers.append(parse_number(token, line=number, what="netperf value"))
    return numbers


def _read_tests(text: str, warnings: list[str]) -> list[_Test]:
    """Header lines never start with a number, so the first numeric line after a banner is
    the first result row; a blank or text line after the rows ends the test."""
    tests: list[_Test] = []
    current: _Test | None = None
    for number, line in numbered_lines(text):
        banner = _BANNER.match(line.strip())
        if banner:
            current = _Test(banner["test"], _family(banner["test"], number), number)
            tests.append(current)
            continue
        if current is None:
            continue
        row = _row(line, number, warnings)
        if row is not None:
            current.rows.append((number, row))
        elif current.rows:
            current = None
        else:
            units = [m["scale"] for token in line.split() if (m := _UNIT.match(token))]
            current.unit = units[0] if units else current.unit
    return tests


def _stream(test: _Test) -> dict[str, float]:
    number, row = test.rows[0]
    if len(row) not in (5, 9):
        raise ParseError(f"{test.name} result row has {len(row)} numbers, expected 5 or 9", number)
    values = {"throughput_mbit": row[4] * _scale(test, number)}
    if len(row) == 9:
        values |= _cpu(row[5:9], "kb")
    return values


def _udp(test: _Test) -> dict[str, float]:
    if len(test.rows) < 2:
        raise ParseError(f"{test.name}: the receiver row is missing", test.rows[0][0])
    (send_line, send), (recv_line, recv) = test.rows[:2]
    if len(send) not in (6, 8) or len(recv) not in (4, 6):
        raise ParseError(
            f"{test.name} rows have {len(send)} and {len(recv)} numbers, "
            "expected 6 or 8 (sender) and 4 or 6 (receiver)",
            send_line,
        )
    values = {
        "throughput_mbit": send[5] * _scale(test, send_line),
        "throughput_recv_mbit": recv[3] * _scale(test, recv_line),
    }
    if len(send) == 8:
        values |= {"cpu_util_local_pct": send[6], "service_demand_local_us_per_kb": send[7]}
    if len(recv) == 6:
        values |= {"cpu_util_remote_pct": recv[4], "service_demand_remote_us_per_kb": recv[5]}
    return values


def _rr(test: _Test) -> dict[str, float]:
    number, row = test.rows[0]
    if len(row) not in (6, 10):
        raise ParseError(f"{test.name} result row has {len(row)} numbers, expected 6 or 10", number)
    values = {"transactions_per_s": row[5]}
    if len(row) == 10:
        values |= _cpu(row[6:10], "tr")
    return values


def _cpu(columns: list[float], per: str) -> dict[str, float]:
    local_util, remote_util, local_sd, remote_sd = columns
    return {
        "cpu_util_local_pct": local_util,
        "cpu_util_remote_pct": remote_util,
        f"service_demand_local_us_per_{per}": local_sd,
        f"service_demand_remote_us_per_{per}": remote_sd,
    }


def _scale(test: _Test, line: int) -> float:
    if test.unit is None:
        raise ParseError(f"{test.name}: no throughput unit (e.g. 10^6bits/sec) in the header", line)
    return TO_MBIT[test.unit]


METRICS = {
    "throughput_mbit": ("Mbit/s", "higher"),
    "throughput_recv_mbit": ("Mbit/s", "higher"),
    "transactions_per_s": ("trans/s", "higher"),
    "cpu_util_local_pct": ("%", "none"),
    "cpu_util_remote_pct": ("%", "none"),
    "service_demand_local_us_per_kb": ("us/KB", "lower"),
    "service_demand_remote_us_per_kb": ("us/KB", "lower"),
    "service_demand_local_us_per_tr": ("us/Tr", "lower"),
    "service_demand_remote_us_per_tr": ("us/Tr", "lower"),
}
_SUMMED = {"throughput_mbit", "throughput_recv_mbit", "transactions_per_s"}


@register("netperf")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    warnings: list[str] = []
    tests = _read_tests(text, warnings)
    if not tests:
        raise ParseError("no netperf test banner ('... TEST from ...') found")
    names = sorted({test.name for test in tests})
    if len(names) > 1:
        raise ParseError(f"several netperf tests in one file ({'; '.join(names)}): split it")
    readers = {"stream": _stream, "udp_stream": _udp, "rr": _rr}
    per_instance = []
    for test in tests:
        if not test.rows:
            raise ParseError(f"{test.name}: banner without a result row", test.line)
        per_instance.append(readers[test.family](test))
    measurements = []
    for metric, (unit, better) in METRICS.items():
        values = [instance[metric] for instance in per_instance if metric in instance]
        if not values:
            continue
        total = sum(values) if metric in _SUMMED else sum(values) / len(values)
        measurements.append(Measurement(metric, total, unit, better))  # type: ignore[arg-type]
    metadata: dict[str, str | int | float] = {"test": names[0], "instances": len(tests)}
    if tests[0].unit:
        metadata["unit_printed"] = tests[0].unit
    return ParseResult(
        measurements=tuple(measurements), warnings=tuple(warnings), metadata=metadata
    )
