"""ingest/parsers/sysstat_json.py: the sadf -j JSON document, values read by hand from fixtures."""

import json
from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser
from ingest.parsers.sysstat_json import parse_json
from tests.ingest.parsers.records import record

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "sysstat"
LABEL = "Linux 6.18.44-fc-v657"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def column(rec, name):
    return next(c for c in rec.columns if c.column == name)


def test_sadf_json_gives_the_text_records():
    result = get_parser("sar")(read("sadf-j-u-q.json"), {})
    cpu = record(result, label=LABEL, report="cpu", cpu="all")
    assert column(cpu, "%system").values == (42.27, 33.85, 51.49)
    assert column(cpu, "%system").timestamps[0] == "2026-11-24 15:34:56"
    queue = record(result, label=LABEL, report="queue")
    assert column(queue, "runq-sz").values == (2, 4, 5)


def test_sadf_json_mixed_reports():
    result = get_parser("sar")(read("sadf-j-mixed.json"), {})
    eth0 = record(result, label=LABEL, report="dev", iface="eth0")
    assert {c.column for c in eth0.columns} >= {"rxpck/s", "%ifutil"}
    task = record(result, label=LABEL, report="task")
    assert column(task, "cswch/s").values == (9674, 6939, 9693)
    cpu0 = record(result, label=LABEL, report="cpu", cpu="0")
    assert column(cpu0, "%user").values == (4.26, 5.32, 6.73)


def sadf(queue_load: object) -> str:
    """A two-entry sadf -j document (queue and an unnamed hugepages section)."""
    entries = [
        {
            "timestamp": {"date": "2026-11-24", "time": f"15:34:5{second}"},
            "queue": {"runq-sz": runq, "ldavg-1": load},
            "hugepages": {"hugfree": 0},
        }
        for second, runq, load in ((6, 2, 0.35), (7, 4, queue_load))
    ]
    host = {"nodename": "vm", "sysname": "Linux", "release": "6.1.0", "number-of-cpus": 2}
    return json.dumps({"sysstat": {"hosts": [{**host, "statistics": entries}]}})


def test_sections_are_series_and_unknown_ones_keep_sadf_names():
    result = parse_json(sadf(0.40), "sar")
    queue, huge = result.records
    assert queue.keys == {"label": "Linux 6.1.0", "report": "queue"}
    assert [(c.column, c.values) for c in queue.columns] == [
        ("runq-sz", (2.0, 4.0)),
        ("ldavg-1", (0.35, 0.4)),
    ]
    assert queue.columns[0].timestamps == ("2026-11-24 15:34:56", "2026-11-24 15:34:57")
    assert huge.keys == {"label": "Linux 6.1.0", "report": "hugepages"}
    assert result.warnings == ("sections kept with sadf's own names: hugepages",)
    assert result.metadata == {"host": "vm", "label": "Linux 6.1.0", "cpus": 2}


def test_a_value_that_is_no_number_is_refused_naming_where_it_is():
    with pytest.raises(ParseError) as err:
        parse_json(sadf("x"), "sar")
    assert err.value.message == (
        "sadf -j value queue.ldavg-1 at 2026-11-24 15:34:57 is 'x', not a number"
    )
