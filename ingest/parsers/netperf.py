"""netperf 2.x results: STREAM, UDP_STREAM and request/response tests (docs/parsers/netperf.md).

A test is a banner (``... TEST from ...``), a header whose last line carries the units, a
blank line, then the result row(s). Columns are taken by position per test family, because
netperf's header words are spread over 3-5 wrapped lines. Every banner is one Record keyed
by what the file states as its parameters (kernel label, test name, remote host, socket and
message sizes); repeats with equal keys are trials (base.group_records), never summed or
averaged, even when lkp started them concurrently (a warning says so). The printed elapsed
time is a measurement, not a key: it is measured (300.00 vs 300.01 for one configuration).
Throughput is converted to Mbit/s exactly (Decimal) from whatever unit the header prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    group_records,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import LabelScope, key_by_headings, warn_unlabelled_repeats
from ingest.parsers.text import numbered_lines

_BANNER = re.compile(r"^(?:MIGRATED\s+)?(?P<test>.+?)\s+TEST\b(?:.*?\bto\s+(?P<host>[^\s(]+))?")
_NUMERIC = re.compile(r"^[-+]?[\d.,]+(?:[eE][-+]?\d+)?$")
_UNIT = re.compile(r"^(?P<scale>10\^[0369](?:bits|Bytes)|[KMG]?Bytes|bits)/s(?:ec)?$")
_BACKGROUND = re.compile(r"\bnetperf\b.*&\s*$")

# Throughput units netperf prints, in Mbit/s: -f k/m/g are powers of ten of bits, -f K/M/G
# are 1024-based bytes (netperf's manual); 10^NBytes are powers of ten of bytes.
TO_MBIT = (
    {
        "bits": Decimal("1e-6"),
        "Bytes": Decimal("8e-6"),
        "KBytes": Decimal(1024 * 8) / Decimal(10**6),
        "MBytes": Decimal(1024**2 * 8) / Decimal(10**6),
        "GBytes": Decimal(1024**3 * 8) / Decimal(10**6),
    }
    | {f"10^{n}bits": Decimal(10**n) / Decimal(10**6) for n in (0, 3, 6, 9)}
    | {f"10^{n}Bytes": Decimal(10**n * 8) / Decimal(10**6) for n in (0, 3, 6, 9)}
)
METRICS = {
    "elapsed_s": ("s", "none"),
    "throughput_mbit": ("Mbit/s", "higher"),
    "throughput_recv_mbit": ("Mbit/s", "higher"),
    "transactions_per_s": ("trans/s", "higher"),
    "messages_sent": ("count", "none"),
    "send_errors": ("count", "lower"),
    "messages_received": ("count", "none"),
    "cpu_util_local_pct": ("%", "none"),
    "cpu_util_remote_pct": ("%", "none"),
    "service_demand_local_us_per_kb": ("us/KB", "lower"),
    "service_demand_remote_us_per_kb": ("us/KB", "lower"),
    "service_demand_local_us_per_tr": ("us/Tr", "lower"),
    "service_demand_remote_us_per_tr": ("us/Tr", "lower"),
}
Row = tuple[int, list[str]]  # line number, numeric tokens (validated)


@dataclass
class _Test:
    name: str
    family: str  # "stream", "udp_stream" or "rr"
    line: int
    host: str | None  # the banner's "to HOST"
    label: str | None  # the kernel label in force at the banner (run_labels.py)
    unit: str | None = None
    rows: list[Row] = field(default_factory=list)


def _family(name: str, line: int) -> str:
    upper = name.upper()
    if "REQUEST/RESPONSE" in upper or "_RR" in upper:
        return "rr"
    if "UDP" in upper and ("STREAM" in upper or "UNIDIRECTIONAL SEND" in upper):
        return "udp_stream"
    if any(word in upper for word in ("STREAM", "MAERTS", "SENDFILE")):
        return "stream"
    raise ParseError(f"unsupported netperf test {name!r}", line)


def _row(line: str, number: int, warnings: list[str]) -> list[str] | None:
    """Leading numbers of a result row; trailing annotations are dropped with a warning."""
    tokens = line.split()
    if not tokens or not _NUMERIC.match(tokens[0]):
        return None
    numbers = []
    for position, token in enumerate(tokens):
        if not _NUMERIC.match(token):
            warnings.append(f"line {number}: ignored annotation {' '.join(tokens[position:])!r}")
            break
        parse_number(token, line=number, what="netperf value")  # raises naming the line
        numbers.append(token)
    return numbers


def _read_tests(text: str, warnings: list[str], scope: LabelScope) -> tuple[list[_Test], int]:
    """Header lines never start with a number, so the first numeric line after a banner is
    the first result row; a blank or text line after the rows ends the test."""
    tests: list[_Test] = []
    current: _Test | None = None
    background = 0
    raw_lines = numbered_lines(text, unquote=False)
    for (number, line), (_, raw) in zip(numbered_lines(text), raw_lines, strict=True):
        background += bool(_BACKGROUND.search(line))
        if scope.read(raw, line, number, warnings):
            current = None
            continue
        banner = _BANNER.match(line.strip())
        if banner:
            family = _family(banner["test"], number)
            current = _Test(banner["test"], family, number, banner["host"], scope.label)
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
    return tests, background


def _num(token: str) -> float:
    return float(Decimal(token))


def _size(token: str, line: int) -> KeyValue:
    """A byte count as printed: an int when it is one."""
    value = parse_number(token, line=line, what="size")
    return int(value) if value.is_integer() else value


def _mbit(test: _Test, token: str, line: int) -> float:
    if test.unit is None:
        raise ParseError(f"{test.name}: no throughput unit (e.g. 10^6bits/sec) in the header", line)
    return float(Decimal(token) * TO_MBIT[test.unit])


def _cpu(columns: list[str], per: str) -> dict[str, float]:
    local_util, remote_util, local_sd, remote_sd = (_num(c) for c in columns)
    return {
        "cpu_util_local_pct": local_util,
        "cpu_util_remote_pct": remote_util,
        f"service_demand_local_us_per_{per}": local_sd,
        f"service_demand_remote_us_per_{per}": remote_sd,
    }


def _stream(test: _Test) -> tuple[dict[str, KeyValue], dict[str, float]]:
    number, row = test.rows[0]
    if len(row) not in (5, 9):
        raise ParseError(f"{test.name} result row has {len(row)} numbers, expected 5 or 9", number)
    keys = {
        "recv_socket_size": _size(row[0], number),
        "send_socket_size": _size(row[1], number),
        "message_size": _size(row[2], number),
    }
    values = {"elapsed_s": _num(row[3]), "throughput_mbit": _mbit(test, row[4], number)}
    if len(row) == 9:
        values |= _cpu(row[5:9], "kb")
    return keys, values


def _udp(test: _Test, warnings: list[str]) -> tuple[dict[str, KeyValue], dict[str, float]]:
    if len(test.rows) < 2:
        raise ParseError(f"{test.name}: the receiver row is missing", test.rows[0][0])
    (send_line, send), (recv_line, recv) = test.rows[:2]
    if len(send) not in (6, 8) or len(recv) not in (4, 6):
        raise ParseError(
            f"{test.name} rows have {len(send)} and {len(recv)} numbers, "
            "expected 6 or 8 (sender) and 4 or 6 (receiver)",
            send_line,
        )
    if _num(recv[1]) != _num(send[2]):
        warnings.append(f"line {recv_line}: receiver elapsed {recv[1]} s differs from the sender's")
    keys = {
        "send_socket_size": _size(send[0], send_line),
        "recv_socket_size": _size(recv[0], recv_line),
        "message_size": _size(send[1], send_line),
    }
    values = {
        "elapsed_s": _num(send[2]),
        "throughput_mbit": _mbit(test, send[5], send_line),
        "throughput_recv_mbit": _mbit(test, recv[3], recv_line),
        "messages_sent": _num(send[3]),
        "send_errors": _num(send[4]),
        "messages_received": _num(recv[2]),
    }
    if len(send) == 8:
        values |= {
            "cpu_util_local_pct": _num(send[6]),
            "service_demand_local_us_per_kb": _num(send[7]),
        }
    if len(recv) == 6:
        values |= {
            "cpu_util_remote_pct": _num(recv[4]),
            "service_demand_remote_us_per_kb": _num(recv[5]),
        }
    return keys, values


def _rr(test: _Test) -> tuple[dict[str, KeyValue], dict[str, float]]:
    number, row = test.rows[0]
    if len(row) not in (6, 10):
        raise ParseError(f"{test.name} result row has {len(row)} numbers, expected 6 or 10", number)
    keys = {
        "send_socket_size": _size(row[0], number),
        "recv_socket_size": _size(row[1], number),
        "request_size": _size(row[2], number),
        "response_size": _size(row[3], number),
    }
    if len(test.rows) > 1:  # the remote end's socket sizes
        remote_line, remote = test.rows[1]
        if len(remote) != 2:
            raise ParseError(
                f"{test.name}: remote socket row has {len(remote)} numbers, expected 2", remote_line
            )
        keys["remote_send_socket_size"] = _size(remote[0], remote_line)
        keys["remote_recv_socket_size"] = _size(remote[1], remote_line)
    values = {"elapsed_s": _num(row[4]), "transactions_per_s": _num(row[5])}
    if len(row) == 10:
        values |= _cpu(row[6:10], "tr")
    return keys, values


def _record(test: _Test, warnings: list[str]) -> Record:
    if not test.rows:
        raise ParseError(f"{test.name}: banner without a result row", test.line)
    if test.family == "stream":
        keys, values = _stream(test)
    elif test.family == "udp_stream":
        keys, values = _udp(test, warnings)
    else:
        keys, values = _rr(test)
    measurements = tuple(
        Measurement(metric, values[metric], unit, better)  # type: ignore[arg-type]
        for metric, (unit, better) in METRICS.items()
        if metric in values
    )
    stated: dict[str, KeyValue] = {"label": test.label} if test.label else {}
    stated["test"] = test.name
    if test.host:
        stated["remote_host"] = test.host
    return Record(keys=stated | keys, line=test.line, measurements=measurements)


def _own_line(line: str) -> bool:
    """netperf's banners and column headers are never headings."""
    return " TEST" in line or line.split()[:1] in (["Recv"], ["Socket"], ["Size"], ["bytes"])


@register("netperf")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    warnings: list[str] = []
    scope = LabelScope()
    tests, background = _read_tests(text, warnings, scope)
    if not tests:
        raise ParseError("no netperf test banner ('... TEST from ...') found")
    records = [_record(test, warnings) for test in tests]
    # "TCP RAW throughput ... [iptables]:" / "... [nf-hipac]:" above equal tests: other runs.
    records = key_by_headings(records, numbered_lines(text), warnings, skip=_own_line)
    groups = group_records(records)
    if background > 1 and any(len(g.trials) > 1 for g in groups):
        warnings.append(
            f"{background} netperf commands were started in the background ('&'): the tests "
            "ran concurrently; each is stored as a trial, not summed"
        )
    else:
        warn_unlabelled_repeats(records, scope, warnings)
    metadata: dict[str, str | int | float] = {}
    units = {test.unit for test in tests if test.unit}
    if len(units) == 1:
        metadata["unit_printed"] = units.pop()
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
