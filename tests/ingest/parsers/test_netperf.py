from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "netperf"
parse = get_parser("netperf")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def test_udp_stream_sender_and_receiver_summed_over_instances():
    result = parse(read("lkp-fixture-netperf-recv.txt"), {})
    found = values(result)
    assert result.metadata["instances"] == 16
    assert result.metadata["test"] == "UDP STREAM"
    # first instance: 63577.2 sent, 61689.4 received; 16 instances in all
    assert found["throughput_mbit"] > found["throughput_recv_mbit"] > 16 * 60000
    assert found["service_demand_local_us_per_kb"] == pytest.approx(4.009625)


def test_sctp_stream_with_cpu_columns():
    result = parse(read("lkp-fixture-netperf.txt"), {})
    assert result.metadata["instances"] == 64
    assert set(values(result)) == {
        "throughput_mbit",
        "cpu_util_local_pct",
        "cpu_util_remote_pct",
        "service_demand_local_us_per_kb",
        "service_demand_remote_us_per_kb",
    }


def test_single_instance_units_are_normalized_to_mbit():
    result = parse(read("netperf-2.2-tcp-stream-mbytes.txt"), {})
    # -f M prints MBytes (2^20 bytes) per second
    assert values(result) == {"throughput_mbit": pytest.approx(11.21 * 1048576 * 8 / 1e6)}
    assert result.metadata["unit_printed"] == "MBytes"
    assert result.warnings == ("line 7: ignored annotation '<------ 2.4.17'",)


@pytest.mark.parametrize(
    ("unit", "factor"),
    [("10^6bits/sec", 1.0), ("10^6bits/s", 1.0), ("10^3bits/s", 1e-3), ("KBytes/sec", 0.008192)],
)
def test_unit_variants(unit, factor):
    text = read("netperf-2.2-tcp-stream-mbytes.txt").replace("MBytes/sec", unit)
    assert values(parse(text, {}))["throughput_mbit"] == pytest.approx(11.21 * factor)


def test_request_response_with_service_demand():
    result = parse(read("netperf-tcp-rr-cc.txt"), {})
    assert [(m.metric, m.value, m.unit, m.better) for m in result.measurements] == [
        ("transactions_per_s", 27975.88, "trans/s", "higher"),
        ("cpu_util_local_pct", 18.64, "%", "none"),
        ("cpu_util_remote_pct", 20.12, "%", "none"),
        ("service_demand_local_us_per_tr", 13.329, "us/Tr", "lower"),
        ("service_demand_remote_us_per_tr", 14.382, "us/Tr", "lower"),
    ]


TRUNCATED = """TCP STREAM TEST to 10.0.0.2
Recv   Send    Send
bytes  bytes   bytes    secs.    10^6bits/sec

"""


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (None, "decimal comma", 7),
        (TRUNCATED, "banner without a result row", 1),
        ("netperf: send_omni: connect_data_socket failed\n", "no netperf test banner", None),
        ("TCP STREAM TEST to h\n\n 87380 16384 16384 10.00 941.48\n", "no throughput unit", 3),
        ("SCTP FOO TEST to h\n", "unsupported netperf test", 1),
        ("TCP STREAM TEST to h\nx 10^6bits/s\n\n 87380 16384 10.00 941.48\n", "4 numbers", 4),
    ],
)
def test_rejects(text, fragment, line):
    text = text or read("netperf-decimal-comma.txt")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_two_different_tests_in_one_file_are_refused():
    text = read("netperf-tcp-rr-cc.txt") + "\n" + read("netperf-2.2-tcp-stream-mbytes.txt")
    with pytest.raises(ParseError, match="several netperf tests in one file"):
        parse(text, {})
