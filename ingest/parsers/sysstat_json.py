"""The JSON document of ``sadf -j`` (sysstat 10+): hosts -> statistics -> one entry a time.

Each statistics entry holds a section per sar report (``cpu-load``, ``queue``,
``network``/``net-dev`` ...), a list when the report has a row per CPU, device or interface.
The well-known reports are given sar's text names (report ``cpu``, column ``%user``, ``rxpck/s``)
so a text and a JSON file of the same run give the same records; other sections keep sadf's
names. Numbers are read as Decimal, so the stored value is exactly the printed one.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ingest.parsers.base import KeyValue, ParseError, ParseResult
from ingest.parsers.sysstat_common import Series, result

# sadf section (nested sections joined with '/') -> (sar's report name, how columns are named)
SECTIONS = {
    "cpu-load": ("cpu", "percent"),
    "cpu-load-all": ("cpu", "percent"),
    "queue": ("queue", "plain"),
    "process-and-context-switch": ("task", "rate"),
    "network/net-dev": ("dev", "rate"),
    "network/net-edev": ("edev", "rate"),
    "paging": ("paging", "rate"),
    "swap-pages": ("swapping", "rate"),
    "disk": ("disk", "rate"),
}
# the field naming a list entry -> record key
ENTRY_KEYS = {
    "cpu": "cpu", "iface": "iface", "disk-device": "device", "intr": "intr", "line": "tty",
    "filesystem": "filesystem", "number": "cpu",
}  # fmt: skip
_ALREADY_RATES = {"tps", "rtps", "wtps", "dtps", "areq-sz", "avgrq-sz", "avgqu-sz", "aqu-sz",
                  "await"}  # fmt: skip


def _column(field: str, naming: str) -> str:
    """sadf's field name as sar's text header prints it (``user`` -> ``%user``)."""
    if field.endswith("-percent"):
        return "%" + field.removesuffix("-percent")
    if naming == "percent":
        return "%" + field
    if naming == "rate" and field not in _ALREADY_RATES:
        return field + "/s"
    return field


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ParseError(f"sadf -j value {where} is {value!r}, not a number")
    return float(value)


class _Json:
    def __init__(self) -> None:
        self.series: dict[tuple[tuple[str, KeyValue], ...], Series] = {}
        self.warnings: list[str] = []
        self.unnamed: set[str] = set()

    def section(self, base: dict[str, KeyValue], path: str, body: Any, stamp: str) -> None:
        if isinstance(body, dict) and any(isinstance(v, dict | list) for v in body.values()):
            for name, sub in body.items():
                if isinstance(sub, dict | list):
                    self.section(base, f"{path}/{name}", sub, stamp)
            body = {k: v for k, v in body.items() if not isinstance(v, dict | list)}
            if not body:
                return
        report, naming = SECTIONS.get(path, (path, "plain"))
        if path not in SECTIONS:
            self.unnamed.add(path)
        entries = body if isinstance(body, list) else [body]
        for entry in entries:
            if not isinstance(entry, dict):
                raise ParseError(f"sadf -j section {path} at {stamp} is not an object")
            keys: dict[str, KeyValue] = {**base, "report": report}
            fields = dict(entry)
            for name, key in ENTRY_KEYS.items():
                if name in fields and isinstance(body, list):
                    keys[key] = str(fields.pop(name))
                    break
            values = {
                _column(f, naming): _number(v, f"{path}.{f} at {stamp}") for f, v in fields.items()
            }
            identity = tuple(keys.items())
            if identity not in self.series:
                self.series[identity] = Series(keys, None)
            self.series[identity].add(stamp, values, None)


def parse_json(text: str, source: str) -> ParseResult:
    """Records from every host and every statistics entry of a ``sadf -j`` document."""
    try:
        document = json.loads(text, parse_float=Decimal)
        hosts = document["sysstat"]["hosts"]
    except (ValueError, KeyError, TypeError) as error:
        raise ParseError(f"not a sadf -j document (sysstat -> hosts): {error}") from None
    reader = _Json()
    metadata: dict[str, str | int | float] = {}
    for host in hosts:
        label = f"{host.get('sysname', 'Linux')} {host.get('release', '')}".strip()
        base: dict[str, KeyValue] = {"label": label}
        if len(hosts) > 1:
            base["host"] = str(host.get("nodename", ""))
        metadata.setdefault("host", str(host.get("nodename", "")))
        metadata.setdefault("label", label)
        if isinstance(host.get("number-of-cpus"), int):
            metadata.setdefault("cpus", host["number-of-cpus"])
        for entry in host.get("statistics", []):
            stamp_fields = entry.get("timestamp", {})
            stamp = f"{stamp_fields.get('date', '')} {stamp_fields.get('time', '')}".strip()
            for path, body in entry.items():
                if path != "timestamp":
                    reader.section(base, path, body, stamp)
    warnings = reader.warnings
    if reader.unnamed:
        warnings.append("sections kept with sadf's own names: " + ", ".join(sorted(reader.unnamed)))
    return result(list(reader.series.values()), source, warnings, metadata)
