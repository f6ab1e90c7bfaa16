"""netperf: every banner is a record keyed by its parameters; nothing is summed or averaged.

Expected values are read by hand from the fixtures (see netperf/SOURCES.md).
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "netperf"
parse = get_parser("netperf")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def metric(records, name: str) -> list[float]:
    return [values(r)[name] for r in records]


def test_three_nics_tcp_and_udp_streams():
    result = parse(read("lkml-nussbaum-tcp-udp-three-nics.txt"), {})
    tcp, udp = result.records[:3], result.records[3:]
    assert [r.line for r in result.records] == [75, 83, 91, 99, 108, 117]
    assert dict(tcp[0].keys) == {
        "test": "TCP STREAM",
        "remote_host": "172.36.1.1",
        "recv_socket_size": 87380,
        "send_socket_size": 16384,
        "message_size": 16384,
    }
    assert metric(tcp, "throughput_mbit") == [0.59, 8.54, 0.56]
    assert metric(tcp, "elapsed_s") == [20.18, 20.04, 20.05]
    assert dict(udp[1].keys) == {
        "test": "UDP UNIDIRECTIONAL SEND",
        "remote_host": "172.37.1.1",
        "send_socket_size": 65535,
        "recv_socket_size": 65535,
        "message_size": 1472,
    }
    assert metric(udp, "elapsed_s") == [20.00, 19.99, 20.00]
    assert metric(udp, "throughput_mbit") == [9.44, 9.03, 9.43]
    assert metric(udp, "throughput_recv_mbit") == [8.96, 9.03, 9.18]
    assert metric(udp, "messages_sent") == [16027, 15326, 16008]
    assert metric(udp, "messages_received") == [15216, 15326, 15593]
    assert metric(udp, "send_errors") == [0, 0, 0]
    assert len(group_records(result.records)) == 6  # three hosts: nothing is a trial
    assert result.metadata["unit_printed"] == "10^6bits"


def test_three_runs_with_annotations_and_unit_spellings():
    # 10^6bits/s in the first header, 10^6bits/sec in the others. The three runs differ only
    # by the titles above them (no rules, 10000 rules with iptables, with nf-hipac): three
    # runs keyed by heading, never trials of one (88.03 and 3.28 are not repeats).
    result = parse(read("lkml-nibali-tcp-stream-three-runs.txt"), {})
    assert metric(result.records, "throughput_mbit") == [88.03, 3.28, 85.78]
    assert metric(result.records, "elapsed_s") == [60.01, 60.12, 60.03]
    groups = group_records(result.records)
    assert [len(g.trials) for g in groups] == [1, 1, 1]
    assert groups[0].keys["heading"] == "TCP RAW throughput 100Mbit/s max MTU"
    assert str(groups[2].keys["heading"]).endswith("FORWARD chain [nf-hipac]")
    annotations = tuple(f"line {n}: ignored annotation '<------'" for n in (55, 69, 83))
    assert result.warnings[:3] == annotations
    assert "told apart by the heading" in result.warnings[3]


def test_concurrent_udp_instances_are_trials_not_a_sum():
    result = parse(read("lkp-fixture-netperf-recv.txt"), {})
    (group,) = group_records(result.records)
    assert len(group.trials) == 16
    first = values(result.records[0])
    assert first["throughput_mbit"] == 63577.2
    assert first["throughput_recv_mbit"] == 61689.4
    assert first["cpu_util_local_pct"] == 24.11
    assert first["service_demand_local_us_per_kb"] == 3.977
    assert first["service_demand_remote_us_per_kb"] == 3.977
    assert values(result.records[1])["throughput_mbit"] == 62453.1
    assert group.keys["test"] == "UDP STREAM"  # the MIGRATED banner
    assert "16 netperf commands were started in the background" in result.warnings[0]


def test_sctp_stream_with_cpu_columns_and_an_odd_elapsed():
    result = parse(read("lkp-fixture-netperf.txt"), {})
    assert len(result.records) == 64
    assert values(result.records[0]) == {
        "elapsed_s": 300.00,
        "throughput_mbit": 7572.02,
        "cpu_util_local_pct": 32.07,
        "cpu_util_remote_pct": 32.07,
        "service_demand_local_us_per_kb": 44.406,
        "service_demand_remote_us_per_kb": 44.406,
    }
    # one instance ran 300.01 s (line 402): elapsed is measured, not a key, so it stays a
    # trial of the one configuration
    odd = [r for r in result.records if values(r)["elapsed_s"] == 300.01]
    assert [(r.line, values(r)["throughput_mbit"]) for r in odd] == [(396, 8255.00)]
    assert [len(g.trials) for g in group_records(result.records)] == [64]


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("10^6bits/sec", 88.03),
        ("10^3bits/s", 0.08803),
        ("10^9bits/sec", 88030),
        ("MBytes/sec", 738.44916224),  # 88.03 * 1048576 * 8 / 1e6, exactly
        ("KBytes/sec", 0.72114176),  # 88.03 * 1024 * 8 / 1e6
        ("10^3Bytes/sec", 0.70424),  # 88.03 * 1000 * 8 / 1e6
    ],
)
def test_unit_variants_convert_exactly(unit, expected):
    # Derived from the Nibali mail: its first header's unit replaced by another netperf prints
    text = read("lkml-nibali-tcp-stream-three-runs.txt").replace("10^6bits/s\n", unit + "\n", 1)
    assert values(parse(text, {}).records[0])["throughput_mbit"] == expected


def test_request_response_with_service_demand():
    # hand-written layout sample (SOURCES.md): no real TCP_RR -c -C output found yet
    (record,) = parse(read("netperf-tcp-rr-cc.txt"), {}).records
    assert record.keys["request_size"] == 1
    assert record.keys["remote_recv_socket_size"] == 87380
    assert [(m.metric, m.value, m.unit, m.better) for m in record.measurements] == [
        ("elapsed_s", 10.00, "s", "none"),
        ("transactions_per_s", 27975.88, "trans/s", "higher"),
        ("cpu_util_local_pct", 18.64, "%", "none"),
        ("cpu_util_remote_pct", 20.12, "%", "none"),
        ("service_demand_local_us_per_tr", 13.329, "us/Tr", "lower"),
        ("service_demand_remote_us_per_tr", 14.382, "us/Tr", "lower"),
    ]


def test_different_tests_in_one_file_are_separate_records():
    text = read("lkml-nibali-tcp-stream-three-runs.txt") + read(
        "lkml-nussbaum-tcp-udp-three-nics.txt"
    )
    tests = {r.keys["test"] for r in parse(text, {}).records}
    assert tests == {"TCP STREAM", "UDP UNIDIRECTIONAL SEND"}


NIBALI = "lkml-nibali-tcp-stream-three-runs.txt"


@pytest.mark.parametrize(
    ("change", "fragment", "line"),
    [
        (("60.01", "60,01"), "decimal comma", 55),
        (
            ("TCP STREAM TEST to 192.168.1.141\n", "TCP FOO TEST to 192.168.1.141\n"),
            "unsupported netperf test",
            49,
        ),
        (("secs.    10^6bits/s\n", "secs.\n"), "no throughput unit", 55),
        (("16384    60.01", "60.01"), "4 numbers", 55),
    ],
)
def test_rejects_broken_variants(change, fragment, line):
    # Each variant is derived from the Nibali mail by corrupting its first test.
    text = read(NIBALI).replace(*change, 1)
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_rejects_a_truncated_test_and_no_banner():
    # Derived: the Nibali mail cut after line 54, before the first result row.
    text = "\n".join(read(NIBALI).split("\n")[:54])
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert "banner without a result row" in err.value.message and err.value.line == 49
    with pytest.raises(ParseError, match="no netperf test banner"):
        parse("netperf: send_omni: connect_data_socket failed\n", {})
